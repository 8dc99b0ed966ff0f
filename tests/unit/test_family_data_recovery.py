"""data-recovery's hard grammar without Docker: a hard draft composes two to four sub-problems
(DR_FAULTS) of the config-patches recovery; the task runs here in a scratch root (the seed
unpacked by GNU tar, the reference or a near miss run with every task path moved below the
root) and what it leaves is checked against the rendered tests' expectations: the reference
rebuilds the file (and its mode, owner and second file), each unfixed-<fault> near miss does not."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.data_recovery.family import DR_FAULTS, DR_TRAPS
from factory.vocabulary import Difficulty

FAMILY = registry.get("data-recovery")
HARD = Difficulty.HARD
draft = grammar.drafter(FAMILY)
needs_tools = grammar.needs_tools("bash", "tar", "patch", "zcat", "sha256sum")


def test_hard_composes_two_to_four_sub_problems_with_traps_and_near_misses():
    drafts = grammar.check_hard_grammar(draft, DR_FAULTS, DR_TRAPS)
    assert all(d.context["kind"] == "patches" for d in drafts)
    words = ("missing", "gap", "newest full", "bit rot")
    grammar.check_hard_instructions(FAMILY, draft, range(1, 60), words, difficulty="hard")


def test_hard_reference_has_eight_steps_at_the_median():
    assert grammar.median_solution_steps(FAMILY, draft, range(1, 42)) >= 8


def test_hard_plants_only_the_drawn_sub_problems():
    for seed in range(1, 40):
        d = draft(HARD, seed)
        ctx = d.context
        assert (ctx["corrupt"] is not None) == ("corrupt-full" in d.faults)
        grammar.assert_planted_when_drawn(
            d,
            {
                "rotten_name": "corrupt-diff",
                "lost_name": "missing-diff",
                "bundle": "bundled-diffs",
                "account": "owner",
                "second": "second-file",
            },
        )
        assert bool(ctx["offsite"]) == bool({"corrupt-diff", "missing-diff"} & set(d.faults))
        assert bool(ctx["account"]) == (ctx["uid"] != 0)
        assert (ctx["mode"] != "0o644") == ("mode" in d.faults)


# --- the task in a scratch root -------------------------------------------------------------

_PATHS = re.compile(r"(?<=[\s'\"])(/tmp/rebuild|/var/backups/|/etc/|/mnt/offsite/)")


def run_task(d, script: str, root: Path) -> dict[str, object]:
    """Unpack the seed below ``root``, run ``script`` there (chown left out: no accounts here)
    and report what the tests check."""
    root.mkdir()
    seed = root / "seed.tar.gz"
    seed.write_bytes(d.files["environment/seed.tar.gz"])
    subprocess.run(["tar", "-xzpf", str(seed), "-C", str(root)], check=True)
    script = _PATHS.sub(lambda m: f"{root}{m.group(1)}", script).replace("-C / ", f"-C {root}/ ")
    script = re.sub(r"^chown ", ": chown ", script, flags=re.M)
    subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    ctx = d.context
    live = Path(f"{root}{ctx['live']}")
    got: dict[str, object] = {
        "content": hashlib.sha256(live.read_bytes()).hexdigest() == ctx["expected_sha"],
        "mode": oct(live.stat().st_mode & 0o7777) == ctx["mode"],
        "owner": bool(re.search(r"^chown ", script.replace(": chown ", "chown "), re.M))
        == bool(ctx["account"]),
    }
    if ctx["second"]:
        second = Path(f"{root}{ctx['second']}")
        got["second"] = (
            second.is_file()
            and hashlib.sha256(second.read_bytes()).hexdigest() == ctx["second_sha"]
            and oct(second.stat().st_mode & 0o7777) == ctx["second_mode"]
        )
    return got


@needs_tools
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7, 8])
def test_hard_reference_rebuilds_and_each_near_miss_does_not(seed, tmp_path):
    d = draft(HARD, seed)
    spec = grammar.render_hard(FAMILY, d, seed, "terminal/x/data-recovery")
    ref = run_task(d, spec.files["solution/solve.sh"].decode(), tmp_path / "ref")
    assert all(ref.values()), ref
    assert set(spec.mutations) == {f"unfixed-{f}" for f in d.faults} | {
        "backup-only",
        "name-order",
        "skip-newest",
        "group-writable",
    }
    for name, script in spec.mutations.items():
        got = run_task(d, script, tmp_path / name)
        assert not all(got.values()), (name, got)
