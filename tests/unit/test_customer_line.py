"""The simulated customer in a container episode, without Docker: ``say`` lines and the ``say``
tool reach the customer on the host (never the container), the rest of a command runs in the
container in order, and before the verifier what the agent said is appended to the task's reply
file as the agent's user."""

from __future__ import annotations

import base64
import json

import pytest
from fixtures.airline import airline_entry

from factory.agent.actions import ActionFormat
from factory.agent.customer_line import COMMAND, SAY, SAY_TOOL, customer_line, split_say
from factory.agent.harness import Episode, HarnessConfig
from factory.agent.user_sim import ScriptedUser
from factory.generate.taxonomy import Difficulty
from factory.runtime.sandbox import ExecResult
from factory.tasks.user_profile import load_user_profile

FENCE = "```"


class FakeBox:
    """A container that records what it is asked to run."""

    def __init__(self) -> None:
        self.commands: list[tuple[list[str], str | None]] = []

    def exec(self, command, *, timeout_sec, user=None, max_output=0, what="", **_):
        self.commands.append((command, user))
        return ExecResult(exit_code=0, output=f"ran {command[-1][-40:]}", duration_sec=0.0)

    def exec_checked(self, command, *, timeout_sec, what, user=None):
        self.commands.append((command, user))
        return ExecResult(exit_code=0, output="", duration_sec=0.0)


@pytest.fixture
def simulated(tmp_path):
    return airline_entry(tmp_path).task


def test_say_lines_split_a_command_in_order():
    command = "tool list\nsay 'Hello there'\n\nsay\ntool call x '{}'\necho done"
    assert split_say(command) == [
        (COMMAND, "tool list"),
        (SAY, "Hello there"),
        (SAY, ""),
        (COMMAND, "tool call x '{}'\necho done"),
    ]
    assert split_say("ls -la") == [(COMMAND, "ls -la")]
    assert split_say("sayonara") == [(COMMAND, "sayonara")]


def test_a_container_episode_talks_to_the_customer_on_the_host(simulated):
    profile = load_user_profile(simulated.paths.tests_dir)
    assert profile is not None and profile.reply_path == "/home/agent/reply.md"
    episode = Episode(None, simulated, "image", HarnessConfig())  # type: ignore[arg-type]
    assert episode.customer is not None
    episode.customer.open()
    episode.box = FakeBox()  # type: ignore[assignment]
    seen = episode.observe(f"{FENCE}bash\ntool list\nsay How can I help?\nls\n{FENCE}")
    ran = [command[-1] for command, _user in episode.box.commands]
    assert len(ran) == 2 and "tool list" in ran[0] and "ls" in ran[1]
    assert not any("How can I help" in c for c in ran)  # never reaches the container
    assert f"customer: {profile.goal}" in seen  # the script: the goal on the first reply
    user_id = profile.facts["user id"]
    assert user_id in episode.observe(f"{FENCE}bash\nsay What is your user id?\n{FENCE}")
    roles = [u["role"] for u in episode.customer.transcript()]
    assert roles == ["user", "agent", "user", "agent", "user"]


def test_the_say_tool_is_offered_and_answered(simulated):
    config = HarnessConfig(action_format=ActionFormat.TOOLS)
    episode = Episode(None, simulated, "image", config)  # type: ignore[arg-type]
    assert SAY_TOOL in episode.tools
    episode.customer.open()
    episode.box = FakeBox()  # type: ignore[assignment]
    call = {"id": "c1", "type": "function"}
    said = json.dumps({"message": "Hello, what do you need?"})
    seen = episode.observe("", [{**call, "function": {"name": "say", "arguments": said}}])
    assert seen.startswith("customer: ") and episode.box.commands == []
    wrong = json.dumps({"text": "hi"})
    assert "one argument" in episode.observe(
        "", [{**call, "function": {"name": "say", "arguments": wrong}}]
    )


def test_what_was_said_is_delivered_to_the_reply_file_as_the_agent(simulated):
    episode = Episode(None, simulated, "image", HarnessConfig())  # type: ignore[arg-type]
    episode.customer.open()
    box = FakeBox()
    episode.box = box  # type: ignore[assignment]
    episode._deliver_reply()
    assert box.commands == []  # nothing said: nothing added
    episode.observe(f"{FENCE}bash\nsay Your code is HAT123.\nsay Bye!\n{FENCE}")
    episode._deliver_reply()
    (command, user) = box.commands[-1]
    assert user == simulated.config.agent.user and command[-1] == "/home/agent/reply.md"
    text = base64.b64decode(command[-2]).decode()
    assert text == "\nYour code is HAT123.\nBye!\n"


def test_a_task_without_a_profile_has_no_customer(tmp_path):
    entry = airline_entry(tmp_path, None, Difficulty.EASY)
    episode = Episode(None, entry.task, "image", HarnessConfig())  # type: ignore[arg-type]
    assert episode.customer is None and customer_line(entry.task) is None
    episode.box = FakeBox()  # type: ignore[assignment]
    episode.observe(f"{FENCE}bash\nsay hello\n{FENCE}")
    assert episode.box.commands[0][0][-1].endswith("bash -c 'say hello'")


def test_another_customer_can_be_put_on_the_line(simulated):
    profile = load_user_profile(simulated.paths.tests_dir)
    profile.script = []
    profile.default_reply = "I only say this."
    user = ScriptedUser(profile)
    episode = Episode(None, simulated, "image", HarnessConfig(), user=user)  # type: ignore[arg-type]
    episode.customer.open()
    episode.box = FakeBox()  # type: ignore[assignment]
    assert "I only say this." in episode.observe(f"{FENCE}bash\nsay hi\n{FENCE}")
