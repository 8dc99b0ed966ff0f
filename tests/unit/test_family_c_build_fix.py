"""c-build-fix's breakage grammar, without Docker: what a hard draft composes, that its
instruction names none of its traps, and (where gcc and make are installed) that each breakage
alone breaks the build and the reference repair of it alone mends it."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar
from fixtures.files import write_files

from factory.families import registry
from factory.families.terminal.c_build_fix.project import (
    C_BREAKAGES_HARD,
    C_BREAKAGES_PLAIN,
    C_BREAKAGES_SUBTLE,
    CProject,
)
from factory.quality.structure import solution_steps
from factory.vocabulary import Difficulty

FAMILY = registry.get("c-build-fix")
ALL = C_BREAKAGES_PLAIN + C_BREAKAGES_SUBTLE + C_BREAKAGES_HARD


draft = grammar.drafter(FAMILY)


def solution(d, **extra) -> str:
    return grammar.render(FAMILY, d, "solution/solve.sh.j2", **extra)


def test_hard_composes_breakages_from_the_grammar():
    combos = set()
    for seed in range(1, 101):
        d = draft(Difficulty.HARD, seed)
        kinds = d.context["breakages"]
        combos.add(tuple(sorted(d.faults)))
        assert sorted(d.faults) == sorted(kinds)
        assert 3 <= len(kinds) <= 4 and len(set(kinds)) == len(kinds)
        assert len([k for k in kinds if k in C_BREAKAGES_SUBTLE]) == 1
        assert not {"missing-libm", "wrong-library"} <= set(kinds)
        assert len(d.traps) == len(kinds)
    assert len(combos) >= 50
    assert {k for seed in range(1, 101) for k in draft(Difficulty.HARD, seed).faults} == set(ALL)


def test_easy_and_medium_declare_no_grammar():
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        d = draft(level, 1)
        assert d.faults == [] and d.traps == [] and d.mutations == {}


def test_the_hard_instruction_names_no_trap():
    for seed in range(1, 41):
        d = draft(Difficulty.HARD, seed)
        spec = grammar.render_hard(FAMILY, d, seed, "terminal/x/c-build-fix")
        grammar.assert_names_no_trap(spec.instruction, spec.traps)


def test_the_hard_solution_is_the_repairs_of_this_task():
    counts = []
    for seed in range(1, 22):
        d = draft(Difficulty.HARD, seed)
        text = solution(d)
        counts.append(len(solution_steps(text)))
        for name, commands in d.context["fixes"]:
            assert all(c in text for c in commands), name
        # no repair of a breakage this task does not have
        planted = {name for name, _ in d.context["fixes"]}
        assert not [line for line in text.splitlines() if line[2:] in set(ALL) - planted]
    counts.sort()
    assert counts[len(counts) // 2] >= 8


def test_each_near_miss_leaves_exactly_one_repair_out():
    d = draft(Difficulty.HARD, 3)
    kinds = d.context["breakages"]
    assert sorted(d.mutations) == sorted(f"unfixed-{k}" for k in kinds[:-1])
    fixes = dict(d.context["fixes"])
    for kind in kinds[:-1]:
        text = d.mutations[f"unfixed-{kind}"]
        assert not any(c in text for c in fixes[kind]), kind
        for other in kinds:
            if other != kind:
                assert all(c in text for c in fixes[other]), (kind, other)


def _project(breakage: str, seed: int) -> CProject:
    proj = CProject(random.Random(seed), 2)
    proj.breakages = [breakage]
    return proj


def _sh(root: Path, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("make")), reason="no gcc/make")
@pytest.mark.parametrize("breakage", ALL)
def test_each_breakage_alone_breaks_the_build_and_its_repair_mends_it(tmp_path, breakage):
    proj = _project(breakage, 7)
    root = tmp_path / "p"
    write_files(root, proj.files(frozenset([breakage])))
    values = [3.5, -2.0, 10.25, 4.0, 7.0]
    stdin = " ".join(map(str, values)) + "\n"
    built = _sh(root, "make")
    if breakage == "clean-target":
        assert built.returncode == 0, built.stderr
        _sh(root, "make clean")
        assert list(root.rglob("*.o")), "the broken clean rule should leave the objects"
    elif built.returncode == 0:
        # it links, but the program is wrong (a silently wrong return type)
        out = _sh(root, f"printf '{stdin}' | ./{proj.prog}").stdout
        assert out != proj.expected(values), "the breakage alone changed nothing"
    _sh(root, "make clean")
    for command in proj.fix(breakage):
        done = _sh(root, command)
        assert done.returncode == 0, done.stderr
    rebuilt = _sh(root, "make clean && make")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert _sh(root, f"printf '{stdin}' | ./{proj.prog}").stdout == proj.expected(values)
    assert _sh(root, "make clean").returncode == 0
    assert not list(root.rglob("*.o")) and not (root / proj.prog).exists()
