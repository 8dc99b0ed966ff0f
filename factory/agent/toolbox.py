"""The tools an episode offers in the tool-call format, and how each call runs.

Every episode has ``bash`` (the command runs in the task's container like a fenced command).
A task whose ``task.toml`` declares MCP servers (``[[environment.mcp_servers]]``, the tool
families do) also offers each server's tools, listed when the episode starts: a call runs as
an MCP ``tools/call`` made from inside the container (:mod:`factory.agent.mcp_call`, since the
server's URL is the one seen from there), as the same user as the agent's commands.

A server tool keeps its own name unless it clashes with ``bash`` or with another server's tool;
then it is offered as ``<server>__<tool>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.agent.actions import BASH_TOOL, ToolCall
from factory.errors import FactoryError
from factory.runtime import Sandbox
from factory.tasks.config import McpServerConfig, McpTransport

MCP_CLIENT_SOURCE = (Path(__file__).parent / "mcp_call.py").read_text(encoding="utf-8")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class ToolServerError(FactoryError):
    """A task's MCP server could not be reached or answered with an error."""


@dataclass
class McpRoute:
    """Where an offered tool runs: ``tool`` on the server ``server`` at ``url``."""

    server: str
    url: str
    tool: str


@dataclass
class Toolbox:
    specs: list[dict] = field(default_factory=lambda: [BASH_TOOL])
    """The tools in OpenAI's format, ``bash`` first."""
    routes: dict[str, McpRoute] = field(default_factory=dict)
    """Offered name -> the MCP server tool behind it."""
    notes: list[str] = field(default_factory=list)
    """Servers left out, and why."""

    @property
    def names(self) -> list[str]:
        return [spec["function"]["name"] for spec in self.specs]


def discover(
    box: Sandbox, servers: list[McpServerConfig], *, user: str | None, timeout: float
) -> Toolbox:
    """``bash`` plus the tools of every streamable-HTTP server in ``servers`` (listed from
    inside the container). Raises :class:`ToolServerError` when a server does not answer."""
    toolbox = Toolbox()
    listed: list[tuple[McpServerConfig, dict]] = []
    for server in servers:
        if server.transport is not McpTransport.STREAMABLE_HTTP or not server.url:
            toolbox.notes.append(
                f"MCP server {server.name!r} ({server.transport.value}) is not offered: the "
                "harness calls streamable-HTTP servers only"
            )
            continue
        result = mcp_request(box, server.url, "tools/list", {}, user=user, timeout=timeout)
        listed += [(server, tool) for tool in result.get("tools", []) if isinstance(tool, dict)]
    counts: dict[str, int] = {"bash": 1}
    for _server, tool in listed:
        counts[str(tool.get("name"))] = counts.get(str(tool.get("name")), 0) + 1
    for server, tool in listed:
        name = str(tool.get("name") or "")
        offered = name if counts[name] == 1 else f"{server.name}__{name}"
        offered = _NAME_UNSAFE.sub("_", offered)[:64]
        toolbox.routes[offered] = McpRoute(server.name, server.url or "", name)
        function: dict[str, Any] = {
            "name": offered,
            "description": str(tool.get("description") or ""),
            "parameters": tool.get("inputSchema") or {"type": "object", "properties": {}},
        }
        toolbox.specs.append({"type": "function", "function": function})
    return toolbox


def call_server_tool(
    box: Sandbox, route: McpRoute, call: ToolCall, *, user: str | None, timeout: float
) -> str:
    """Run one call on its MCP server; the text the policy sees (``error: ...`` on failure)."""
    params = {"name": route.tool, "arguments": call.arguments}
    try:
        result = mcp_request(box, route.url, "tools/call", params, user=user, timeout=timeout)
    except ToolServerError as exc:
        return f"error: {exc}"
    parts = []
    for item in result.get("content") or []:
        if isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        elif isinstance(item, dict):
            parts.append(f"[{item.get('type', 'content')} omitted]")
    if not parts and "structuredContent" in result:
        parts.append(json.dumps(result["structuredContent"], sort_keys=True))
    text = "\n".join(parts) or "(no output)"
    return f"error: {text}" if result.get("isError") else text


def mcp_request(
    box: Sandbox, url: str, method: str, params: dict, *, user: str | None, timeout: float
) -> dict:
    """One MCP request made from inside the container; its result (raises ToolServerError)."""
    command = ["python3", "-c", MCP_CLIENT_SOURCE, url, method, json.dumps(params), f"{timeout:g}"]
    result = box.exec(
        command, timeout_sec=timeout + 15, user=user, max_output=1 << 20, what=f"MCP {method}"
    )
    if result.timed_out:
        raise ToolServerError(f"{url}: {method} did not finish in {timeout:g} s")
    answer = _last_json_line(result.output)
    if answer is None:
        detail = result.output.strip()[-300:] or f"exit code {result.exit_code}"
        raise ToolServerError(f"{url}: {method}: no answer from the MCP client ({detail})")
    if "error" in answer or result.exit_code:
        raise ToolServerError(f"{url}: {answer.get('error', answer)}")
    return answer


def _last_json_line(output: str) -> dict | None:
    for line in reversed(output.splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
