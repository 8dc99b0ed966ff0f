"""performance-budget without Docker: the hard grammar (3-4 slow stages of a kind's six or
five, >= 50 combinations per 100 seeds), a symptom-only instruction, a task-specific reference
of one edit per slow stage that ends at the fast program, one unfixed-<fault> near miss per
slow stage, and every stage's fast code printing what its slow code prints."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from fixtures.family_grammar import (
    HARD,
    assert_unfixed_mutations,
    check_hard_instructions,
    drafter,
    median_steps,
    render,
)

from factory.families import registry
from factory.families.terminal.performance_budget import family as pb
from factory.families.terminal.performance_budget.shipped import datagen
from factory.vocabulary import Difficulty

FAMILY = registry.get("performance-budget")
draft = drafter(FAMILY)
SMALL = {
    "python": {"n_events": 60, "n_people": 14, "n_groups": 4},
    "bash": {"n_lines": 90, "n_hosts": 12},
    "sqlite": {"n_orders": 70, "n_customers": 40, "n_refunds": 30},
}


def test_hard_composes_three_or_four_slow_stages_in_many_combinations():
    drafts = [draft(HARD, seed) for seed in range(1, 101)]
    assert len({tuple(d.faults) for d in drafts}) >= 50
    for d in drafts[:30]:
        kind = d.context["kind"]
        assert 3 <= len(d.faults) <= 4
        assert d.faults == sorted(f"{kind}-{s}" for s in d.context["slow"])
        assert set(d.context["slow"]) <= set(pb.HARD_STAGES[kind])
        assert_unfixed_mutations(d)
        assert [t.name for t in d.traps] == [t.name for t in pb.PERF_TRAPS]
    assert {d.context["kind"] for d in drafts} == set(pb.HARD_STAGES)
    assert not draft(Difficulty.EASY, 1).faults and not draft(Difficulty.MEDIUM, 1).faults


def test_hard_instruction_names_no_trap_and_easy_names_them():
    for _d, text in check_hard_instructions(FAMILY, draft, range(1, 13)):
        assert "bottleneck" not in text and "duplicate" not in text
    easy = render(FAMILY, draft(Difficulty.EASY, 1), "instruction.md.j2")
    assert "duplicates and missing entries" in easy


def _apply(text: str, pairs) -> str:
    for old, new in pairs:
        assert text.count(old) == 1
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("seed", range(1, 13))
def test_each_edit_fixes_one_stage_and_all_end_at_the_reference(seed):
    d = draft(HARD, seed)
    ctx = d.context
    edits = ctx["edits"]
    assert sorted(e["stage"] for e in edits) == sorted(ctx["slow"])
    text = ctx["original"]
    for edit in edits:
        text = _apply(text, edit["pairs"])
    assert text == ctx["reference"]
    # the near miss of each stage is the reference with only that stage slow
    for edit in edits:
        unfixed = d.mutations[f"unfixed-{ctx['kind']}-{edit['stage']}"]
        for old, _new in edit["pairs"][:1]:
            assert old in unfixed and old in ctx["original"] and old not in ctx["reference"]


def test_hard_reference_is_task_specific_with_at_least_eight_steps():
    def script(seed: int) -> str:
        return render(FAMILY, draft(HARD, seed), "solution/solve.sh.j2")

    assert median_steps(script, range(1, 22)) >= 8
    d = draft(HARD, 1)
    text = script(1)
    assert text.startswith("#!/bin/bash\n")
    assert text.count("<<'__FACTORY_EDIT__'") == len(d.context["slow"])
    assert d.context["reference"] not in text  # edits, not the whole program pasted
    # easy and medium keep the one-step rewrite
    assert render(FAMILY, draft(Difficulty.EASY, 1), "solution/solve.sh.j2").count("cat >") == 1


def _dataset(kind: str, seed: int, folder: Path) -> list[str]:
    r = random.Random(seed)
    folder.mkdir(parents=True)
    if kind == "python":
        theme = pb.PERF_THEMES[seed % len(pb.PERF_THEMES)]
        texts = datagen.perf_py_data(r, theme, **SMALL[kind], messy=True)
        for name, text in zip(
            (f"{theme['events']}.csv", f"{theme['people']}.csv"), texts, strict=True
        ):
            (folder / name).write_text(text)
        return [str(folder)], theme
    if kind == "bash":
        log, hosts = datagen.perf_bash_data(r, **SMALL[kind])
        (folder / "access.log").write_text(log)
        (folder / "hosts.txt").write_text(hosts)
        return [str(folder / "access.log"), str(folder / "hosts.txt")], None
    db = sqlite3.connect(folder / "shop.db")
    db.executescript(datagen.perf_sql_data(r, **SMALL[kind]))
    db.close()
    return [str(folder / "shop.db")], None


def _program(kind: str, theme, slow: set[str], drift: bool = False) -> str:
    if kind == "python":
        return pb.perf_py_script(theme, slow, drift=drift, hard=True)
    if kind == "bash":
        return pb.perf_bash_script("tool", 4, slow, drift=drift, hard=True)
    return pb.perf_sql_script(4, slow, drift=drift, hard=True)


def _run(kind: str, program: str, args: list[str], where: Path) -> bytes:
    script = where / ("p.sh" if kind == "bash" else "p.py")
    script.write_text(program)
    interp = "bash" if kind == "bash" else "python3"
    proc = subprocess.run([interp, str(script), *args], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    return proc.stdout


@pytest.mark.parametrize("kind", sorted(pb.HARD_STAGES))
def test_every_hard_stage_prints_the_same_slow_or_fast(kind, tmp_path):
    """Each stage slow alone prints what the fast program prints, and the drift differs (on
    small datasets of two seeds)."""
    stages = pb.HARD_STAGES[kind]
    for seed in (3, 4):
        args, theme = _dataset(kind, seed, tmp_path / f"data{seed}")
        want = _run(kind, _program(kind, theme, set()), args, tmp_path)
        assert want.count(b"\n") >= 4
        assert _run(kind, _program(kind, theme, set(stages)), args, tmp_path) == want
        for stage in stages:
            assert _run(kind, _program(kind, theme, {stage}), args, tmp_path) == want, stage
        assert _run(kind, _program(kind, theme, set(), drift=True), args, tmp_path) != want


def test_a_slow_hard_stage_alone_costs_far_more_than_the_fast_program(tmp_path):
    """The python kind's idle stage (the cheapest new one) on a fifth of the full size:
    already many times slower than the whole fast program."""
    r = random.Random(7)
    theme = pb.PERF_THEMES[0]
    folder = tmp_path / "data"
    folder.mkdir()
    texts = datagen.perf_py_data(r, theme, n_events=8000, n_people=5000, n_groups=8, messy=True)
    for name, text in zip((f"{theme['events']}.csv", f"{theme['people']}.csv"), texts, strict=True):
        (folder / name).write_text(text)

    def timed(slow: set[str]) -> float:
        started = time.monotonic()
        _run("python", _program("python", theme, slow), [str(folder)], tmp_path)
        return time.monotonic() - started

    fast = timed(set())
    assert timed({"idle"}) > 5 * fast
