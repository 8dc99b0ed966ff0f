"""Tool tasks without a container: the task's tool domain called in this process.

A tool task (``factory/families/tooling.py``) serves a domain's tools from a server inside its
container; the agent calls them from the shell (``tool list``, ``tool call NAME '{json}'``,
``tool policy``) and the verifier compares the final state with ``tests/expected_state.json``
and fails any call the policy refused. :class:`ToolEpisode` plays the same episode with the
host's copy of the domain (:mod:`factory.toolenv`) over the task's ``environment/state.json``:
the policy's commands are read as ``tool`` command lines and nothing else runs — there is no
shell, so no model output is ever executed on this machine. The reward is the verifier's rule:
1 when the state matches and no call broke the policy, else 0.

A task with a simulated customer (``tests/user.json``, :mod:`factory.tasks.user_profile`) adds
one action: ``say MESSAGE`` (a line of a fenced block, or the ``say`` tool) sends the message to
the customer (:mod:`factory.agent.user_sim`; scripted unless the caller passes another) and
their reply is the observation. The conversation goes into the transcript, and the reward also
asks that the agent told the customer every fact the profile requires
(:mod:`factory.agent.communicate`). Tasks without a profile run exactly as before.

Where it serves: a machine without Docker (a lent GPU), TRL's environments, and fast smoke
runs. The prompts are the harness's, so a policy meets the same conversation in a container.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from factory.agent.actions import Action, ToolCall
from factory.agent.communicate import check_communicated
from factory.agent.harness import Episode, EpisodeResult, HarnessConfig, truncate
from factory.agent.user_sim import STOP, ScriptedUser, UserSimulator, Utterance
from factory.errors import FactoryError
from factory.tasks.model import Task
from factory.tasks.user_profile import UserProfile, load_user_profile
from factory.toolenv.core import JSON, Domain, Environment, load_domain

ONLY_TOOL = (
    "error: only the `tool` command is available here: tool list | tool policy | "
    'tool call NAME \'{"argument": "value"}\''
)
SAY = "say"
"""The action (a fenced block's line ``say MESSAGE``, or a tool) that talks to the customer."""
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


@dataclass(frozen=True)
class ToolTaskSpec:
    """What an in-process episode needs from a tool task's directory."""

    domain: Domain
    state: JSON
    expected: JSON
    user: UserProfile | None = None
    """The simulated customer (``tests/user.json``), for tasks that have one."""


def tool_task_spec(task: Task) -> ToolTaskSpec:
    """The domain, seeded state and expected state of a tool task (FactoryError otherwise)."""
    state_file = task.paths.environment_dir / "state.json"
    expected_file = task.paths.tests_dir / "expected_state.json"
    names = [server.name for server in task.config.environment.mcp_servers]
    if not names or not state_file.is_file() or not expected_file.is_file():
        raise FactoryError(
            f"task {task.id} is not a tool task (a tool domain served to the agent, with "
            "environment/state.json and tests/expected_state.json), so it cannot run in "
            "process; use environment: docker"
        )
    try:
        domain = load_domain(names[0])
    except ImportError:
        raise FactoryError(
            f"task {task.id}: no tool domain named {names[0]!r} in factory.toolenv.domains"
        ) from None
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FactoryError(f"task {task.id}: cannot read its tool state ({exc})") from None
    return ToolTaskSpec(domain, state, expected, load_user_profile(task.paths.tests_dir))


def run_tool_command(env: Environment, command: str) -> tuple[str, int]:
    """One command string (lines, ``&&`` and ``;`` chains of ``tool`` commands) against the
    environment: (output, exit code of the last command run)."""
    outputs: list[str] = []
    code = 0
    for line in command.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line)
        except ValueError as exc:
            return "\n".join([*outputs, f"error: cannot parse {line!r} ({exc})"]), 2
        for words_, joiner in _chain(words):
            if joiner == "&&" and code != 0:
                continue
            text, code = _tool(env, words_)
            outputs.append(text)
    return "\n".join(o for o in outputs if o), code


def _chain(words: list[str]):
    """Split tokens on && and ; into (command words, the separator before it)."""
    current: list[str] = []
    joiner = ";"
    for word in words:
        if word in ("&&", ";"):
            if current:
                yield current, joiner
            current, joiner = [], word
        else:
            current.append(word)
    if current:
        yield current, joiner


def _tool(env: Environment, words: list[str]) -> tuple[str, int]:
    if not words or words[0] != "tool":
        return ONLY_TOOL, 127
    args = words[1:]
    if not args or args[0] in ("-h", "--help", "help"):
        return "tool list | tool policy | tool call NAME '{json}'", 0
    if args[0] == "list":
        lines = []
        for tool in env.domain.tools.values():
            lines.append(f"{tool.name}: {tool.description}")
            lines.append(
                f"  arguments: {json.dumps(tool.parameters['properties'], sort_keys=True)}"
            )
        return "\n".join(lines), 0
    if args[0] == "policy":
        return env.domain.policy.strip(), 0
    if args[0] == "call" and len(args) in (2, 3):
        try:
            arguments = json.loads(args[2]) if len(args) == 3 else {}
        except json.JSONDecodeError as exc:
            return f"tool: arguments are not valid JSON: {exc}", 2
        result = env.call(args[1], arguments)
        shown = result.get("result") if result.get("ok") else result
        return json.dumps(shown, indent=1), 0 if result.get("ok") else 1
    return "usage: tool list | tool policy | tool call NAME '{json}'", 2


