"""The agent harness against real containers, driven by scripted policies."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.agent.harness import Episode, HarnessConfig, ScriptedPolicy, run_episode
from factory.images.task_image import TaskImageBuilder
from factory.tasks.model import load_task

pytestmark = pytest.mark.docker
TASK = Path(__file__).resolve().parents[2] / "examples" / "broken" / "fails-with-solution"


@pytest.fixture
def task_and_image(runtime):
    task = load_task(TASK)
    return task, TaskImageBuilder(runtime).ensure(task).ref


@pytest.fixture
def play(runtime, task_and_image, tmp_path):
    """``play(commands, config)``: the episode of a policy that sends ``commands`` in turn."""
    task, image = task_and_image

    def run(commands: list[str], config: HarnessConfig | None = None):
        policy = ScriptedPolicy(commands)
        return run_episode(runtime, task, image, policy, config or HarnessConfig(), tmp_path)

    return run


def test_scripted_policy_solves_the_task(play, tmp_path):
    result = play(["ls /app", "echo 42 > /app/answer.txt"])
    assert result.reward == 1.0 and result.turns == 2 and result.infra_error is None
    observations = [m["content"] for m in result.transcript if m["role"] == "user"][1:]
    assert observations[0] == "(no output)"
    assert (tmp_path / "transcript.jsonl").is_file()


def test_wrong_answer_scores_zero(play):
    result = play(["echo 41 > /app/answer.txt"])
    assert result.reward == 0.0 and result.infra_error is None


def test_command_timeout_kills_only_the_command(play):
    commands = ["sleep 60 & sleep 60", "echo 42 > /app/answer.txt"]
    result = play(commands, HarnessConfig(command_timeout_sec=2))
    first = [m["content"] for m in result.transcript if m["role"] == "user"][1]
    assert "timed out after 2s" in first
    assert result.reward == 1.0  # the episode went on in the same container


def test_turn_limit(play):
    result = play(["true"] * 10, HarnessConfig(max_turns=3))
    assert result.turns == 3


def test_container_death_is_an_infra_failure(runtime, task_and_image, tmp_path):
    task, image = task_and_image
    episode = Episode(runtime, task, image, HarnessConfig(), tmp_path)
    episode.start()
    runtime.api.kill(episode.box.id)
    # stopped before the policy's command (a kill racing the command itself is ambiguous, and
    # the harness reads a stop at the command's time as the command's doing)
    runtime.api.wait(episode.box.id, timeout=30)
    episode.observe("```bash\necho 42 > /app/answer.txt\n```")
    result = episode.finish()
    assert result.infra_error and result.reward is None


def test_a_command_that_stops_the_container_scores_zero(play):
    """Killing PID 1 is the policy's doing: the episode scores 0 and counts as such, it is
    not dropped as an infrastructure failure (which would never penalise it)."""
    result = play(["echo 42 > /app/answer.txt && kill 1; sleep 5", "ls"])
    assert result.reward == 0.0 and result.infra_error is None
    assert "stopped the container" in result.policy_error
    assert result.transcript[-1]["content"] == "error: the command stopped the environment"


def test_a_command_that_hangs_the_container_scores_zero(play):
    # stopping `timeout` (the command's parent) keeps it from ever ending the command
    commands = ["echo 42 > /app/answer.txt; kill -STOP $PPID; sleep 300"]
    result = play(commands, HarnessConfig(command_timeout_sec=1))
    assert result.reward == 0.0 and result.infra_error is None
    assert "outlived its timeout" in result.policy_error
