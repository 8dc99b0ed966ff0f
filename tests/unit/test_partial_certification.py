"""Tasks without a reference solution: the no_solution verdict (a partial certification) says
what the nop runs showed and why the tests failed, and is never taken for valid."""

from __future__ import annotations

import pytest

from factory.validate.outcome import (
    Outcome,
    PhaseKind,
    PhaseResult,
    TaskValidation,
    ValidationReport,
    classify,
    failure_summary,
)
from factory.validate.validator import Validator, write_report

PYTEST_OUTPUT = """
============================= test session starts ==============================
collected 2 items

../tests/test_outputs.py F.                                              [100%]
=========================== short test summary info ============================
FAILED ../tests/test_outputs.py::test_report_exists - AssertionError: /app/report.csv missing
========================= 1 failed, 1 passed in 0.12s ==========================
"""


def nops(*rewards, output: str = PYTEST_OUTPUT, exit_code: int = 1) -> list[PhaseResult]:
    return [
        PhaseResult(
            kind=PhaseKind.NOP,
            repeat=i,
            reward=reward,
            test_exit_code=exit_code,
            output_tail=output,
        )
        for i, reward in enumerate(rewards, start=1)
    ]


def test_nop_runs_alone_are_a_partial_certification_with_the_verifiers_reason():
    outcome, reason = classify(nops(0.0, 0.0))
    assert outcome is Outcome.NO_SOLUTION
    assert "no reference solution" in reason and "solution/solve.sh" in reason
    assert "scored 0 in 2 of 2 runs" in reason and "test.sh exit 1" in reason
    assert "FAILED ../tests/test_outputs.py::test_report_exists" in reason
    assert "1 failed, 1 passed" in reason
    assert "factory solve" in reason and "\n" not in reason


def test_a_missing_reward_is_said_to_count_as_zero():
    phases = nops(None, None, output="bash: pytest: command not found", exit_code=127)
    phases[0].reward_error = "the tests wrote neither /logs/verifier/reward.txt nor reward.json"
    outcome, reason = classify(phases)
    assert outcome is Outcome.NO_SOLUTION
    assert "wrote no reward" in reason and "counts as 0" in reason
    assert "pytest: command not found" in reason and "exit 127" in reason


@pytest.mark.parametrize(
    ("phases", "outcome"),
    [
        (nops(1.0, 1.0), Outcome.PASSES_WITHOUT_SOLUTION),
        (nops(0.0, 1.0), Outcome.FLAKY),
    ],
)
def test_what_the_nop_runs_disprove_still_wins(phases, outcome):
    assert classify(phases)[0] is outcome


def test_a_timed_out_nop_run_is_a_timeout_not_a_partial_certification():
    phases = nops(None)
    phases[0].timed_out, phases[0].timeout_sec = "test", 30.0
    assert classify(phases)[0] is Outcome.TIMEOUT


def test_failure_summary_falls_back_to_the_last_lines():
    assert failure_summary("a\nb\n\nwrong answer: 41\n") == "a | b | wrong answer: 41"
    assert failure_summary("") == "(no output)"
    assert len(failure_summary("FAILED x - " + "y" * 1000)) == 300


def _verdict(outcome: Outcome, path: str) -> TaskValidation:
    return TaskValidation(
        id=path, path=path, outcome=outcome, reason="r", content_hash="h" * 64, image="img"
    )


def test_reports_and_reruns_never_count_it_valid(tmp_path):
    report = ValidationReport(run_id="r", factory_version="0", repeats=2, jobs=1)
    report.tasks = [_verdict(Outcome.NO_SOLUTION, "a"), _verdict(Outcome.VALID, "b")]
    write_report(report, tmp_path / "validation.json")
    assert report.summary == {"valid": 1, "no_solution": 1, "total": 2}

    class _Executor:  # the validator only reads these before a run
        run_id, threads = "r2", 1

    validator = Validator(None, tmp_path, executor=_Executor())  # type: ignore[arg-type]
    # Only the valid task is carried over by a rerun; the partial one is checked again.
    assert {path for path, _ in validator._certified} == {"b"}


def test_flake_runs_and_generation_leave_it_out(tmp_path):
    from factory.generate.certify import Certificate
    from factory.quality.flake import flake_valid_tasks

    assert not Certificate(Outcome.NO_SOLUTION.value, "partial").valid
    report = ValidationReport(run_id="r", factory_version="0", repeats=2, jobs=1)
    report.tasks = [_verdict(Outcome.NO_SOLUTION, "a")]
    # No valid task: nothing to run, so no engine is needed.
    assert flake_valid_tasks(None, report, 3, tmp_path) == []  # type: ignore[arg-type]
