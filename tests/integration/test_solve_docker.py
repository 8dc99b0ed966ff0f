"""`factory solve` end to end with the real engine and a scripted policy: on the example task
without a solution (examples/broken/missing-solution, a partial certification), commands that
solve it become a solution/solve.sh that certifies valid; commands that do not leave no
solve.sh and a clear outcome."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from factory.agent.harness import HarnessConfig
from factory.executor import LocalExecutor
from factory.solve.solver import SolveOutcome, Solver, SolveReport, solve_tasks
from factory.validate.outcome import Outcome
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "broken" / "missing-solution"
HARNESS = HarnessConfig(max_turns=4, command_timeout_sec=20)


@pytest.fixture
def task(tmp_path) -> Path:
    copy = tmp_path / "task"
    shutil.copytree(EXAMPLE, copy)
    return copy


def test_a_solving_policy_gets_a_certified_solution_installed(runtime, tmp_path, task):
    solver = Solver.scripted(
        ["ls -la /app", "cd /app && echo 'forty two' | wc -w", "echo 42 > /app/answer.txt"], HARNESS
    )
    said: list[str] = []
    out = tmp_path / "out"
    report = solve_tasks(
        [task], solver, LocalExecutor(runtime, 1), out, attempts=3, probes=True, say=said.append
    )
    result = report.tasks[0]
    assert result.outcome is SolveOutcome.SOLVED, result.reason
    assert result.preflight is not None and result.preflight.outcome is Outcome.NO_SOLUTION
    assert len(result.attempts) == 1  # the first passing attempt that certifies ends the search
    attempt = result.attempts[0]
    assert attempt.reward == 1.0 and attempt.policy_replies == 4  # 3 commands, then DONE
    assert attempt.certification is not None
    assert attempt.certification.outcome is Outcome.VALID, attempt.certification.reason
    assert attempt.certification.probes and all(p.rejected for p in attempt.certification.probes)
    script = task / "solution" / "solve.sh"
    assert result.solution == str(script) and os.access(script, os.X_OK)
    text = script.read_text()
    assert "# provenance: model=scripted" in text and "attempt=1" in text and "date=" in text
    assert "bash -c 'echo 42 > /app/answer.txt' </dev/null" in text
    assert any("attempt 1/3" in line for line in said) and any(
        "certifying" in line for line in said
    )
    # The installed solution is a reference solution for the normal certification.
    verdict = Validator(runtime, tmp_path / "validate").validate(task)
    assert verdict.outcome is Outcome.VALID, verdict.reason
    assert verdict.content_hash == result.content_hash
    stored = SolveReport.model_validate_json((out / "solve.json").read_text())
    assert stored.summary == {"solved": 1, "total": 1}
    assert (Path(attempt.log_dir) / "transcript.jsonl").is_file()


def test_a_failing_policy_leaves_no_solution_and_says_so(runtime, tmp_path, task):
    solver = Solver.scripted(["echo 41 > /app/answer.txt"], HARNESS)
    out = tmp_path / "out"
    report = solve_tasks([task], solver, LocalExecutor(runtime, 1), out, attempts=2, repeats=1)
    result = report.tasks[0]
    assert result.outcome is SolveOutcome.UNSOLVED, result.reason
    assert "no attempt passed the verifier (rewards 0,0 in 2 attempts" in result.reason
    assert [a.reward for a in result.attempts] == [0.0, 0.0]
    assert all(a.candidate is None and a.certification is None for a in result.attempts)
    assert not (task / "solution").exists()
    assert json.loads((out / "solve.json").read_text())["summary"] == {"unsolved": 1, "total": 1}
