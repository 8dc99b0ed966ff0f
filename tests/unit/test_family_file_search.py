"""file-search hard, without Docker: the chore grammar (2-4 chores, >= 50 combinations per 100
seeds), the traps the instruction must not name, the reference's steps, and each task run in a
scratch root with GNU find: the reference passes the rendered tests (fed the collect hook's
snapshot of the scratch share) and every near miss (a chore left undone, links followed, sizes
rounded to KiB, hidden files skipped) fails one of them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from fixtures.family_grammar import (
    HARD,
    check_hard_grammar,
    check_hard_instructions,
    check_hard_reference,
    check_reference_and_near_misses,
    drafter,
    failing_tests,
    needs_tools,
    render_hard,
    rooted,
    unpack_below,
)

from factory.families import registry
from factory.families.terminal.file_search.family import (
    FS_CHORES,
    FS_SEARCH_TRAPS,
    FS_TRAPS,
    SNAPSHOT,
    snapshot_hook,
)

FAMILY = registry.get("file-search")
DRAFT = drafter(FAMILY)


def test_hard_composes_two_to_four_chores_that_vary():
    check_hard_grammar(
        DRAFT, FS_CHORES, FS_TRAPS, checked=100, always=[t.name for t in FS_SEARCH_TRAPS]
    )


def test_hard_instruction_names_no_trap():
    for d, text in check_hard_instructions(FAMILY, DRAFT, range(1, 61)):
        assert d.context["listing"] in text and d.context["dest"] in text
        assert ("symbolic link that points to nothing" in text) == ("dangling-links" in d.faults)
        assert "hidden" not in text.lower() and "follow" not in text.lower()


def test_hard_reference_is_task_specific_and_long_enough():
    check_hard_reference(
        FAMILY,
        DRAFT,
        "t/file-search",
        2,
        [
            ("editor-junk", "-name '*.swp'"),
            ("dangling-links", "-xtype l"),
            ("empty-dirs", "-empty -delete"),
            ("world-writable", "chmod o-w"),
            ("orphans", "-nouser"),
            ("group-dirs", "chmod 2775"),
            ("total-size", "stat -c %s"),
            ("largest", "sort -n"),
        ],
    )


# --- running the tasks in a scratch root ----------------------------------------------------


def _paths(d) -> list[str]:
    ctx = d.context
    paths = [ctx["root"], ctx["dest"], os.path.dirname(ctx["listing"]), ctx["outside"]]
    return paths + [os.path.dirname(ctx[k]) for k in ("size_out", "largest_out") if k in ctx]


def _rooted(d, text: str, root: str) -> str:
    return rooted(text, _paths(d), root)


def _outcome(d, script: str, root: str) -> list[str]:
    """Unpack the task's tree below ``root``, run ``script`` there (accounts by number: this
    machine has none of the task's), snapshot it as the collect hook does, run the rendered
    tests on that: the names of the failing tests."""
    ctx = d.context
    unpack_below(d.files["environment/seed.tar.gz"], root, numeric_owner=True)
    Path(root + "/root").mkdir(exist_ok=True)
    uids = dict(ctx["users"])
    script = _rooted(d, script, root)
    script = script.replace(f"-user {ctx['owner']} ", f"-user {uids[ctx['owner']]} ")
    script = script.replace(f"chown {ctx['admin']} ", f"chown {ctx['admin_uid']} ")
    subprocess.run(["bash", "-c", script], capture_output=True, check=False)
    snap = root + SNAPSHOT
    rels = sorted({*ctx["meta"], *ctx["junk"], *ctx["links"], *ctx["dangling"]})
    hook = snapshot_hook(root + ctx["root"], root + ctx["dest"], rels, snap, everything=True)
    subprocess.run(["sh", "-c", hook], check=True)
    tests = render_hard(FAMILY, d, 1, "t/file-search").files["tests/test_outputs.py"].decode()
    return failing_tests(_rooted(d, tests, root).replace(repr(SNAPSHOT), repr(snap)))


@needs_tools("find", "xargs")
@pytest.mark.skipif(os.geteuid() != 0, reason="the tree's owners are set only as root")
@pytest.mark.parametrize("seed", range(1, 9))
def test_reference_passes_and_each_near_miss_fails(seed, tmp_path):
    d = DRAFT(HARD, seed)
    check_reference_and_near_misses(
        FAMILY, d, _outcome, ("follow-symlinks", "rounded-size", "skip-hidden"), tmp_path
    )
