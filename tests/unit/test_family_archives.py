"""archives hard, without Docker: the fault grammar (2-4 faults, exclusive groups, >= 50
combinations per 100 seeds), the traps the instruction must not name, the reference's steps, and
each task run in a scratch root with GNU tar: the reference passes the rendered tests (fed the
collect hook's snapshots of the scratch root) and every near miss, one per fault left unfixed,
fails one of them."""

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
from factory.families.terminal.archives.export import Export, folders_of
from factory.families.terminal.archives.hard import (
    AR_EXCLUSIVE,
    AR_FAULTS,
    AR_TRAPS,
    AR_UNSAFE_TRAP,
)
from factory.families.terminal.state_snapshot import present_lines, stat_lines, tree_lines

FAMILY = registry.get("archives")
DRAFT = drafter(FAMILY)


def test_export_members_leave_room_and_every_rule_selects_some():
    """The export both kinds draw: no member is a folder of another, each rule selects at
    least two members, and its decoys (a backup suffix, a look-alike or nested folder, the
    extension upper-case) are drawn but not selected."""
    import random

    for seed in range(30):
        export = Export(random.Random(seed), "tidewater", 1_700_000_000, [0o644, 0o600])
        export.draw(["data", "docs", "logs", "config", "reports", "assets"], 2, 34)
        paths = sorted(export.members)
        assert not any(q.startswith(p + "/") for p in paths for q in paths)
        for d, ext in export.rules:
            assert sum(export.selected(p) for p in paths if p.startswith(d + "/")) >= 2
            decoys = [
                p
                for p in paths
                if p.startswith(f"{d}.")
                or f"/{d}/" in p
                or p.endswith(f".{ext.upper()}")
                or (p.startswith(d + "/") and p.rsplit(".", 1)[-1] in ("bak", "orig", "old"))
            ]
            assert decoys and not any(export.selected(p) for p in decoys)
    assert folders_of(["a/b/c.txt", "d.txt", "a/e/f"]) == ["a", "a/b", "a/e"]


def test_hard_composes_two_to_four_faults_that_vary():
    drafts = check_hard_grammar(
        DRAFT, AR_FAULTS, AR_TRAPS, checked=100, always=[AR_UNSAFE_TRAP.name]
    )
    for d in drafts:
        assert all(len(group & set(d.faults)) <= 1 for group in AR_EXCLUSIVE)


def test_hard_instruction_names_no_trap():
    for d, text in check_hard_instructions(FAMILY, DRAFT, range(1, 61)):
        assert d.context["workdir"] in text and d.context["target"] in text
        for lib in d.context["libs"]:
            assert lib["dest"] in text
        assert ("must belong to the user" in text) == ("owner" in d.faults)


def test_hard_reference_is_task_specific_and_long_enough():
    text = check_hard_reference(
        FAMILY,
        DRAFT,
        "t/archives",
        3,
        [
            ("split", "cat "),
            ("bad-copy", "sha256sum -c"),
            ("wrapper", "--strip-components=1"),
            ("delta", "xargs -a /tmp/removed"),
            ("stale-target", "rm -rf "),
            ("owner", "chown -R "),
        ],
    )
    assert "VARIANT" not in text


# --- running the tasks in a scratch root ----------------------------------------------------


def _install(d, root: str) -> None:
    """The task's delivery folder and seeded paths below ``root`` (links re-pointed there)."""
    ctx = d.context
    for rel, data in d.files.items():
        if rel.startswith("environment/delivery/"):
            path = Path(root + ctx["workdir"]) / rel.removeprefix("environment/delivery/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    if "environment/seed.tar.gz" in d.files:
        unpack_below(d.files["environment/seed.tar.gz"], root)
    Path(root + "/tmp").mkdir(exist_ok=True)


def _rooted(d, text: str, root: str) -> str:
    """``text`` with the task's paths (and /tmp/) moved below ``root``."""
    ctx = d.context
    paths = {ctx["workdir"], ctx["target"], "/tmp/", *ctx["landings"]} | (
        {ctx["old"]} if ctx["old"] else set()
    )
    return rooted(text, paths, root)


def _outcome(d, script: str, root: str) -> list[str]:
    """Run ``script`` below ``root``, snapshot it as the collect hook does, run the rendered
    tests on that: the names of the failing tests."""
    ctx = d.context
    _install(d, root)
    script = _rooted(d, script, root)
    if ctx["svc"]:
        script = script.replace(
            f"chown -R {ctx['svc']}:", f"chown -R {ctx['svc_id']}:{ctx['svc_id']}"
        )
    subprocess.run(["bash", "-c", script], capture_output=True, check=False)
    state = Path(root + "/state")
    state.mkdir()
    target, hooks = (
        root + ctx["target"],
        {
            "target.tree": tree_lines(root + ctx["target"]),
            "landed.list": present_lines([root + p for p in ctx["landings"]]),
            "target.stat": stat_lines([root + ctx["target"]]),
        },
    )
    if ctx["svc"]:
        hooks["owner.list"] = f"find '{target}' -exec stat -c '%u %g %n' {{}} +"
    if ctx["old"]:
        hooks["old.tree"] = tree_lines(root + ctx["old"])
    for name, command in hooks.items():
        out = subprocess.run(["sh", "-c", command], capture_output=True, check=False).stdout
        (state / name).write_bytes(out)
    tests = render_hard(FAMILY, d, 1, "t/archives").files["tests/test_outputs.py"].decode()
    return failing_tests(_rooted(d, tests, root).replace(ctx["state_dir"], str(state)))


@needs_tools("tar", "xz", "bzip2")
@pytest.mark.skipif(os.geteuid() != 0, reason="tar keeps owners and modes only as root")
@pytest.mark.parametrize("seed", range(1, 9))
def test_reference_passes_and_each_near_miss_fails(seed, tmp_path):
    d = DRAFT(HARD, seed)
    check_reference_and_near_misses(
        FAMILY, d, _outcome, ("ignore-filter", "loose-match", "wrong-layout"), tmp_path
    )
