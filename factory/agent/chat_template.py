"""Rendering an episode's conversation, with its tools, through a local model's chat template.

``render_prompt`` passes the tools to ``tokenizer.apply_chat_template(tools=...)``. A template
that has no tool support renders the same text with or without them (SmolLM2's, for one); the
tools are then described in the system message instead, with the call format
:func:`factory.agent.actions.text_tool_calls` reads (``<tool_call>`` JSON blocks, the format
most tool-aware templates ask for too).

Torch-free: the tokenizer is anything with ``apply_chat_template`` (transformers' API).
"""

from __future__ import annotations

import json
from typing import Any

TOOLS_NOTE = """# Tools

You can call these functions:
<tools>
{tools}
</tools>

To call one, reply with its name and arguments as JSON inside <tool_call></tool_call> tags:
<tool_call>
{{"name": "bash", "arguments": {{"command": "ls"}}}}
</tool_call>
You may make several calls in one reply, one block each."""


def render_prompt(tokenizer: Any, messages: list[dict], tools: list[dict] | None = None) -> str:
    """The prompt text for the model's next turn (generation prompt included)."""
    plain = _apply(tokenizer, messages)
    if not tools:
        return plain
    try:
        with_tools = _apply(tokenizer, messages, tools=tools)
    except Exception:  # noqa: BLE001 - a template that chokes on tools has no tool support
        with_tools = plain
    if with_tools != plain:
        return with_tools
    return _apply(tokenizer, tools_in_system_message(messages, tools))


def tools_in_system_message(messages: list[dict], tools: list[dict]) -> list[dict]:
    """``messages`` with the tools and the call format described in the system message."""
    described = "\n".join(
        json.dumps(tool.get("function", tool), sort_keys=True, ensure_ascii=False) for tool in tools
    )
    note = TOOLS_NOTE.format(tools=described)
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{first.get('content') or ''}\n\n{note}"
        return [first, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


def _apply(tokenizer: Any, messages: list[dict], **extra: Any) -> str:
    return tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, **extra
    )
