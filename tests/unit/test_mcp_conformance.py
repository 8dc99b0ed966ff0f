"""The tool server's MCP endpoint against the official ``mcp`` client (both protocol eras), and
the version negotiation and session rules of the specification with hand-built requests."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request

import anyio
import pytest
from factory.toolenv.core import load_domain
from factory.toolenv.mcp import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from fixtures.tool_server import serve_domain

mcp_client = pytest.importorskip("mcp.client", reason="the dev extra installs mcp")

MODERN = MODERN_VERSIONS[-1]
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]


@pytest.fixture
def served():
    with serve_domain("tool-calendar") as domain:
        yield domain


def request(url: str, body=None, headers=None, method: str = "POST"):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            raw, status, got = response.read(), response.status, response.headers
    except urllib.error.HTTPError as exc:
        raw, status, got = exc.read(), exc.code, exc.headers
    return status, (json.loads(raw) if raw else None), got


def initialize(url: str, version) -> tuple[dict, str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    body["params"] = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    }
    status, reply, headers = request(url, body)
    assert status == 200, reply
    return reply["result"], headers["Mcp-Session-Id"]


def modern(method: str, params: dict | None = None, version: str = MODERN, **meta) -> dict:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        **meta,
    }
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": method,
        "params": {**(params or {}), "_meta": envelope},
    }


def modern_headers(method: str, version: str = MODERN, name: str | None = None) -> dict:
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


# --- the official client ----------------------------------------------------------------


async def _session(url: str, mode: str) -> dict:
    from mcp.client import Client

    async with Client(url, mode=mode) as client:
        tools = await client.list_tools()
        rooms = await client.call_tool("list_rooms", {})
        refused = await client.call_tool("find_user", {})
        return {
            "version": client.protocol_version,
            "instructions": client.instructions,
            "tools": [t.name for t in tools.tools],
            "schemas": {t.name: t.input_schema for t in tools.tools},
            "rooms": json.loads(rooms.content[0].text),
            "rooms_error": rooms.is_error,
            "refused": (refused.is_error, refused.content[0].text),
        }


def _no_warnings(caplog) -> None:
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [f"{r.name}: {r.getMessage()}" for r in loud]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_client_lists_calls_and_closes_cleanly(served, caplog, mode):
    caplog.set_level(logging.DEBUG)
    seen = anyio.run(_session, served.url, mode)
    assert seen["version"] == (MODERN if mode == "auto" else LATEST_HANDSHAKE)
    assert "Scheduling policy" in seen["instructions"]
    assert (
        len(seen["tools"]) == len(load_domain("calendar").tools) and "create_event" in seen["tools"]
    )
    assert seen["schemas"]["create_event"]["additionalProperties"] is False
    assert seen["rooms_error"] is False and seen["rooms"]
    assert seen["refused"][0] is True and "missing required argument 'query'" in seen["refused"][1]
    assert [e["tool"] for e in served.log] == ["list_rooms", "find_user"]
    assert served.sessions == {}  # auto: never opened; legacy: ended by the client's DELETE
    _no_warnings(caplog)


def test_a_client_pinned_to_the_modern_revision_needs_no_handshake(served, caplog):
    caplog.set_level(logging.DEBUG)

    async def pinned() -> list[str]:
        from mcp.client import Client

        async with Client(served.url, mode=MODERN) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert "list_rooms" in anyio.run(pinned)
    _no_warnings(caplog)


# --- version negotiation (handshake era) ------------------------------------------------


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_keeps_a_supported_version(served, version):
    result, session = initialize(served.url, version)
    assert result["protocolVersion"] == version
    assert served.sessions[session] == version


@pytest.mark.parametrize("version", ["1999-01-01", "2025-01-01", MODERN, None, 20250326])
def test_initialize_counters_an_unsupported_version_with_the_latest(served, version):
    result, _session = initialize(served.url, version)
    assert result["protocolVersion"] == LATEST_HANDSHAKE


def test_requests_of_a_session_must_speak_its_version(served):
    _result, session = initialize(served.url, "2025-06-18")
    tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ok = request(
        served.url, tools, {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
    )
    assert ok[0] == 200 and ok[1]["result"]["tools"]
    other = request(
        served.url, tools, {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    )
    assert other[0] == 400 and "differs" in other[1]["error"]["message"]
    unknown = request(served.url, tools, {"MCP-Protocol-Version": "1999-01-01"})
    assert (
        unknown[0] == 400 and "unsupported MCP-Protocol-Version" in unknown[1]["error"]["message"]
    )
    batch = request(served.url, [tools], {"MCP-Protocol-Version": "2025-06-18"})
    assert batch[0] == 400 and "batches" in batch[1]["error"]["message"]


def test_delete_ends_the_session(served):
    _result, session = initialize(served.url, LATEST_HANDSHAKE)
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LATEST_HANDSHAKE}
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    assert request(served.url, ping, headers)[:2] == (
        200,
        {"jsonrpc": "2.0", "id": 3, "result": {}},
    )
    assert request(served.url, None, headers, method="DELETE")[0] == 204
    assert session not in served.sessions
    assert request(served.url, ping, headers)[0] == 404  # the session is gone
    assert request(served.url, None, headers, method="DELETE")[0] == 404
    assert request(served.url, None, {}, method="DELETE")[0] == 400


def test_get_is_refused_and_foreign_origins_are_forbidden(served):
    status, _body, headers = request(served.url, method="GET")
    assert status == 405 and "POST" in headers["Allow"]
    tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert request(served.url, tools, {"Origin": "https://evil.example"})[0] == 403
    assert request(served.url, tools, {"Origin": "http://localhost:3000"})[0] == 200


# --- the modern revision (per-request version, no session) ------------------------------


def test_discover_names_the_supported_versions(served):
    status, reply, headers = request(
        served.url, modern("server/discover"), modern_headers("server/discover")
    )
    assert status == 200 and "Mcp-Session-Id" not in headers
    result = reply["result"]
    assert MODERN in result["supportedVersions"] and LATEST_HANDSHAKE in result["supportedVersions"]
    assert result["resultType"] == "complete" and result["capabilities"]["tools"] is not None
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "factory-calendar"


def test_an_unsupported_modern_version_is_refused_with_the_supported_list(served):
    body = modern("tools/list", version="1900-01-01")
    status, reply, _ = request(served.url, body, modern_headers("tools/list", "1900-01-01"))
    assert status == 400 and reply["error"]["code"] == -32022
    assert reply["error"]["data"]["requested"] == "1900-01-01"
    assert MODERN in reply["error"]["data"]["supported"]


def test_headers_must_mirror_the_body(served):
    body = modern("tools/call", {"name": "list_rooms", "arguments": {}})
    cases = [
        modern_headers("tools/call", name="list_rooms")
        | {"MCP-Protocol-Version": LATEST_HANDSHAKE},
        modern_headers("tools/list", name="list_rooms"),
        modern_headers("tools/call", name="find_user"),
        modern_headers("tools/call"),
    ]
    for headers in cases:
        status, reply, _ = request(served.url, body, headers)
        assert status == 400 and reply["error"]["code"] == -32020, headers
    assert served.log == []  # nothing ran
    encoded = "=?base64?bGlzdF9yb29tcw==?="  # "list_rooms" in the Base64 sentinel form
    status, reply, _ = request(served.url, body, modern_headers("tools/call", name=encoded))
    assert status == 200 and reply["result"]["isError"] is False


def test_modern_requests_need_client_capabilities_and_known_methods(served):
    body = modern("tools/list")
    del body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    status, reply, _ = request(served.url, body, modern_headers("tools/list"))
    assert status == 400 and reply["error"]["code"] == -32602
    for method in ("ping", "resources/list"):  # ping is gone from the modern revision
        status, reply, _ = request(served.url, modern(method), modern_headers(method))
        assert status == 404 and reply["error"]["code"] == -32601
    status, reply, _ = request(served.url, modern("tools/list"), modern_headers("tools/list"))
    assert status == 200 and reply["result"]["ttlMs"] == 0 and reply["result"]["tools"]
