"""The agent harness: a multi-turn episode of a policy in a task's own container, then the
task's verifier in that same container, isolated from what the policy left running or replaced
(:mod:`factory.validate.isolation`). Shared by training (batched, many episodes in step)
and evaluation; torch-free.

An :class:`Episode` is a small state machine so a trainer can drive many at once:
``start()`` (fresh container), then ``observe(reply)`` per policy turn (runs the commands,
returns the observation), until ``done``; then ``finish()`` runs the verifier and removes the
container. Infrastructure failures (the container did not start, the engine failed) are
recorded as ``infra_error`` — such episodes are dropped by training, not scored 0. A container
that stopped after the policy's first command was issued (it killed PID 1, ran the container
out of memory) or a command that hung past its kill timeout is the policy's failure:
``policy_error`` is set and the episode scores 0, so such behaviour is penalised.

A task with a simulated customer (``tests/user.json``) has the customer on the line
(:mod:`factory.agent.customer_line`): ``say MESSAGE`` lines and the ``say`` tool talk to them on
the host, and before the verifier runs, what the agent said is added to the reply the task's
tests read; the reward also asks that the customer was told what they must be.
"""

from __future__ import annotations

import base64
import json
import shlex
import time
from dataclasses import InitVar, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from factory.agent.actions import Action, ActionFormat, ToolCall, parse_action
from factory.agent.customer_line import (
    COMMAND,
    SAY,
    SAY_TOOL,
    CustomerLine,
    customer_line,
    split_say,
)
from factory.agent.toolbox import Toolbox, ToolServerError, call_server_tool, discover
from factory.agent.user_sim import UserSimulator
from factory.errors import (
    CancelledError,
    ContainerDiedError,
    EnvironmentUnhealthyError,
    FactoryError,
)
from factory.llm import LlmError
from factory.runtime import DockerRuntime, Sandbox
from factory.tasks.model import Task
from factory.toolenv.dual import TASK_TAG as DUAL_TAG
from factory.validate.isolation import Baseline, capture_baseline
from factory.validate.outcome import PhaseKind, PhaseResult
from factory.validate.phases import container_spec, verify

SYSTEM_FENCED = """You are an expert Linux user working in a terminal inside a container.
Solve the task by running shell commands. To run a command, reply with one fenced block:

```bash
<command>
```

You will see its output. Run one command per reply. Each command runs in a fresh bash shell in
the working directory (use && to chain). When the task is complete, reply with DONE."""

SYSTEM_TOOLS = """You are an expert Linux user working in a terminal inside a container.
Solve the task by calling the tools you are given; you will see each call's result. The bash
tool runs a command in a fresh bash shell in the working directory. When the task is complete,
reply without a tool call."""


@dataclass
class HarnessConfig:
    max_turns: int = 8
    """Policy turns before the episode is cut off."""
    command_timeout_sec: float = 30.0
    """Each command is killed (with its children) after this long."""
    max_observation_chars: int = 2000
    """Command output shown to the policy is truncated to this (head and tail kept)."""
    action_format: ActionFormat = ActionFormat.FENCED
    system_prompt: str | None = None
    """Override the system prompt."""


@dataclass
class Turn:
    reply: str
    commands: list[str]
    observation: str
    seconds: float


@dataclass
class EpisodeResult:
    task_id: str
    reward: float | None
    """None when the episode failed for infrastructure reasons."""
    turns: int
    infra_error: str | None = None
    policy_error: str | None = None
    """The policy's command stopped the environment (reward 0, not an infra failure)."""
    verifier: PhaseResult | None = None
    transcript: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    conversation: list[dict] = field(default_factory=list)
    """With a simulated customer: the agent-customer conversation (each message's role,
    content and, for the customer's, where it came from); empty otherwise."""
    checks: dict[str, str] = field(default_factory=dict)
    """Verdicts of checks beside the verifier's state comparison (``communicate``), in words."""

    @property
    def success(self) -> bool:
        return (self.reward or 0.0) >= 1.0


