"""disk-cleanup's drafts without Docker: every hard draw has a budget to choose from; hard
composes two to four sub-problems of its grammar (DC_FAULTS), and its task runs here in a scratch
root (the reference passes the rendered tests, each near miss fails one)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.disk_cleanup.family import DC_FAULTS, DC_TRAPS
from factory.families.terminal.state_snapshot import TREE_SCRIPT
from factory.vocabulary import Difficulty

FAMILY = registry.get("disk-cleanup")


def test_hard_draws_never_fail_and_a_budget_always_has_exports_to_choose_from():
    # seeds 251 and 687 once drew fewer than four exports older than the cut-off: the draft
    # asserted (no three exports left for the budget to choose from) instead of adding older ones
    for seed in range(1, 301):
        draft = FAMILY.draft(random.Random(seed), Difficulty.HARD, dict(FAMILY.default_params))
        exports = [p for p in draft.context["expected"] if p.startswith("exports/")]
        # the oldest export is kept, so at least two others survive the budget's choice of k >= 2
        if "budget" in draft.faults:
            assert len(exports) >= 2 and draft.context["budget"] > 0
            assert len(draft.context["removed_exports"]) >= 2
        else:
            assert not exports


# --- hard: a grammar of sub-problems (DC_FAULTS) ----------------------------------------------
#
# The hard task runs here in a scratch root: the seed tarball unpacked by GNU tar (as the
# Dockerfile does), the reference (or a near miss) run with every task path prefixed by the root,
# the collect hook's tree script writing the snapshot, and the rendered tests run with their
# paths prefixed the same way.

draft = grammar.drafter(FAMILY)
HARD = Difficulty.HARD
needs_tools = grammar.needs_tools("bash", "tar", "find", "sed", "truncate", "gzip")


def test_hard_composes_two_to_four_sub_problems_with_traps_and_near_misses():
    grammar.check_hard_grammar(draft, DC_FAULTS, DC_TRAPS)
    grammar.check_hard_instructions(FAMILY, draft, range(1, 60), difficulty="hard")


def test_hard_reference_has_eight_steps_at_the_median():
    assert grammar.median_solution_steps(FAMILY, draft, range(1, 42)) >= 8


def test_hard_without_a_sub_problem_plants_none_of_it():
    for seed in range(1, 30):
        d = draft(HARD, seed)
        grammar.assert_planted_when_drawn(
            d,
            {
                "trash": "trash",
                "noisy": "debug-logging",
                "archive": "archive-reports",
                "rotation": "logrotate",
                "removed_exports": "budget",
                "dedupe": "dedupe",
            },
        )
        # the releases that stay are the keep_n highest and the one `current` points to: only a
        # rolled-back task has one more (an older release)
        kept = {p.split("/")[1] for p in d.context["expected"] if p.startswith("releases/")}
        assert (len(kept) > d.context["keep_n"]) == ("rolled-back" in d.faults), seed


def materialise(d, root: Path) -> None:
    seed = root / "seed.tar.gz"
    seed.write_bytes(d.files["environment/seed.tar.gz"])
    subprocess.run(["tar", "-xzpf", str(seed), "-C", str(root)], check=True)
    seed.unlink()


def prefixed(d, root: Path, text: str) -> str:
    ctx = d.context
    paths = [ctx["root"], ctx["keep_list"]]
    if ctx["archive"]:
        paths.append(ctx["archive"].rsplit("/", 1)[0])
    if ctx["rotation"]:
        paths.append(ctx["rotation"]["conf"])
    for path in sorted(paths, key=len, reverse=True):
        text = text.replace(path, f"{root}{path}")
    return text


def outcome(d, script: str, root: Path) -> dict[str, str]:
    """Run ``script`` on a fresh copy of the task below ``root``, snapshot the tree as the
    collect hook does and run the rendered tests (here, in this process): test name ->
    PASSED or FAILED."""
    root.mkdir()
    materialise(d, root)
    ctx = d.context
    run = subprocess.run(["bash", "-c", prefixed(d, root, script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    snapshot = root / "tree.json"
    texts = [f"{root}{ctx['rotation']['conf']}"] if ctx["rotation"] else []
    args = [json.dumps([f"{root}{ctx['root']}"]), "[]", json.dumps(texts)]
    subprocess.run(
        [sys.executable, "-I", "-S", "-", str(snapshot), *args],
        input=TREE_SCRIPT,
        text=True,
        check=True,
    )
    tests = grammar.render(FAMILY, d, "tests/test_outputs.py.j2", difficulty="hard")
    tests = tests.replace(repr(ctx["snapshot"]), repr(str(snapshot)))
    tests = re.sub(r"^(ROOT|ARCHIVE|ROTATION) = '", rf"\1 = '{root}", tests, flags=re.M)
    namespace: dict = {"__name__": "test_outputs"}
    exec(compile(tests, str(root / "test_outputs.py"), "exec"), namespace)
    results = {}
    for name, test in namespace.items():
        if name.startswith("test_") and callable(test):
            try:
                test()
                results[name] = "PASSED"
            except Exception:  # an assertion, or a KeyError on a missing entry
                results[name] = "FAILED"
    return results


@needs_tools
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_hard_reference_passes_and_each_near_miss_fails(seed, tmp_path):
    d = draft(HARD, seed)
    spec = grammar.render_hard(FAMILY, d, seed, "terminal/x/disk-cleanup")
    ref = outcome(d, spec.files["solution/solve.sh"].decode(), tmp_path / "ref")
    assert set(ref.values()) == {"PASSED"}, ref
    # each sub-problem and each rule left undone (or done the greedy way) fails some test
    assert set(spec.mutations) == {f"unfixed-{f}" for f in d.faults} | {
        "greedy-core",
        "lexical-releases",
        "ignore-keep-list",
    }
    for name, script in spec.mutations.items():
        got = outcome(d, script, tmp_path / name)
        assert "FAILED" in got.values(), (name, got)


def test_hard_sub_problem_tests_exist_only_for_their_faults():
    for seed in range(1, 20):
        d = draft(HARD, seed)
        tests = grammar.render(FAMILY, d, "tests/test_outputs.py.j2", difficulty="hard")
        for fault, test in [
            ("trash", "test_trash_emptied"),
            ("debug-logging", "test_debug_logging_off"),
            ("archive-reports", "test_reports_archived"),
            ("logrotate", "test_log_rotation_policy"),
        ]:
            assert (f"def {test}(" in tests) == (fault in d.faults), (seed, fault)
