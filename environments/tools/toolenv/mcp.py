"""MCP over streamable HTTP for the tool server (``POST /mcp``, ``DELETE /mcp``; stdlib only).

A dual-era server (MCP "Versioning and Compatibility"): a request whose params carry
``_meta["io.modelcontextprotocol/protocolVersion"]`` is served statelessly under the modern
revision; an ``initialize`` opens a session under the handshake revision it negotiates
(Mcp-Session-Id, ended by DELETE). Only tools are offered; no server-initiated messages, so
every answer is one JSON object and GET (the optional SSE stream) is refused with 405.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class Service(Protocol):
    """What the endpoint needs of the server's service (:class:`.server.ToolService`)."""

    backend: Any
    """The server's backend: ``name``, ``policy`` and ``mcp_tools()`` are used here."""

    def call(self, name: str, arguments: Any) -> dict: ...


HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Revisions negotiated with ``initialize``, oldest first."""
MODERN_VERSIONS = ("2026-07-28",)
"""Revisions that carry the version on every request (no handshake, no session)."""
SUPPORTED_VERSIONS = (*HANDSHAKE_VERSIONS, *MODERN_VERSIONS)
HEADERLESS_VERSION = "2025-03-26"
"""What a request without ``MCP-Protocol-Version`` speaks (the header came in 2025-06-18)."""
BATCHING_UNTIL = "2025-03-26"
"""JSON-RPC batches were removed in 2025-06-18."""
MAX_SESSIONS = 1024
"""Open sessions kept; beyond this the oldest is forgotten (bounded memory)."""

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SESSION_NOT_FOUND = -32001
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def negotiate_version(requested: Any) -> str:
    """The handshake revision to answer an ``initialize`` with: the client's when this server
    supports it, else the newest this server supports (the client then decides)."""
    return requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]


@dataclass
class HttpReply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class McpEndpoint:
    """``/mcp``: JSON-RPC over streamable HTTP for both protocol eras (see above)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.sessions: OrderedDict[str, str] = OrderedDict()
        """Session id -> the handshake revision negotiated for it."""
        self._lock = threading.Lock()

    @property
    def server_info(self) -> dict:
        return {"name": f"factory-{self.service.backend.name}", "version": "1"}

    # --- HTTP verbs -------------------------------------------------------------------
    def post(self, headers: Mapping[str, str], raw: bytes) -> HttpReply:
        refused = _check_origin(headers)
        if refused:
            return refused
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError as exc:
            return HttpReply(400, _rpc_error(None, PARSE_ERROR, f"parse error: {exc}"))
        if isinstance(body, list):
            return self._batch(headers, body)
        if not isinstance(body, dict):
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, "send a JSON-RPC message"))
        if "method" not in body:  # a response to a server request: this server sends none
            return HttpReply(202)
        params = body.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and META_VERSION in meta:
            return self._modern(headers, body, meta)
        return self._legacy(headers, body)

    def delete(self, headers: Mapping[str, str]) -> HttpReply:
        """End a session (handshake revisions)."""
        refused = _check_origin(headers)
        if refused:
            return refused
        session = headers.get("Mcp-Session-Id")
        if not session:
            message = "DELETE needs the Mcp-Session-Id of the session to end"
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, message))
        with self._lock:
            if self.sessions.pop(session, None) is None:
                return HttpReply(404, _rpc_error(None, SESSION_NOT_FOUND, "session not found"))
        return HttpReply(204)

    # --- handshake era ------------------------------------------------------------------
    def _legacy(self, headers: Mapping[str, str], message: dict) -> HttpReply:
        if message.get("method") == "initialize":
            return self._initialize(message)
        problem = self._legacy_problem(headers)
        if problem:
            return problem
        reply = self._answer(message, modern=False)
        return HttpReply(202) if reply is None else HttpReply(200, reply)

    def _initialize(self, message: dict) -> HttpReply:
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if "id" not in message:
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, "initialize needs an id"))
        version = negotiate_version(params.get("protocolVersion"))
        session = uuid.uuid4().hex
        with self._lock:
            self.sessions[session] = version
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": self.server_info,
            "instructions": self.service.backend.policy,
        }
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return HttpReply(200, reply, {"Mcp-Session-Id": session})

    def _legacy_problem(self, headers: Mapping[str, str]) -> HttpReply | None:
        """A reason to refuse a handshake-era request (unknown session, wrong version)."""
        session = headers.get("Mcp-Session-Id")
        with self._lock:
            negotiated = self.sessions.get(session) if session else None
        if session and negotiated is None:
            text = "session not found (it ended, or the server restarted): initialize again"
            return HttpReply(404, _rpc_error(None, SESSION_NOT_FOUND, text))
        version = headers.get("MCP-Protocol-Version")
        if version is not None and version not in HANDSHAKE_VERSIONS:
            text = f"unsupported MCP-Protocol-Version {version!r}; supported: {HANDSHAKE_VERSIONS}"
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, text))
        if version is not None and negotiated is not None and version != negotiated:
            text = f"MCP-Protocol-Version {version} differs from this session's {negotiated}"
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, text))
        return None

    def _batch(self, headers: Mapping[str, str], messages: list) -> HttpReply:
        version = headers.get("MCP-Protocol-Version") or HEADERLESS_VERSION
        newer = HANDSHAKE_VERSIONS.index(BATCHING_UNTIL) + 1
        if version not in HANDSHAKE_VERSIONS[:newer]:
            text = f"JSON-RPC batches are not part of MCP {version}: send one message per POST"
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, text))
        if not messages or not all(isinstance(m, dict) for m in messages):
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, "invalid batch"))
        if any(m.get("method") == "initialize" for m in messages):
            text = "initialize must be sent on its own"
            return HttpReply(400, _rpc_error(None, INVALID_REQUEST, text))
        problem = self._legacy_problem(headers)
        if problem:
            return problem
        replies = [r for r in (self._answer(m, modern=False) for m in messages) if r is not None]
        return HttpReply(200, replies) if replies else HttpReply(202)

    # --- modern era ---------------------------------------------------------------------
    def _modern(self, headers: Mapping[str, str], message: dict, meta: dict) -> HttpReply:
        request_id = message.get("id")
        version = meta[META_VERSION]
        if version not in MODERN_VERSIONS:
            error = _rpc_error(request_id, UNSUPPORTED_VERSION, "Unsupported protocol version")
            error["error"]["data"] = {"supported": list(SUPPORTED_VERSIONS), "requested": version}
            return HttpReply(400, error)
        mismatch = _header_mismatch(headers, message, version)
        if mismatch:
            return HttpReply(400, _rpc_error(request_id, HEADER_MISMATCH, mismatch))
        if not isinstance(meta.get(META_CAPABILITIES), dict):
            text = f"_meta must carry {META_CAPABILITIES} (an object)"
            return HttpReply(400, _rpc_error(request_id, INVALID_PARAMS, text))
        reply = self._answer(message, modern=True)
        if reply is None:
            return HttpReply(202)
        failed = reply.get("error", {}).get("code") == METHOD_NOT_FOUND
        return HttpReply(404 if failed else 200, reply)

    # --- methods ------------------------------------------------------------------------
    def _answer(self, message: dict, *, modern: bool) -> dict | None:
        """The JSON-RPC reply to one message (None for a notification)."""
        if "id" not in message:
            return None
        request_id, method = message["id"], message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        backend = self.service.backend
        result: dict
        if method == "tools/list":
            result = {"tools": backend.mcp_tools()}
            if modern:
                result.update(ttlMs=0, cacheScope="private")
        elif method == "tools/call":
            name = params.get("name")
            if not isinstance(name, str):
                return _rpc_error(request_id, INVALID_PARAMS, "tools/call needs a tool name")
            known = {tool["name"] for tool in backend.mcp_tools()}
            outcome = self.service.call(name, params.get("arguments") or {})
            if name not in known:  # a protocol error, still logged like any call
                return _rpc_error(request_id, INVALID_PARAMS, f"Unknown tool: {name}")
            body = outcome.get("result") if outcome["ok"] else outcome.get("error")
            result = {
                "content": [{"type": "text", "text": json.dumps(body, sort_keys=True)}],
                "isError": not outcome["ok"],
            }
        elif method == "server/discover" and modern:
            result = {
                "supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": {"tools": {"listChanged": False}},
                "instructions": backend.policy,
                "ttlMs": 0,
                "cacheScope": "private",
            }
        elif method == "ping" and not modern:
            result = {}
        else:
            return _rpc_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        if modern:
            result["resultType"] = "complete"
            result["_meta"] = {META_SERVER_INFO: self.server_info}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _rpc_error(request_id: Any, code: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}