def save_transcript(log_dir: Path, result: EpisodeResult) -> None:
    """Append ``result``'s line to ``log_dir/transcript.jsonl``: the one writer of that file,
    for local episodes, tool episodes and remote (Ray) ones alike."""
    record: dict[str, Any] = {
        "task_id": result.task_id,
        "reward": result.reward,
        "turns": result.turns,
        "infra_error": result.infra_error,
        "policy_error": result.policy_error,
        "seconds": round(result.seconds, 3),
        "messages": result.transcript,
    }
    if result.conversation:  # only episodes with a simulated customer have these
        record["conversation"] = result.conversation
    if result.checks:
        record["checks"] = result.checks
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / "transcript.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


@dataclass(eq=False)
class Episode:
    """One episode of one task in one fresh container; ``user``: the simulated customer on the
    line (default: the task's scripted one)."""

    runtime: DockerRuntime
    task: Task
    image: str
    config: HarnessConfig
    log_dir: Path | None = None
    user: InitVar[UserSimulator | None] = None
    box: Sandbox | None = field(default=None, init=False)
    baseline: Baseline | None = field(default=None, init=False)
    """The environment's own processes, recorded before the policy's first command."""
    messages: list[dict] = field(default_factory=list, init=False)
    turns: list[Turn] = field(default_factory=list, init=False)
    done: bool = field(default=False, init=False)
    infra_error: str | None = field(default=None, init=False)
    policy_error: str | None = field(default=None, init=False)
    _acted_at: float | None = field(default=None, init=False)
    """Wall-clock time the policy's first command was issued."""
    toolbox: Toolbox | None = field(default=None, init=False)
    """Tool-call format: the tools offered (bash and the task's MCP servers' tools)."""
    customer: CustomerLine | None = field(init=False)
    """The simulated customer on the line (``user``, else the task's scripted one), or None
    for a task without one."""
    _started: float = field(default_factory=time.monotonic, init=False)

    def __post_init__(self, user: UserSimulator | None) -> None:
        self.customer = customer_line(self.task, user)

    @property
    def tools(self) -> list[dict]:
        """The tools offered to the policy (OpenAI's format); empty in the fenced format."""
        if self.config.action_format is not ActionFormat.TOOLS:
            return []
        offered = self.toolbox.specs if self.toolbox is not None else Toolbox().specs
        return [*offered, SAY_TOOL] if offered and self.customer is not None else offered

    # --- lifecycle --------------------------------------------------------------------
    def opening(self) -> list[dict]:
        """The conversation before the policy's first turn: system prompt and instruction."""
        system = self.config.system_prompt or (
            SYSTEM_TOOLS if self.config.action_format is ActionFormat.TOOLS else SYSTEM_FENCED
        )
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": self.task.instruction.strip()},
        ]

    def start(self) -> list[dict]:
        """Start the container; return the opening messages (system + instruction)."""
        self.messages = self.opening()
        if self.customer is not None:
            self.customer.open()
            self.customer.act = self._customer_act
        try:
            self.box = self.runtime.start(container_spec(self.task, self.image))
            self.box.wait_ready()
            self.baseline = capture_baseline(self.box)
            if self.customer is not None and DUAL_TAG in (
                self.task.config.metadata.get("tags") or []
            ):
                self._hang_up_scripted_customer()
            if self.config.action_format is ActionFormat.TOOLS:
                self.toolbox = discover(
                    self.box,
                    self.task.config.environment.mcp_servers,
                    user=self.task.config.agent.user,
                    timeout=self.config.command_timeout_sec,
                )
        except (ContainerDiedError, CancelledError, EnvironmentUnhealthyError) as exc:
            self._fail(str(exc))
        except ToolServerError as exc:
            self._fail(f"the task's MCP server: {exc}")
        return self.messages

    def observe(self, reply: str, tool_calls: list[dict] | None = None) -> str | None:
        """Take the policy's reply; run its commands; return the observation (None when the
        episode ends here)."""
        if self.done:
            return None
        self.messages.append(
            {
                "role": "assistant",
                "content": reply,
                **({"tool_calls": tool_calls} if tool_calls else {}),
            }
        )
        action = parse_action(reply, tool_calls, self.config.action_format)
        if action.done and not action.error:
            self.done = True
            return None
        started = time.monotonic()
        if action.calls:
            results = [self._call(call) for call in action.calls]
            for call, result in zip(action.calls, results, strict=True):
                self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            observation = "\n".join(results)
            done = [call.describe() for call in action.calls]
        else:
            observation = self._run(action)
            self.messages.append({"role": "user", "content": observation})
            done = action.commands
        self.turns.append(Turn(reply, done, observation, time.monotonic() - started))
        if len(self.turns) >= self.config.max_turns or self.infra_error:
            self.done = True
        return observation

    def finish(self) -> EpisodeResult:
        """Run the verifier in the episode's container and remove it."""
        self.done = True
        verdict = PhaseResult(kind=PhaseKind.ORACLE, repeat=1)
        try:
            if self.box is not None and not self.infra_error and not self.policy_error:
                log_dir = self.log_dir or Path("/tmp")
                log_dir.mkdir(parents=True, exist_ok=True)
                try:
                    self._deliver_reply()
                    verify(self.task, self.box, verdict, log_dir, baseline=self.baseline)
                except FactoryError as exc:
                    if self._policy_stopped_it():
                        self._lose(f"a command stopped the container (verifier: {exc})")
                    else:
                        self._fail(f"verifier: {exc}")
        finally:
            if self.box is not None:
                self.box.close()
        reward = None if self.infra_error else (verdict.reward or 0.0)
        if verdict.timed_out or self.policy_error:
            reward = 0.0
        checks, told = self._customer_checks()
        if reward is not None and not told:
            reward = 0.0
        return self._result(reward, checks, verdict)

    def _customer_checks(self) -> tuple[dict[str, str], bool]:
        """The checks on what the customer was told (``communicate``, none without a
        customer), and whether they passed."""
        told = self.customer.verdict() if self.customer is not None else None
        if told is None:
            return {}, True
        return {"communicate": told.explain()}, told.passed

    def _result(
        self, reward: float | None, checks: dict[str, str], verifier: PhaseResult | None = None
    ) -> EpisodeResult:
        """The episode's result, its transcript saved under ``log_dir`` when there is one."""
        result = EpisodeResult(
            task_id=self.task.id,
            reward=reward,
            turns=len(self.turns),
            infra_error=self.infra_error,
            policy_error=self.policy_error,
            verifier=verifier,
            transcript=list(self.messages),
            seconds=time.monotonic() - self._started,
            conversation=self.customer.transcript() if self.customer is not None else [],
            checks=checks,
        )
        if self.log_dir is not None:
            save_transcript(self.log_dir, result)
        return result

    def _customer_act(self, name: str) -> dict:
        """Dual control: the customer uses their tool ``name`` in the container (as root, on
        the tool server's admin socket: the agent's user cannot)."""
        if self.box is None or self.infra_error:
            return {"ok": False, "error": "no environment"}
        try:
            result = self.box.exec(
                ["python3", "-m", "toolenv.dual", "act", name],
                timeout_sec=30,
                env={"PYTHONPATH": "/opt/toolenv"},
                user="root",
                workdir="/",
                what="the customer's tool",
            )
        except ContainerDiedError as exc:
            return {"ok": False, "error": str(exc)}
        try:
            return json.loads(result.output.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"ok": False, "error": result.output[-300:]}

    def _hang_up_scripted_customer(self) -> None:
        """Dual control: this episode's customer is on the harness's line, so the task's own
        scripted customer (``/say`` on the tool server's port, which the agent's ``curl`` or
        the container's ``say`` program reach) leaves it, as root on the admin socket."""
        result = self.box.exec(
            ["python3", "-m", "toolenv.dual", "hangup"],
            timeout_sec=30,
            env={"PYTHONPATH": "/opt/toolenv"},
            user="root",
            workdir="/",
            what="hang up the task's scripted customer",
        )
        if '"ok": true' not in result.output:
            self._fail(f"cannot hang up the task's scripted customer: {result.output[-300:]}")

    def _deliver_reply(self) -> None:
        """Add what the agent said to the customer to the reply file the task's tests read
        (the profile's ``reply_path``), as the agent's user: a reply the agent wrote there
        itself is kept, before it."""
        if self.customer is None or self.box is None or not self.customer.profile.reply_path:
            return
        said = self.customer.told()
        if not said:
            return
        text = "\n".join(["", *said, ""]).encode("utf-8")
        self.box.exec_checked(
            ["sh", "-c", 'printf %s "$1" | base64 -d >> "$2"', "deliver",
             base64.b64encode(text).decode("ascii"), self.customer.profile.reply_path],
            timeout_sec=30,
            what="deliver the conversation to the reply file",
            user=self.task.config.agent.user,
        )  # fmt: skip

    # --- internals ----------------------------------------------------------------------
    def _fail(self, message: str) -> None:
        self.infra_error = self.infra_error or message
        self.done = True

    def _policy_stopped_it(self) -> bool:
        """The container is down and stopped after the policy's first command was issued."""
        if self._acted_at is None or self.box is None:
            return False
        return _stopped_since(self.box.state(), self._acted_at)

    def _lose(self, message: str) -> None:
        """The policy's command cost the environment: the episode ends and scores 0."""
        self.policy_error = self.policy_error or message
        self.done = True

    def _call(self, call: ToolCall) -> str:
        """Run one tool call; its result as the policy sees it."""
        if call.error:
            return f"error: {call.error}"
        if call.name == SAY and self.customer is not None:
            return truncate(
                self.customer.say_call(call.arguments), self.config.max_observation_chars
            )
        if call.name == "bash":  # through _run, which subclasses without a container replace
            command = call.arguments.get("command")
            if not isinstance(command, str) or set(call.arguments) != {"command"}:
                return 'error: bash takes one argument, a string: {"command": "ls"}'
            return self._run(Action(commands=[command]))
        route = (self.toolbox or Toolbox()).routes.get(call.name)
        if route is None:
            offered = ", ".join((self.toolbox or Toolbox()).names)
            return f"error: unknown tool {call.name!r}; the tools are: {offered}"
        if self.box is None or self.infra_error:
            return "error: no environment"
        self._acted_at = self._acted_at or time.time()
        try:
            result = call_server_tool(
                self.box,
                route,
                call,
                user=self.task.config.agent.user,
                timeout=self.config.command_timeout_sec,
            )
        except ContainerDiedError as exc:
            if self._policy_stopped_it():
                self._lose(f"a tool call stopped the container ({exc})")
                return "error: the tool call stopped the environment"
            self._fail(str(exc))
            return f"error: the environment failed ({exc})"
        return truncate(result, self.config.max_observation_chars)

    def _run(self, action: Action) -> str:
        """Run the action's commands; with a customer on the line, its ``say`` lines go to
        them instead, in order with the rest."""
        if action.error:
            return f"error: {action.error}"
        outputs = []
        for command in action.commands:
            pieces = split_say(command) if self.customer is not None else [(COMMAND, command)]
            for kind, text in pieces:
                if kind == SAY and self.customer is not None:
                    said = self.customer.say(text)
                    outputs.append(truncate(said, self.config.max_observation_chars))
                    continue
                shown, lost = self._execute(text)
                if lost:
                    return shown
                outputs.append(shown)
        return "\n".join(outputs) if outputs else "(no output)"

    def _execute(self, command: str) -> tuple[str, bool]:
        """Run one command in the container: (its output as the policy sees it, whether the
        environment is lost and the action ends there)."""
        if self.box is None:
            return "error: no environment", True
        limit = self.config.command_timeout_sec
        wrapped = f"timeout -k 2 {limit:g} bash -c {shlex.quote(command)}"
        self._acted_at = self._acted_at or time.time()
        try:
            result = self.box.exec(
                ["bash", "-c", wrapped],
                timeout_sec=limit + 15,
                user=self.task.config.agent.user,
                max_output=4 * self.config.max_observation_chars,
                what="agent command",
            )
        except ContainerDiedError as exc:
            if self._policy_stopped_it():
                self._lose(f"a command stopped the container ({exc})")
                return "error: the command stopped the environment", True
            self._fail(str(exc))
            return f"error: the environment failed ({exc})", True
        if result.timed_out:
            self._lose("a command outlived its timeout and the container was killed")
            return "error: the command hung and the environment was lost", True
        if (result.exit_code is None or result.exit_code >= 126) and self._policy_stopped_it():
            self._lose(f"a command stopped the container (exit code {result.exit_code})")
            return "error: the command stopped the environment", True
        note = ""
        if result.exit_code == 124:
            note = f"\n[command timed out after {limit:g}s]"
        elif result.exit_code:
            note = f"\n[exit code {result.exit_code}]"
        shown = truncate(result.output, self.config.max_observation_chars) or "(no output)"
        return shown + note, False


