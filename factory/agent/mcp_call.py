"""One MCP request over streamable HTTP, as a standalone stdlib script.

The harness runs this file's source inside the task container (``python3 -c SOURCE URL METHOD
PARAMS [TIMEOUT]``), since the URL in ``[[environment.mcp_servers]]`` is the one seen from inside it; it
prints the JSON-RPC ``result`` as one JSON line, or ``{"error": ...}`` and exits 1.

It speaks both eras of the protocol: first a stateless request in the newest revision
(``_meta`` and mirrored headers, one round trip); a server that answers with anything but a
recognised modern error is a handshake-era server, so the request is made again inside an
``initialize`` session, which is then ended with DELETE. ``tools/list`` follows ``nextCursor``.

Nothing here may import from factory: the file must run alone under any python3.
"""

from __future__ import annotations

import base64
import contextlib
import json
import sys
import urllib.error
import urllib.request

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
MODERN_ERRORS = (-32020, -32021, -32022)
CLIENT = {"name": "factory-harness", "version": "1"}
TIMEOUT = 30.0


class McpError(Exception):
    """The server failed the request (the message says how)."""


def _post(url: str, body: dict, headers: dict) -> tuple[int, dict | None, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, raw, got = response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        status, raw, got = exc.code, exc.read(), exc.headers
    kind = (got.get("Content-Type") or "").lower()
    return status, _decode(raw, kind, body.get("id")), {k.lower(): v for k, v in got.items()}


def _decode(raw: bytes, kind: str, request_id: object) -> dict | None:
    """The JSON-RPC answer in a body: plain JSON, or the response event of an SSE stream."""
    text = raw.decode("utf-8", errors="replace")
    if "text/event-stream" in kind:
        for block in text.split("\n\n"):
            data = "\n".join(
                line[5:].lstrip() for line in block.splitlines() if line.startswith("data:")
            )
            try:
                message = json.loads(data) if data else None
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == request_id:
                return message
        return None
    try:
        message = json.loads(text) if text.strip() else None
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _modern(url: str, method: str, params: dict, request_id: int) -> tuple[int, dict | None]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT,
    }
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": meta},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if "name" in params:
        name = str(params["name"])
        headers["Mcp-Name"] = name if name.isascii() and name.isprintable() else _base64(name)
    status, reply, _ = _post(url, body, headers)
    return status, reply


def _base64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


class _Session:
    """A handshake-era session: initialize, requests, DELETE."""

    def __init__(self, url: str) -> None:
        self.url = url
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": CLIENT},
        }
        status, reply, headers = _post(url, body, {})
        result = _result(status, reply, "initialize")
        self.headers = {"MCP-Protocol-Version": str(result.get("protocolVersion", HANDSHAKE))}
        if headers.get("mcp-session-id"):
            self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers)

    def request(self, method: str, params: dict, request_id: int) -> dict:
        status, reply, _ = self._send(method, params, request_id)
        return _result(status, reply, method)

    def request_raw(self, method: str, params: dict, request_id: int) -> dict | None:
        return self._send(method, params, request_id)[1]

    def _send(self, method: str, params: dict, request_id: int):
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return _post(self.url, body, self.headers)

    def close(self) -> None:
        if "Mcp-Session-Id" not in self.headers:
            return
        request = urllib.request.Request(self.url, method="DELETE", headers=self.headers)
        # 405: the server keeps its sessions to itself; 404: it forgot this one already
        with contextlib.suppress(urllib.error.URLError, OSError):
            urllib.request.urlopen(request, timeout=TIMEOUT).close()


def _result(status: int, reply: dict | None, method: str) -> dict:
    if reply is None:
        raise McpError(f"{method}: HTTP {status} without a JSON-RPC answer")
    if "error" in reply:
        error = reply["error"] or {}
        raise McpError(f"{method}: {error.get('message', error)} (code {error.get('code')})")
    result = reply.get("result")
    if not isinstance(result, dict):
        raise McpError(f"{method}: the answer has no result")
    return result


def _is_modern_error(reply: dict | None) -> bool:
    code = ((reply or {}).get("error") or {}).get("code")
    return code in MODERN_ERRORS


def request(url: str, method: str, params: dict) -> dict:
    """The result of one MCP request (all pages of ``tools/list``); raises McpError."""
    status, reply = _modern(url, method, params, 1)
    if 200 <= status < 300 and reply is not None and "result" in reply:
        first = _result(status, reply, method)
        return _more_pages(first, method, params, lambda p, i: _modern(url, method, p, i))
    if _is_modern_error(reply):
        _result(status, reply, method)  # raises with the server's reason
    session = _Session(url)
    try:
        first = session.request(method, params, 1)
        return _more_pages(
            first, method, params, lambda p, i: (200, session.request_raw(method, p, i))
        )
    finally:
        session.close()


def _more_pages(first: dict, method: str, params: dict, ask) -> dict:
    """``tools/list``: the first page plus the ones ``nextCursor`` leads to."""
    if method != "tools/list":
        return first
    tools = list(first.get("tools", []))
    cursor, page = first.get("nextCursor"), 2
    while cursor and page < 100:
        more = _result(*ask({**params, "cursor": cursor}, page), method)
        tools += more.get("tools", [])
        cursor, page = more.get("nextCursor"), page + 1
    return {**first, "tools": tools}


def main(argv: list[str]) -> int:
    global TIMEOUT
    if len(argv) not in (3, 4):
        print(json.dumps({"error": "usage: URL METHOD PARAMS-JSON [TIMEOUT-SECONDS]"}))
        return 2
    url, method, params = argv[0], argv[1], json.loads(argv[2])
    if len(argv) == 4:
        TIMEOUT = float(argv[3])
    try:
        print(json.dumps(request(url, method, params)))
    except (McpError, OSError, ValueError) as exc:
        print(json.dumps({"error": str(exc)}))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
