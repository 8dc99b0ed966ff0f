"""Tool tasks played in process: the reference solution solves them, wrong or forbidden calls
fail them, and nothing but the `tool` command ever runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from factory.toolenv.core import Environment, load_domain

from factory.agent.backends import InProcessEpisodes
from factory.agent.harness import HarnessConfig
from factory.agent.suite import load_suite_tasks
from factory.agent.tool_episode import run_tool_command
from factory.errors import FactoryError
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial

FENCE = "```"


def reference_commands(task_dir: Path) -> str:
    lines = (task_dir / "solution" / "solve.sh").read_text().splitlines()
    return "\n".join(line for line in lines if line.startswith("tool "))


def play(entry, replies: list[str], max_turns: int = 4, max_observation_chars: int = 2000):
    backend = InProcessEpisodes()
    backend.prepare([entry])
    harness = HarnessConfig(max_turns=max_turns, max_observation_chars=max_observation_chars)
    episode = backend.episode(entry, harness)
    episode.start()
    for reply in replies:
        episode.observe(reply)
    return episode, episode.finish()


@pytest.mark.parametrize(
    "family", ["tool-calendar", "tool-banking", "tool-inventory", "tool-airline"]
)
@pytest.mark.parametrize("difficulty", [Difficulty.EASY, Difficulty.HARD])
def test_the_reference_solution_solves_in_process(tmp_path, family, difficulty):
    render_trial(family, difficulty, 3, tmp_path / "tasks")
    (entry,) = load_suite_tasks(tmp_path)
    commands = reference_commands(entry.task.root)
    _, result = play(entry, [f"{FENCE}bash\n{commands}\n{FENCE}", "DONE"])
    assert result.reward == 1.0 and result.infra_error is None


def test_stopping_early_and_breaking_policy_score_zero(tmp_path):
    render_trial("tool-calendar", Difficulty.HARD, 2, tmp_path / "tasks")
    (entry,) = load_suite_tasks(tmp_path)
    commands = reference_commands(entry.task.root).splitlines()
    _, result = play(entry, [f"{FENCE}bash\n{commands[0]}\n{FENCE}", "DONE"])
    assert result.reward == 0.0
    env = Environment(load_domain("calendar"), {"events": []})
    output, code = run_tool_command(env, "tool call no_such_tool '{}'")
    assert code == 1 and "unknown tool" in output


def test_only_the_tool_command_runs(tmp_path):
    render_trial("tool-calendar", Difficulty.EASY, 1, tmp_path / "tasks")
    (entry,) = load_suite_tasks(tmp_path)
    marker = tmp_path / "pwned"
    episode, result = play(
        entry, [f"{FENCE}bash\ntouch {marker}; echo hi > {marker}\n{FENCE}", "DONE"]
    )
    assert not marker.exists()
    observation = episode.messages[3]["content"]
    assert "only the `tool` command" in observation and "[exit code 127]" in observation
    assert result.reward == 0.0


def test_tool_list_policy_and_chains(tmp_path):
    render_trial("tool-calendar", Difficulty.EASY, 1, tmp_path / "tasks")
    (entry,) = load_suite_tasks(tmp_path)
    # the tool list and the policy (with its handover section) are longer than the default
    # observation cut, which keeps both ends and drops the middle
    command = f"{FENCE}bash\ntool list && tool policy\n{FENCE}"
    episode, _ = play(entry, [command], max_turns=1, max_observation_chars=20000)
    observation = episode.messages[3]["content"]
    assert "create_event:" in observation and "Scheduling policy" in observation
    env = Environment(load_domain("calendar"), {"events": []})
    output, code = run_tool_command(env, "tool call bogus '{}' && tool list")
    assert code == 1 and "create_event:" not in output  # && stops after a failure
    assert run_tool_command(env, "tool call x '{not json'")[1] == 2
    assert run_tool_command(env, "tool 'unclosed")[1] == 2


def test_a_task_without_a_tool_domain_cannot_run_in_process(tmp_path):
    render_trial("shell-basics", Difficulty.EASY, 1, tmp_path / "tasks")
    (entry,) = load_suite_tasks(tmp_path)
    with pytest.raises(FactoryError, match="not a tool task.*environment: docker"):
        InProcessEpisodes().prepare([entry])


def test_bash_tool_calls_run_in_process_and_other_tools_are_refused(tmp_path):
    """The tool-call format (TRL's environments): `bash` calls reach the in-process `tool`
    command; a tool that was not offered is refused without an environment to call."""
    import json

    from factory.agent.actions import ActionFormat

    render_trial("tool-calendar", Difficulty.EASY, 1, tmp_path / "tasks")
    (entry,) = load_suite_tasks(tmp_path)
    backend = InProcessEpisodes()
    backend.prepare([entry])
    episode = backend.episode(entry, HarnessConfig(max_turns=3, action_format=ActionFormat.TOOLS))
    episode.start()
    assert [t["function"]["name"] for t in episode.tools] == ["bash"]

    def call(name: str, arguments: dict) -> dict:
        function = {"name": name, "arguments": json.dumps(arguments)}
        return {"id": f"c-{name}", "type": "function", "function": function}

    commands = reference_commands(entry.task.root)
    observation = episode.observe("", [call("bash", {"command": commands})])
    assert observation and "error" not in observation.splitlines()[0]
    refused = episode.observe("", [call("create_event", {})])
    assert refused and "unknown tool 'create_event'" in refused
    result = episode.finish()
    assert result.reward == 1.0 and result.infra_error is None