def _stopped_since(state: dict, issued: float) -> bool:
    """Whether the engine reports the container stopped at or after ``issued`` (a wall-clock
    time, the same clock as the engine's on this host). An engine that cannot say (it is down,
    the container was removed) or a container that was already gone before then is not the
    policy's doing: no slack before ``issued`` (a stop 0.09 s before the command was issued
    was once read as the command's)."""
    if not state or state.get("Running", True):
        return False
    finished = str(state.get("FinishedAt") or "")
    try:
        when = datetime.fromisoformat(finished[:26].rstrip("Z") + "+00:00").timestamp()
    except ValueError:
        return False
    return when >= issued


class ReplyPolicy:
    """A policy that answers a conversation (for evaluation and scripted tests)."""

    def reply(
        self, messages: list[dict], tools: list[dict] | None = None
    ) -> tuple[str, list[dict] | None]:  # pragma: no cover
        """(text, tool calls or None). ``tools``: what the episode offers (tool-call format)."""
        raise NotImplementedError


def run_episode(
    runtime: DockerRuntime,
    task: Task,
    image: str,
    policy: ReplyPolicy,
    config: HarnessConfig,
    log_dir: Path | None = None,
) -> EpisodeResult:
    """One whole episode with a policy that answers one conversation at a time; an endpoint
    that fails for good ends it as an infrastructure failure (reward None), and the container
    is removed on every path."""
    return drive_episode(Episode(runtime, task, image, config, log_dir), policy)


