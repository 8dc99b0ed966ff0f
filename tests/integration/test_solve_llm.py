"""`factory solve` against a real model: SmolLM2-135M behind llama-cpp-python's server attempts
the example task without a solution through the command line. The model is far too small to
be counted on to solve it; the point is the plumbing: the partial certification ran, the model
was called in every attempt, the attempts and the outcome are reported, and a solve.sh exists
exactly when the outcome says one certified."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.llama_server import llama_server

pytestmark = [pytest.mark.docker, pytest.mark.llm]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "broken" / "missing-solution"


def test_solve_runs_attempts_against_llama_cpp(tmp_path):
    task = tmp_path / "task"
    shutil.copytree(EXAMPLE, task)
    out = tmp_path / "out"
    with llama_server() as url:
        done = subprocess.run(
            [sys.executable, "-m", "factory", "solve", str(task), "--base-url", url,
             "--model", "smollm2", "--action-format", "fenced", "--attempts", "2",
             "--max-turns", "2", "--max-tokens", "64", "--command-timeout", "10",
             "--repeats", "1", "--out", str(out), "--json"],
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["model"] == "smollm2" and report["endpoint"] == url
    assert report["tokens_used"] > 0  # the endpoint answered and was counted
    [result] = report["tasks"]
    assert result["preflight"]["outcome"] == "no_solution"
    assert result["outcome"] in {"solved", "unsolved", "not_certified"}, result["reason"]
    assert result["reason"]
    attempts = result["attempts"]
    assert [a["attempt"] for a in attempts][:1] == [1] and 1 <= len(attempts) <= 2
    for attempt in attempts:
        assert attempt["infra_error"] is None
        assert attempt["policy_replies"] >= 1 and attempt["reward"] in (0.0, 1.0)
        transcript = Path(attempt["log_dir"]) / "transcript.jsonl"
        record = json.loads(transcript.read_text().splitlines()[0])
        assert any(m["role"] == "assistant" for m in record["messages"])
    assert len({a["seed"] for a in attempts}) == len(attempts)  # each attempt its own sample
    solved = result["outcome"] == "solved"
    assert (task / "solution" / "solve.sh").exists() == solved
    assert (done.returncode == 0) == solved
    assert "attempt 1/2" in done.stderr  # progress
