"""How a tool task reaches its tool server (environments/tools/toolenv, started in the
container): the port, the healthcheck, the MCP server entry. One home for the tool families,
the LLM tool-domain mode and the BFCL importer."""

from __future__ import annotations

TOOL_PORT = 8000
HEALTHCHECK = {
    "command": 'python3 -c "import urllib.request; '
    f"urllib.request.urlopen('http://127.0.0.1:{TOOL_PORT}/health', timeout=2)\"",
    "interval_sec": 0.5,
    "timeout_sec": 30.0,  # one attempt; Harbor fails the trial when it runs out
    "retries": 20,
    "start_period_sec": 10.0,
}
"""The task's healthcheck: the tool server answers on TOOL_PORT (copy it before changing it)."""


def mcp_servers(name: str) -> list[dict[str, str]]:
    """The task's MCP servers: its tool server, named ``name``."""
    return [
        {"name": name, "transport": "streamable-http", "url": f"http://127.0.0.1:{TOOL_PORT}/mcp"}
    ]
