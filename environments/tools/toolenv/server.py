"""The tool server inside a task container (stdlib only).

Endpoints (all JSON):

* ``GET /health``            ``{"ok": true, "domain": ...}`` once the server is up.
* ``GET /tools``             the tools in OpenAI's tool-calling format (``{"tools": [...]}``).
* ``GET /policy``            the policy document the agent must follow.
* ``POST /call``             ``{"name": ..., "arguments": {...}}`` (arguments may also be a JSON
                             string, as OpenAI's ``tool_calls`` carry them) -> the call's result.
* ``POST /mcp``              MCP over streamable HTTP (JSON responses, no SSE): ``initialize``,
                             ``ping``, ``tools/list``, ``tools/call``; notifications get 202.
* ``GET /state``             the verifier's view: current state and the call log.
* ``POST /reset``            back to the initial state with an empty log (one rollout -> next).

Every call is appended to ``--log`` (JSONL) and the state is written to ``--state-out`` after
each change, so a crash or a restart never loses what the agent did.

What answers the calls is a :class:`Backend`: by default a :class:`~.core.Domain` bound to a JSON
state (``--domain NAME --state FILE``, the tool families); ``--backend bfcl --config FILE`` serves
an imported BFCL task instead (:mod:`.bfcl_backend`, shipped only in those tasks).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from .core import Environment, load_domain

MCP_PROTOCOL_VERSION = "2025-03-26"


class Backend(Protocol):
    """What the server needs from whatever executes the calls."""

    name: str
    policy: str
    """Text for ``GET /policy`` and the MCP ``instructions``."""

    @property
    def log(self) -> list[dict]:
        """Every call so far, oldest first; :meth:`call` appends one entry."""
        ...

    def openai_tools(self) -> list[dict]: ...

    def mcp_tools(self) -> list[dict]: ...

    def call(self, name: str, arguments: Any) -> dict:
        """Run one call: ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ...}``."""
        ...

    def changes_state(self, name: str, outcome: dict) -> bool:
        """Whether the call just made may have changed the state (it is then persisted)."""
        ...

    def snapshot(self) -> dict:
        """The verifier's view: ``{"state": ..., "log": [...]}``."""
        ...

    def reset(self) -> None: ...


