"""sqlite-migration's hard fault grammar, without Docker: hard drafts compose 2-4 faults with a
trap and a near miss each, the instruction is the same whichever faults are planted (it names
none), the reference solution is several sqlite3 commands, and, run here with the sqlite3 shell
on the seeded database, the reference passes the task's own tests while each near miss (one
fault left unfixed) fails at least one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.sqlite_migration.family import SM_FAULTS
from factory.vocabulary import Difficulty

FAMILY = registry.get("sqlite-migration")
HARD = Difficulty.HARD

draft = grammar.drafter(FAMILY)


def draft_with(seed: int, faults: list[str]):
    import random

    return FAMILY.draft(random.Random(seed), HARD, {"faults": faults})


def test_hard_composes_faults_with_a_trap_and_a_near_miss_each():
    drafts = [draft(HARD, seed) for seed in range(1, 101)]
    assert len({tuple(d.faults) for d in drafts}) >= 50
    for d in drafts[:40]:
        assert 2 <= len(d.faults) <= 4 and set(d.faults) <= set(SM_FAULTS)
        assert len(d.traps) == len(d.faults)
        grammar.assert_unfixed_mutations(d)
    assert set().union(*(d.faults for d in drafts)) == set(SM_FAULTS)
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        d = draft(level, 1)
        assert not d.faults and not d.traps and not d.mutations


def test_hard_instruction_is_the_same_whichever_faults_are_planted():
    """The instruction states the result only: for one seed, every fault set gives the same text
    (but for the report script's own goal), and it names none of its traps."""
    base = None
    for faults in (SM_FAULTS[:2], SM_FAULTS[2:4], SM_FAULTS[4:6], ["orphans", "audit-trigger"]):
        d = draft_with(7, faults)
        text = grammar.render(FAMILY, d, "instruction.md.j2")
        grammar.assert_names_no_trap(text, d.traps)
        base = base or text
        assert text == base
    with_report = grammar.render(
        FAMILY, draft_with(7, ["report-script", "orphans"]), "instruction.md.j2"
    )
    assert with_report != base and "-report" in with_report
    grammar.check_hard_instructions(
        FAMILY, draft, range(1, 31), words=["dd/mm", "upper", "$", "orphans exist"]
    )


def test_hard_solution_is_task_specific_and_long_enough():
    def script(seed: int) -> str:
        return grammar.render(FAMILY, draft(HARD, seed), "solution/solve.sh.j2")

    assert grammar.median_steps(script, range(1, 41)) >= 8
    d = draft_with(3, ["dirty-emails", "mixed-dates"])
    text = grammar.render(FAMILY, d, "solution/solve.sh.j2")
    assert "lower(trim(" in text and "__/__/____" in text
    assert "DROP VIEW" not in text and "TRIGGER" not in text and "_orphans" not in text
    assert "python3" not in text  # the sqlite3 shell, no generic solver


needs_sqlite = pytest.mark.skipif(not shutil.which("sqlite3"), reason="sqlite3 shell needed")


def run_case(d, script: str, tmp_path: Path) -> list[str]:
    """Seed the database below ``tmp_path``, run ``script`` on it, then the task's tests; the
    names of the tests that failed (every path of the task moved below ``tmp_path``)."""
    if tmp_path.exists():
        shutil.rmtree(tmp_path)
    tmp_path.mkdir(parents=True)
    db, report = d.context["db"], d.context["report"]
    local_db, local_report = f"{tmp_path}{db}", f"{tmp_path}{report}"
    os.makedirs(os.path.dirname(local_db))
    seed_sql = d.files["environment/seed.sql"]
    subprocess.run(["sqlite3", local_db], input=seed_sql, text=True, check=True)
    if "environment/report.py" in d.files:
        os.makedirs(os.path.dirname(local_report))
        text = d.files["environment/report.py"].replace(repr(db), repr(local_db))
        Path(local_report).write_text(text)
        os.chmod(local_report, 0o755)
    moved = script.replace(report, local_report).replace(db, local_db)
    subprocess.run(["bash", "-c", moved], capture_output=True, text=True, timeout=120)
    tests = grammar.render(FAMILY, d, "tests/test_outputs.py.j2")
    tests = tests.replace(repr(db), repr(local_db)).replace(repr(report), repr(local_report))
    return grammar.pytest_failures(tmp_path, tests)


@needs_sqlite
@pytest.mark.parametrize(
    "faults",
    [
        ["dirty-emails", "dirty-groups", "money-text", "mixed-dates"],
        ["dependent-view", "audit-trigger", "report-script", "orphans"],
    ],
)
def test_reference_passes_and_each_unfixed_fault_fails(faults, tmp_path):
    d = draft_with(11, faults)
    reference = grammar.render(FAMILY, d, "solution/solve.sh.j2")
    assert run_case(d, reference, tmp_path / "ref") == []
    for fault in faults:
        failed = run_case(d, d.mutations[f"unfixed-{fault}"], tmp_path / fault)
        assert failed, fault


@needs_sqlite
def test_cleaning_under_the_logging_trigger_is_caught(tmp_path):
    """The trap of the logging trigger: group names cleaned before it is dropped log a change
    per cleaned row, which the log's check catches."""
    d = draft_with(5, ["audit-trigger", "dirty-groups"])
    group = d.context["ent"]["group"]
    lines = grammar.render(FAMILY, d, "solution/solve.sh.j2").splitlines(keepends=True)
    drop = next(i for i, line in enumerate(lines) if line.startswith('sqlite3 "$DB" "DROP TRIGGER'))
    clean = next(i for i, line in enumerate(lines) if f"SET {group} = lower(trim(" in line)
    assert drop < clean
    late = lines[:drop] + lines[drop + 1 : clean + 1] + [lines[drop]] + lines[clean + 1 :]
    assert "test_log_trigger" in run_case(d, "".join(late), tmp_path / "late")