class ToolEpisode(Episode):
    """An :class:`Episode` of a tool task whose tools run in this process; ``user``: the
    simulated customer of a task with a profile (default: the profile's scripted one)."""

    def __init__(
        self,
        task: Task,
        config: HarnessConfig,
        log_dir: Path | None = None,
        spec: ToolTaskSpec | None = None,
        user: UserSimulator | None = None,
    ) -> None:
        super().__init__(None, task, "", config, log_dir)  # type: ignore[arg-type]
        self.spec = spec or tool_task_spec(task)
        self.env: Environment | None = None
        profile = self.spec.user
        self.user = user or (ScriptedUser(profile) if profile is not None else None)
        self.conversation: list[Utterance] = []

    @property
    def tools(self) -> list[dict]:
        offered = super().tools
        return [*offered, SAY_TOOL] if offered and self.user is not None else offered

    def start(self) -> list[dict]:
        self.messages = self.opening()
        self.env = Environment(self.spec.domain, self.spec.state)
        if self.user is not None:
            self.conversation = [Utterance("user", self.user.profile.opening, "opening")]
        return self.messages

    def say(self, message: str) -> str:
        """Send ``message`` to the customer; their reply, as the agent sees it."""
        if self.user is None:
            return "error: there is no customer on the line in this task"
        message = message.strip()
        if not message:
            return "error: say needs a message: say Your booking is confirmed."
        if any(u.role == "user" and STOP in u.content for u in self.conversation):
            return "error: the customer has left the conversation"
        self.conversation.append(Utterance("agent", message))
        answer = self.user.reply(list(self.conversation))
        self.conversation.append(answer)
        words = answer.content.replace(STOP, "").strip() or "(no reply)"
        left = " [the customer has left the conversation]" if STOP in answer.content else ""
        return f"customer: {words}{left}"

    def _call(self, call: ToolCall) -> str:
        if call.name == SAY and self.user is not None and not call.error:
            message = call.arguments.get("message")
            if not isinstance(message, str) or set(call.arguments) != {"message"}:
                return 'error: say takes one argument, a string: {"message": "..."}'
            return truncate(self.say(message), self.config.max_observation_chars)
        return super()._call(call)

    def _run(self, action: Action) -> str:
        if action.error:
            return f"error: {action.error}"
        assert self.env is not None, "start() first"
        outputs = []
        for command in action.commands:
            for kind, text in self._pieces(command):
                if kind == SAY:
                    shown = self.say(text)
                    outputs.append(truncate(shown, self.config.max_observation_chars))
                    continue
                out, code = run_tool_command(self.env, text)
                shown = truncate(out, self.config.max_observation_chars) or "(no output)"
                outputs.append(shown + (f"\n[exit code {code}]" if code else ""))
        return "\n".join(outputs) if outputs else "(no output)"

    def _pieces(self, command: str) -> list[tuple[str, str]]:
        """A command split into ``tool`` lines (run together) and ``say`` lines (with a
        simulated customer; without one, ``say`` is an unknown command like any other)."""
        if self.user is None:
            return [("tool", command)]
        pieces: list[tuple[str, str]] = []
        lines: list[str] = []
        for line in command.splitlines():
            found = _SAY_LINE.match(line.strip())
            if found is None:
                lines.append(line)
                continue
            if lines:
                pieces.append(("tool", "\n".join(lines)))
                lines = []
            pieces.append((SAY, _unquoted(found.group(1) or "")))
        if lines and any(line.strip() for line in lines):
            pieces.append(("tool", "\n".join(lines)))
        return pieces

    def finish(self) -> EpisodeResult:
        self.done = True
        solved = (
            self.env is not None
            and self.env.state == self.spec.expected
            and not self.env.violations()
        )
        checks: dict[str, str] = {}
        profile = self.spec.user
        if profile is not None and profile.communicate:
            said = [u.content for u in self.conversation if u.role == "agent"]
            verdict = check_communicated(profile.communicate, said)
            checks["communicate"] = verdict.explain()
            solved = solved and verdict.passed
        result = EpisodeResult(
            task_id=self.task.id,
            reward=None if self.infra_error else 1.0 if solved else 0.0,
            turns=len(self.turns),
            infra_error=self.infra_error,
            transcript=list(self.messages),
            seconds=time.monotonic() - self._started,
            conversation=[u.to_json() for u in self.conversation],
            checks=checks,
        )
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self._save(result)
        return result


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
