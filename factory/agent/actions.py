"""What a policy's reply means: tool calls or commands to run, or "done".

Two action formats (``HarnessConfig.action_format``), both in the OpenAI chat format:

* **tool calls** — the policy is offered tools (``bash`` and, for tasks with MCP servers, the
  servers' tools) and answers with calls. An endpoint returns them structured
  (``tool_calls``); a local model writes them in its text, ``<tool_call>{"name": ...,
  "arguments": {...}}</tool_call>`` (Hermes/Qwen style, what chat templates with tool support
  and :mod:`factory.agent.chat_template` ask for). A reply without a call ends the episode;
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
from typing import Any

_FENCE = re.compile(r"```(?:bash|sh|shell|console)?[ \t]*\n(.*?)```", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the task's environment and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command to run."}},
            "required": ["command"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


class ActionFormat(str, Enum):
    TOOLS = "tools"
    FENCED = "fenced"


@dataclass
class ToolCall:
    """One call the policy made."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    """Why the call cannot run (arguments that are not a JSON object, ...): its result."""

    def describe(self) -> str:
        if self.name == "bash" and isinstance(self.arguments.get("command"), str):
            return self.arguments["command"]
        return f"{self.name}({json.dumps(self.arguments, sort_keys=True)})"


@dataclass
class Action:
    commands: list[str] = field(default_factory=list)
    """Fenced format: commands to run, in order."""
    calls: list[ToolCall] = field(default_factory=list)
    """Tool format: the calls, in order (each answered by its own ``role: tool`` message)."""
    done: bool = False
    """The policy declared the task finished (or produced nothing to run)."""
    error: str | None = None
    """A malformed reply as a whole: told to the policy."""


def parse_action(
    text: str,
    tool_calls: list[dict] | None = None,
    action_format: ActionFormat = ActionFormat.FENCED,
) -> Action:
    """Read a reply. Structured tool calls win; in the tool format a reply's text is searched
    for ``<tool_call>`` blocks; in the fenced format for a fenced command."""
    if tool_calls:
        return Action(calls=[_structured(call, i) for i, call in enumerate(tool_calls)])
    if action_format is ActionFormat.TOOLS:
        calls = text_tool_calls(text or "")
        return Action(calls=calls) if calls else Action(done=True)
    commands = [block.strip() for block in _FENCE.findall(text or "") if block.strip()]
    if commands:
        return Action(commands=commands[:1])  # one command per turn
    return Action(done=True)


def _structured(call: dict, index: int) -> ToolCall:
    function = call.get("function") or {}
    parsed = ToolCall(str(call.get("id") or f"call_{index}"), str(function.get("name") or ""))
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else raw or {}
    except ValueError:
        arguments = None
    if isinstance(arguments, dict):
        parsed.arguments = arguments
    else:
        parsed.error = f'{parsed.name or "the call"} needs JSON object arguments, like {{"a": 1}}'
    return parsed


def text_tool_calls(text: str) -> list[ToolCall]:
    """Tool calls written in a reply's text: ``<tool_call>`` blocks holding a JSON object (or a
    list of them) with ``name`` and ``arguments`` (or ``parameters``). An unclosed last block
    (a reply cut off by the token limit) still counts when its JSON is complete."""
    calls: list[ToolCall] = []
    for block in _TOOL_CALL.findall(text):
        try:
            decoded = json.loads(block)
        except ValueError:
            calls.append(ToolCall(f"call_{len(calls)}", "", error=_TEXT_FORMAT_HINT))
            continue
        for item in decoded if isinstance(decoded, list) else [decoded]:
            calls.append(_from_text(item, len(calls)))
    return calls


_TEXT_FORMAT_HINT = (
    'write each call as <tool_call>{"name": "...", "arguments": {...}}</tool_call> with valid JSON'
)


def _from_text(item: Any, index: int) -> ToolCall:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return ToolCall(f"call_{index}", "", error=_TEXT_FORMAT_HINT)
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = None
    call = ToolCall(f"call_{index}", item["name"])
    if isinstance(arguments, dict):
        call.arguments = arguments
    else:
        call.error = f"{item['name']} needs JSON object arguments"
    return call
