"""A passing episode's commands as solution/solve.sh: read back from the transcript as the
harness ran them, replayed faithfully by bash, written atomically with their provenance."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from factory.agent.actions import ActionFormat
from factory.solve.candidate import (
    NotScriptableError,
    Provenance,
    episode_commands,
    install_solution,
    solve_script,
    stage_candidate,
)
from factory.solve.solver import AttemptRecord, SolveOutcome, _verdict  # noqa: PLC2701

PROVENANCE = Provenance(
    model="qwen-7b",
    endpoint="http://127.0.0.1:8000/v1",
    seed=1234,
    attempt=2,
    date="2025-01-01T00:00:00+00:00",
    factory_version="0.0.0",
    reward=1.0,
)


def call(index: int, name: str, arguments) -> dict:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": f"c{index}", "type": "function", "function": {"name": name, "arguments": raw}}


def test_fenced_commands_are_read_back_until_done():
    transcript = [
        {"role": "system", "content": "..."},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "look first\n```bash\nls -la\n```"},
        {"role": "user", "content": "out"},
        {"role": "assistant", "content": "```sh\necho 42 > answer.txt\n```\n```bash\nignored\n```"},
        {"role": "user", "content": "out"},
        {"role": "assistant", "content": "DONE"},
    ]
    assert episode_commands(transcript, ActionFormat.FENCED) == ["ls -la", "echo 42 > answer.txt"]


def test_tool_calls_that_ran_are_kept_and_refused_ones_dropped():
    transcript = [
        {"role": "assistant", "content": "", "tool_calls": [call(0, "bash", {"command": "pwd"})]},
        {"role": "tool", "tool_call_id": "c0", "content": "/app"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                call(1, "bash", "{not json"),  # refused by the harness: ran nothing
                call(2, "bash", {"command": "x", "extra": 1}),  # refused too
                call(3, "bash", {"command": "echo 'a b' > f"}),
            ],
        },
        {"role": "assistant", "content": "all done"},
    ]
    assert episode_commands(transcript, ActionFormat.TOOLS) == ["pwd", "echo 'a b' > f"]


def test_a_run_through_another_tool_cannot_be_scripted():
    transcript = [
        {"role": "assistant", "content": "", "tool_calls": [call(0, "calendar_add", {"d": 1})]}
    ]
    with pytest.raises(NotScriptableError, match="calendar_add"):
        episode_commands(transcript, ActionFormat.TOOLS)


def test_the_script_replays_each_command_in_a_fresh_shell(tmp_path):
    commands = [
        "cd sub 2>/dev/null || mkdir sub",  # fails the first time; the next still runs
        'cd sub && export X=1 && echo "it\'s $X" > quoted.txt',
        'printf "%s\\n" "${X:-unset}" > env.txt',  # export did not survive: a fresh shell
        "cat <<'EOF' > heredoc.txt\nline $1\nEOF",
        "false",
        "read -r line || echo no-stdin > stdin.txt",
    ]
    script = solve_script(commands, PROVENANCE)
    path = tmp_path / "solve.sh"
    path.write_text(script)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(["bash", str(path)], cwd=work, input="fed\n", text=True, timeout=30)
    assert done.returncode == 0  # the last command's status; `false` did not stop it
    assert (work / "sub" / "quoted.txt").read_text() == "it's 1\n"
    assert (work / "env.txt").read_text() == "unset\n"
    assert (work / "heredoc.txt").read_text() == "line $1\n"
    assert (work / "stdin.txt").read_text() == "no-stdin\n"  # stdin is closed, as in an episode


def test_the_header_states_the_provenance_on_single_lines():
    odd = PROVENANCE.model_copy(update={"model": "evil\nrm -rf /"})
    lines = solve_script(["true"], odd).splitlines()
    assert lines[0] == "#!/bin/bash"
    header = [line for line in lines if "provenance:" in line]
    assert all(line.startswith("# ") for line in header)
    assert "# provenance: model=evil rm -rf /" in header
    assert "# provenance: endpoint=http://127.0.0.1:8000/v1" in header
    assert "# provenance: seed=1234 attempt=2" in header
    assert any("date=2025-01-01T00:00:00+00:00" in line for line in header)


def test_staging_copies_the_task_and_installing_is_atomic_and_executable(tmp_path):
    task = tmp_path / "task"
    (task / "tests").mkdir(parents=True)
    (task / "tests" / "test.sh").write_text("true\n")
    staged = stage_candidate(task, "#!/bin/bash\necho hi\n", tmp_path / "stage")
    assert (staged / "tests" / "test.sh").is_file()
    assert (staged / "solution" / "solve.sh").read_text() == "#!/bin/bash\necho hi\n"
    assert not (task / "solution").exists()  # the task is untouched until it certifies
    path = install_solution(task, "#!/bin/bash\necho bye\n")
    assert path == task / "solution" / "solve.sh" and os.access(path, os.X_OK)
    assert [p.name for p in path.parent.iterdir()] == ["solve.sh"]  # no temp file left


def record(attempt: int, reward: float | None, **fields) -> AttemptRecord:
    return AttemptRecord(attempt=attempt, seed=attempt, reward=reward, turns=3,
                         policy_replies=4, **fields)  # fmt: skip


def test_outcomes_of_a_search_without_a_certified_candidate():
    outcome, reason = _verdict([record(1, 0.0), record(2, None, infra_error="x")], 0, 2, 8)
    assert outcome is SolveOutcome.UNSOLVED and "rewards 0,none in 2 attempts" in reason
    assert "up to 8 turns" in reason
    outcome, reason = _verdict([record(1, None, infra_error="engine down")], 0, 1, 8)
    assert outcome is SolveOutcome.INFRA_ERROR and "engine down" in reason
    outcome, reason = _verdict([record(1, 1.0, note="used calendar_add")], 1, 1, 8)
    assert outcome is SolveOutcome.NOT_CERTIFIED and "used calendar_add" in reason
