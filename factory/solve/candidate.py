"""A passing episode's commands as a candidate ``solution/solve.sh``, with its provenance.

The script replays exactly what the episode ran, in order: each command in a fresh bash shell
from the working directory the episode's commands started in (the harness runs every command
that way), stdin closed, a failing command not stopping the rest (the episode went on after
one too). Exploration commands stay: what passed is what is replayed, and certification (nop,
oracle, repeats, probes) decides whether the replay is a reference solution.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from pydantic import BaseModel

from factory.agent.actions import ActionFormat, parse_action
from factory.errors import FactoryError
from factory.fsutil import write_text_atomic
from factory.tasks.paths import TaskPaths


class NotScriptableError(FactoryError):
    """The episode acted through a tool other than bash (an MCP server's): no shell script
    replays it."""


class Provenance(BaseModel):
    """Where a candidate solution came from (written into the script's header and the report)."""

    model: str
    """The policy's model name (``scripted`` for a scripted policy)."""
    endpoint: str
    """The OpenAI-compatible base URL the model answered from (``scripted``: none)."""
    seed: int
    """The sampling seed of the episode."""
    attempt: int
    """Which attempt (1-based) of ``factory solve`` passed."""
    date: str
    """UTC time the episode ended, ISO 8601."""
    factory_version: str
    reward: float
    """What the task's verifier gave the episode."""


def episode_commands(transcript: list[dict], action_format: ActionFormat) -> list[str]:
    """The shell commands an episode ran, in order, read back from its transcript the way the
    harness read them (:func:`factory.agent.actions.parse_action`): calls the harness refused
    (malformed arguments) ran nothing and are left out; a call to another tool raises
    :class:`NotScriptableError`."""
    commands: list[str] = []
    for message in transcript:
        if message.get("role") != "assistant":
            continue
        action = parse_action(
            message.get("content") or "", message.get("tool_calls") or None, action_format
        )
        if action.error:
            continue
        if action.done:
            break
        commands.extend(action.commands)
        for call in action.calls:
            if call.error:
                continue
            if call.name != "bash":
                raise NotScriptableError(
                    f"the passing run called the tool {call.name!r}; only bash commands can "
                    "be replayed by solution/solve.sh"
                )
            command = call.arguments.get("command")
            if isinstance(command, str) and set(call.arguments) == {"command"}:
                commands.append(command)
    return commands


def solve_script(commands: list[str], provenance: Provenance) -> str:
    """The text of ``solution/solve.sh`` that replays ``commands``."""
    p = {k: " ".join(str(v).split()) for k, v in provenance.model_dump().items()}
    header = [
        "#!/bin/bash",
        "# Candidate reference solution written by `factory solve`: the commands of an agent",
        "# episode that passed this task's verifier, replayed in order (each in a fresh bash",
        "# shell, as the episode ran them). Certified by `factory validate` before it counts.",
        f"# provenance: model={p['model']}",
        f"# provenance: endpoint={p['endpoint']}",
        f"# provenance: seed={p['seed']} attempt={p['attempt']}",
        f"# provenance: date={p['date']} factory={p['factory_version']}",
        f"# provenance: reward={provenance.reward:g}",
    ]
    # The harness runs solve.sh from the container's working directory, where the episode's
    # commands ran, so no cd is needed.
    body = [f"bash -c {shlex.quote(command)} </dev/null" for command in commands]
    return "\n".join([*header, "", *body, ""])


def stage_candidate(task_root: Path, script: str, dest: Path) -> Path:
    """A copy of the task at ``dest`` with ``script`` as its ``solution/solve.sh`` (what
    certification checks; the task itself is untouched until the candidate certifies)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(task_root, dest, symlinks=True)
    write_text_atomic(TaskPaths(dest).solve_script, script, mode=0o755)
    return dest


def install_solution(task_root: Path, script: str) -> Path:
    """Write ``script`` as the task's ``solution/solve.sh``, atomically (readers see the old
    state or the whole new script, never part of it)."""
    path = TaskPaths(task_root).solve_script
    write_text_atomic(path, script, mode=0o755)
    return path
