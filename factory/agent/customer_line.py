"""The simulated customer on the line during an episode (a task with ``tests/user.json``), in a
container (:class:`~factory.agent.harness.Episode`) or in process
(:class:`~factory.agent.tool_episode.ToolEpisode`) alike.

The agent talks to the customer with ``say MESSAGE`` (a line of its own in a command, or the
``say`` tool): the line never reaches the container; the customer (:mod:`factory.agent.user_sim`,
scripted unless the caller passes another) answers on the host and the answer is the
observation. The conversation goes into the transcript; what the agent said is checked against
what the customer must be told (:mod:`factory.agent.communicate`), and in a container it is also
delivered where the task's verifier reads the reply to the customer (the profile's
``reply_path``), so the task's own tests judge it as they judge a reply written there.

Dual control (:mod:`factory.toolenv.dual`): a customer's reply may use their own tools
(:attr:`~factory.agent.user_sim.Utterance.actions`); the episode runs them where its state lives
(:attr:`CustomerLine.act`), the agent sees only the customer's words.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from factory.agent.communicate import CommunicateResult, check_communicated
from factory.agent.user_sim import STOP, ScriptedUser, UserSimulator, Utterance
from factory.tasks.model import Task
from factory.tasks.user_profile import UserProfile, load_user_profile

SAY = "say"
"""The action (a command's line ``say MESSAGE``, or a tool) that talks to the customer."""
SAY_TOOL = {
    "type": "function",
    "function": {
        "name": SAY,
        "description": "Send a message to the customer and return their reply.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What to tell them."}},
            "required": ["message"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}
_SAY_LINE = re.compile(r"^say(?:\s+(.*))?$", re.DOTALL)
COMMAND = "command"
"""The kind of a piece of a command that is not a ``say`` line."""


class CustomerLine:
    """A customer (``user``) and the conversation with them so far."""

    def __init__(self, user: UserSimulator) -> None:
        self.user = user
        self.conversation: list[Utterance] = []
        self.act: Callable[[str], dict] | None = None
        """Dual control: how the customer's own tool runs where the episode's state lives
        (name -> its result); set by the episode."""
        self.acted: list[dict] = []
        """The customer's tool uses so far: ``{"tool", "result"}``."""

    @property
    def profile(self) -> UserProfile:
        return self.user.profile

    def open(self) -> None:
        """A new conversation: the customer's opening only."""
        self.conversation = [Utterance("user", self.profile.opening, "opening")]
        self.acted = []

    def say(self, message: str) -> str:
        """Send ``message`` to the customer; their reply, as the agent sees it."""
        message = message.strip()
        if not message:
            return "error: say needs a message: say Your booking is confirmed."
        if any(u.role == "user" and STOP in u.content for u in self.conversation):
            return "error: the customer has left the conversation"
        self.conversation.append(Utterance("agent", message))
        answer = self.user.reply(list(self.conversation))
        self.conversation.append(answer)
        for name in answer.actions:
            if name in self.profile.actions and self.act is not None:
                self.acted.append({"tool": name, "result": self.act(name)})
        words = answer.content.replace(STOP, "").strip() or "(no reply)"
        left = " [the customer has left the conversation]" if STOP in answer.content else ""
        return f"customer: {words}{left}"

    def say_call(self, arguments: dict) -> str:
        """The ``say`` tool: its one argument, a string."""
        message = arguments.get("message")
        if not isinstance(message, str) or set(arguments) != {"message"}:
            return 'error: say takes one argument, a string: {"message": "..."}'
        return self.say(message)

    def told(self) -> list[str]:
        """Everything the agent said to the customer, in order."""
        return [u.content for u in self.conversation if u.role == "agent"]

    def verdict(self) -> CommunicateResult | None:
        """Whether the customer was told what they must be (None: the profile asks nothing)."""
        if not self.profile.communicate:
            return None
        return check_communicated(self.profile.communicate, self.told())

    def transcript(self) -> list[dict]:
        return [u.to_json() for u in self.conversation]


def customer_line(task: Task, user: UserSimulator | None = None) -> CustomerLine | None:
    """The customer of ``task`` (``user``, else the scripted one of its profile), or None for a
    task without a simulated customer."""
    profile = user.profile if user is not None else load_user_profile(task.paths.tests_dir)
    if profile is None:
        return None
    return CustomerLine(user or ScriptedUser(profile))


def split_say(command: str) -> list[tuple[str, str]]:
    """A command split into pieces run as commands (:data:`COMMAND`) and ``say`` lines
    (:data:`SAY`, with the message), in order."""
    pieces: list[tuple[str, str]] = []
    lines: list[str] = []
    for line in command.splitlines():
        found = _SAY_LINE.match(line.strip())
        if found is None:
            lines.append(line)
            continue
        if lines and any(x.strip() for x in lines):
            pieces.append((COMMAND, "\n".join(lines)))
        lines = []
        pieces.append((SAY, _unquoted(found.group(1) or "")))
    if lines and any(line.strip() for line in lines):
        pieces.append((COMMAND, "\n".join(lines)))
    return pieces


def _unquoted(text: str) -> str:
    """A ``say`` line's message: one shell-quoted word unquoted, anything else as written."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        try:
            words = shlex.split(text)
        except ValueError:
            return text
        if len(words) == 1:
            return words[0]
    return text
