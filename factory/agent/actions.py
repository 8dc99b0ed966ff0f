"""What a policy's reply means: commands to run, or "done".

Two action formats, both in the OpenAI chat format:

* **tool calls** — the reply carries ``tool_calls`` for the ``bash`` function
  (``{"command": "..."}``); models trained for tool use emit these;
* **fenced commands** — for small models that cannot emit tool calls reliably: the reply
  contains a fenced block, `````bash ... `````, whose contents run as one command (the first
  block, if there are several). A reply without a fenced block (e.g. ``DONE``) ends the
  episode.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum

_FENCE = re.compile(r"```(?:bash|sh|shell|console)?[ \t]*\n(.*?)```", re.DOTALL)

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the task's environment and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command to run."}},
            "required": ["command"],
        },
    },
}


class ActionFormat(str, Enum):
    TOOLS = "tools"
    FENCED = "fenced"


@dataclass
class Action:
    commands: list[str] = field(default_factory=list)
    """Commands to run, in order."""
    done: bool = False
    """The policy declared the task finished (or produced nothing to run)."""
    tool_call_ids: list[str] = field(default_factory=list)
    """For tool calls: the ids to answer with tool messages."""
    error: str | None = None
    """A malformed action (e.g. tool-call arguments that are not JSON): told to the policy."""


def parse_action(text: str, tool_calls: list[dict] | None = None) -> Action:
    """Read a reply in either format. Tool calls win over fenced blocks."""
    if tool_calls:
        action = Action()
        for call in tool_calls:
            function = call.get("function", {})
            action.tool_call_ids.append(call.get("id", ""))
            if function.get("name") != "bash":
                action.error = f"unknown tool {function.get('name')!r}; the only tool is bash"
                continue
            try:
                arguments = json.loads(function.get("arguments") or "{}")
                action.commands.append(str(arguments["command"]))
            except (ValueError, KeyError, TypeError):
                action.error = 'bash needs JSON arguments like {"command": "ls"}'
        return action
    commands = [block.strip() for block in _FENCE.findall(text or "") if block.strip()]
    if commands:
        return Action(commands=commands[:1])  # one command per turn
    return Action(done=True)