class DomainBackend:
    """A :class:`Domain` bound to a JSON state (an :class:`Environment`)."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.name = env.domain.name
        self.policy = env.domain.policy

    @property
    def log(self) -> list[dict]:
        return self.env.log

    def openai_tools(self) -> list[dict]:
        return [t.openai() for t in self.env.domain.tools.values()]

    def mcp_tools(self) -> list[dict]:
        return [t.mcp() for t in self.env.domain.tools.values()]

    def call(self, name: str, arguments: Any) -> dict:
        return self.env.call(name, arguments)

    def changes_state(self, name: str, outcome: dict) -> bool:
        tool = self.env.domain.tools.get(name)
        return bool(outcome["ok"]) and tool is not None and tool.mutates

    def snapshot(self) -> dict:
        return {"state": self.env.state, "log": self.env.log}

    def reset(self) -> None:
        self.env.reset()


class ToolService:
    """A backend plus persistence, shared by all request threads."""

    def __init__(self, backend: Backend, log_path: Path | None, state_path: Path | None) -> None:
        self.backend = backend
        self.log_path = log_path
        self.state_path = state_path
        self.lock = threading.Lock()
        self._persist_state()

    def call(self, name: str, arguments: Any) -> dict:
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return {"ok": False, "error": f"arguments are not valid JSON: {exc}"}
        with self.lock:
            result = self.backend.call(name, {} if arguments is None else arguments)
            if self.log_path:
                with self.log_path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(self.backend.log[-1], sort_keys=True) + "\n")
            if self.backend.changes_state(name, result):
                self._persist_state()
        return result

    def reset(self) -> None:
        with self.lock:
            self.backend.reset()
            if self.log_path:
                self.log_path.write_text("", encoding="utf-8")
            self._persist_state()

    def snapshot(self) -> dict:
        with self.lock:
            return self.backend.snapshot()

    def _persist_state(self) -> None:
        if self.state_path is None:
            return
        tmp = self.state_path.with_suffix(".tmp")
        state = self.backend.snapshot()["state"]
        tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.state_path)

    # --- MCP ----------------------------------------------------------------------------
    def mcp(self, message: dict) -> dict | None:
        """Answer one JSON-RPC message (None for notifications)."""
        method = message.get("method")
        if "id" not in message:
            return None
        params = message.get("params") or {}
        backend = self.backend
        if method == "initialize":
            result: Any = {
                "protocolVersion": params.get("protocolVersion", MCP_PROTOCOL_VERSION),
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": f"factory-{backend.name}", "version": "1"},
                "instructions": backend.policy,
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": backend.mcp_tools()}
        elif method == "tools/call":
            outcome = self.call(str(params.get("name", "")), params.get("arguments") or {})
            body = outcome.get("result") if outcome["ok"] else outcome.get("error")
            result = {
                "content": [{"type": "text", "text": json.dumps(body, sort_keys=True)}],
                "isError": not outcome["ok"],
            }
        else:
            return _rpc_error(message["id"], -32601, f"method not found: {method}")
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _rpc_error(request_id: Any, code: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}


def make_handler(service: ToolService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            return

        def _send(self, status: int, body: Any = None, headers: dict | None = None) -> None:
            data = b"" if body is None else json.dumps(body, sort_keys=True).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            return json.loads(raw) if raw.strip() else {}

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            backend = service.backend
            if self.path == "/health":
                self._send(200, {"ok": True, "domain": backend.name})
            elif self.path == "/tools":
                self._send(200, {"tools": backend.openai_tools()})
            elif self.path == "/policy":
                self._send(200, {"policy": backend.policy})
            elif self.path == "/state":
                self._send(200, service.snapshot())
            elif self.path == "/mcp":
                self._send(405, {"error": "this server answers POST only (no SSE stream)"})
            else:
                self._send(404, {"error": f"no such endpoint: {self.path}"})

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            try:
                body = self._body()
            except (json.JSONDecodeError, ValueError) as exc:
                if self.path == "/mcp":
                    self._send(400, _rpc_error(None, -32700, f"parse error: {exc}"))
                else:
                    self._send(400, {"ok": False, "error": f"body is not JSON: {exc}"})
                return
            if self.path == "/call":
                if not isinstance(body, dict) or "name" not in body:
                    self._send(
                        400, {"ok": False, "error": 'send {"name": ..., "arguments": {...}}'}
                    )
                    return
                self._send(200, service.call(str(body["name"]), body.get("arguments", {})))
            elif self.path == "/reset":
                service.reset()
                self._send(200, {"ok": True})
            elif self.path == "/mcp":
                self._mcp(body)
            else:
                self._send(404, {"error": f"no such endpoint: {self.path}"})

        def _mcp(self, body: Any) -> None:
            messages = body if isinstance(body, list) else [body]
            if not all(isinstance(m, dict) for m in messages):
                self._send(400, _rpc_error(None, -32600, "invalid request"))
                return
            replies = [r for r in (service.mcp(m) for m in messages) if r is not None]
            headers = {}
            if any(m.get("method") == "initialize" for m in messages):
                headers["Mcp-Session-Id"] = "factory-tool-session"
            if not replies:
                self._send(202, None, headers)
            else:
                self._send(200, replies if isinstance(body, list) else replies[0], headers)

    return Handler


def make_backend(
    backend: str, *, domain: str | None, state: Path | None, config: Path | None
) -> Backend:
    """The backend named by the command line (see the module docstring)."""
    if backend == "domain":
        if domain is None or state is None:
            raise SystemExit("server: --backend domain needs --domain and --state")
        env = Environment(load_domain(domain), json.loads(state.read_text(encoding="utf-8")))
        return DomainBackend(env)
    if backend == "bfcl":
        if config is None:
            raise SystemExit("server: --backend bfcl needs --config")
        from .bfcl_backend import BfclBackend  # only BFCL tasks ship it

        return BfclBackend.from_file(config)
    raise SystemExit(f"server: unknown backend {backend!r} (domain or bfcl)")


def serve(backend: Backend, port: int, log: Path | None, state_out: Path | None) -> None:
    service = ToolService(backend, log, state_out)
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(service))
    server.daemon_threads = True
    server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a tool domain over HTTP and MCP.")
    parser.add_argument("--backend", default="domain", choices=("domain", "bfcl"))
    parser.add_argument("--domain", help="domain module (--backend domain)")
    parser.add_argument("--state", type=Path, help="initial state, JSON (--backend domain)")
    parser.add_argument("--config", type=Path, help="task file (--backend bfcl)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log", type=Path, help="append every call here (JSONL)")
    parser.add_argument("--state-out", type=Path, help="write the current state here")
    args = parser.parse_args(argv)
    backend = make_backend(args.backend, domain=args.domain, state=args.state, config=args.config)
    serve(backend, args.port, args.log, args.state_out)


if __name__ == "__main__":
    main()
