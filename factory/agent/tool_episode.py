"""Tool tasks without a container: the task's tool domain called in this process.

A tool task (``factory/families/tooling.py``) serves a domain's tools from a server inside its
container; the agent calls them from the shell (``tool list``, ``tool call NAME '{json}'``,
``tool policy``) and the verifier compares the final state with ``tests/expected_state.json``
and fails any call the policy refused. :class:`ToolEpisode` plays the same episode with the
host's copy of the domain (:mod:`factory.toolenv`) over the task's ``environment/state.json``:
the policy's commands are read as ``tool`` command lines and nothing else runs — there is no
shell, so no model output is ever executed on this machine. The reward is the verifier's rule:
1 when the state matches and no call broke the policy, else 0. In a task with the policy in the
agent (tag ``policy-in-agent``) the tools execute forbidden calls, as its server does, and only
the record says they broke the policy.

A task with a simulated customer (``tests/user.json``, :mod:`factory.tasks.user_profile`) adds
one action: ``say MESSAGE`` (a line of a fenced block, or the ``say`` tool) sends the message to
the customer (:mod:`factory.agent.user_sim`; scripted unless the caller passes another) and
their reply is the observation. The conversation goes into the transcript, and the reward also
asks that the agent told the customer every fact the profile requires
(:mod:`factory.agent.communicate`). Tasks without a profile run exactly as before. The customer
is the harness's (:mod:`factory.agent.customer_line`): a container episode has them too.

Where it serves: a machine without Docker (a lent GPU), TRL's environments, and fast smoke
runs. The prompts are the harness's, so a policy meets the same conversation in a container.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from factory.agent.customer_line import SAY, SAY_TOOL, CustomerLine  # noqa: F401 - re-exported
from factory.agent.harness import (
    Episode,
    EpisodeResult,
    HarnessConfig,
    truncate,
)
from factory.agent.user_sim import ScriptedUser, UserSimulator, Utterance
from factory.errors import FactoryError
from factory.tasks.model import Task
from factory.tasks.user_profile import UserProfile, load_user_profile
from factory.toolenv.agent_policy import TASK_TAG as POLICY_IN_AGENT_TAG
from factory.toolenv.agent_policy import AgentPolicyEnvironment
from factory.toolenv.core import JSON, Domain, Environment, load_domain
from factory.toolenv.dual import TASK_TAG as DUAL_TAG
from factory.toolenv.dual import DualEnvironment

ONLY_TOOL = (
    "error: only the `tool` command is available here: tool list | tool policy | "
    'tool call NAME \'{"argument": "value"}\''
)


@dataclass(frozen=True)
class ToolTaskSpec:
    """What an in-process episode needs from a tool task's directory."""

    domain: Domain
    state: JSON
    expected: JSON
    user: UserProfile | None = None
    """The simulated customer (``tests/user.json``), for tasks that have one."""
    agent_policy: bool = False
    """Policy in the agent (a ``policy-in-agent`` task): the tools execute forbidden calls,
    and the violation counts only in the record (:mod:`factory.toolenv.agent_policy`)."""
    dual: bool = False
    """Dual control (a ``dual-control`` task): the domain's dual variant, whose customer uses
    tools of their own (:mod:`factory.toolenv.dual`)."""

    def environment(self) -> Environment:
        """A fresh environment on the seeded state, as the task's server runs it."""
        if self.dual:
            return DualEnvironment(self.domain, self.state)
        if self.agent_policy:
            return AgentPolicyEnvironment(self.domain, self.state)
        return Environment(self.domain, self.state)


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
    tags = task.config.metadata.get("tags") or []
    return ToolTaskSpec(
        domain,
        state,
        expected,
        load_user_profile(task.paths.tests_dir),
        agent_policy=POLICY_IN_AGENT_TAG in tags,
        dual=DUAL_TAG in tags,
    )


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
        self.spec = spec or tool_task_spec(task)
        if user is None and self.spec.user is not None:
            user = ScriptedUser(self.spec.user)
        super().__init__(None, task, "", config, log_dir, user)  # type: ignore[arg-type]
        self.env: Environment | None = None

    @property
    def user(self) -> UserSimulator | None:
        return self.customer.user if self.customer is not None else None

    @user.setter
    def user(self, user: UserSimulator | None) -> None:
        """Another customer on the line (before :meth:`start`)."""
        self.customer = CustomerLine(user) if user is not None else None

    @property
    def conversation(self) -> list[Utterance]:
        return self.customer.conversation if self.customer is not None else []

    def start(self) -> list[dict]:
        self.messages = self.opening()
        self.env = self.spec.environment()
        if self.customer is not None:
            self.customer.open()
            self.customer.act = self._customer_act
        return self.messages

    def _customer_act(self, name: str) -> dict:
        """Dual control: the customer uses their tool ``name`` on this episode's state."""
        if not isinstance(self.env, DualEnvironment):
            return {"ok": False, "error": "the customer has no tools of their own in this task"}
        return self.env.customer_call(name)

    def say(self, message: str) -> str:
        """Send ``message`` to the customer; their reply, as the agent sees it."""
        if self.customer is None:
            return "error: there is no customer on the line in this task"
        return self.customer.say(message)

    def _execute(self, command: str) -> tuple[str, bool]:
        assert self.env is not None, "start() first"
        out, code = run_tool_command(self.env, command)
        shown = truncate(out, self.config.max_observation_chars) or "(no output)"
        return shown + (f"\n[exit code {code}]" if code else ""), False

    def finish(self) -> EpisodeResult:
        self.done = True
        solved = (
            self.env is not None
            and self.env.state == self.spec.expected
            and not self.env.violations()
        )
        checks, told = self._customer_checks()
        return self._result(None if self.infra_error else 1.0 if solved and told else 0.0, checks)