def _check_origin(headers: Mapping[str, str]) -> HttpReply | None:
    """403 for a page from another origin (DNS rebinding): only local origins may call."""
    origin = headers.get("Origin")
    if not origin:
        return None
    try:
        host = urllib.parse.urlsplit(origin).hostname
    except ValueError:
        host = None
    if host in LOCAL_HOSTS:
        return None
    return HttpReply(403, _rpc_error(None, INVALID_REQUEST, f"origin {origin} is not allowed"))


def _decoded_header(value: str) -> str:
    """A header value in MCP's Base64 sentinel form (``=?base64?...?=``), decoded."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return "\ufffd"  # cannot match any body value
    return value


def _header_mismatch(headers: Mapping[str, str], message: dict, version: str) -> str | None:
    """Why the modern request's mirrored headers disagree with its body (None: they agree)."""
    sent = headers.get("MCP-Protocol-Version")
    if sent != version:
        return f"Header mismatch: MCP-Protocol-Version {sent!r}, body {version!r}"
    method = headers.get("Mcp-Method")
    if method != message.get("method"):
        return f"Header mismatch: Mcp-Method {method!r}, body {message.get('method')!r}"
    if message.get("method") == "tools/call":
        name = headers.get("Mcp-Name")
        wanted = (message.get("params") or {}).get("name")
        if name is None or _decoded_header(name) != wanted:
            return f"Header mismatch: Mcp-Name {name!r}, body {wanted!r}"
    return None