def drive_episode(episode: Episode, policy: ReplyPolicy) -> EpisodeResult:
    """Start ``episode``, let ``policy`` answer until it is done, and finish it (see
    :func:`run_episode`)."""
    messages = episode.start()
    try:
        while not episode.done:
            text, tool_calls = policy.reply(messages, episode.tools or None)
            episode.observe(text, tool_calls)
            messages = episode.messages
    except LlmError as exc:
        episode.infra_error = episode.infra_error or f"policy endpoint: {exc}"
        episode.done = True
    except BaseException:
        episode.done = True
        if episode.box is not None:
            episode.box.close()
        raise
    return episode.finish()


class ScriptedPolicy(ReplyPolicy):
    """Replies with a fixed list of commands, then DONE: fenced, or as bash tool calls when the
    episode offers tools. For tests and smoke runs."""

    def __init__(self, commands: list[str]) -> None:
        self.commands = commands

    def reply(
        self, messages: list[dict], tools: list[dict] | None = None
    ) -> tuple[str, list[dict] | None]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn >= len(self.commands):
            return "DONE", None
        if tools:
            arguments = json.dumps({"command": self.commands[turn]})
            call = {"id": f"call_{turn}", "type": "function"}
            return "", [{**call, "function": {"name": "bash", "arguments": arguments}}]
        return f"```bash\n{self.commands[turn]}\n```", None
