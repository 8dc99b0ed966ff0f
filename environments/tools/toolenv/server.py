"""The tool server inside a task container (stdlib only).

Endpoints (all JSON):

* ``GET /health``            ``{"ok": true, "domain": ...}`` once the server is up.
* ``GET /tools``             the tools in OpenAI's tool-calling format (``{"tools": [...]}``).
* ``GET /policy``            the policy document the agent must follow.
* ``POST /call``             ``{"name": ..., "arguments": {...}}`` (arguments may also be a JSON
                             string, as OpenAI's ``tool_calls`` carry them) -> the call's result.
* ``POST /mcp``              MCP over streamable HTTP (JSON responses, no SSE), both eras of the
                             protocol: ``server/discover`` and stateless requests (2026-07-28),
                             or ``initialize`` -> a session (2024-11-05 .. 2025-11-25);
                             ``tools/list``, ``tools/call`` (and ``ping`` in a session);
                             see :mod:`.mcp`.
* ``DELETE /mcp``            end the session named by ``Mcp-Session-Id``.

Control endpoints are never on the TCP port, which the agent can reach: with
``--admin-socket PATH`` they are served on a unix socket there (the server runs as its own user
and creates the socket inside a folder only that user and root can enter):

* ``GET /state``             the verifier's view: current state and the call log.
* ``POST /reset``            back to the initial state with an empty log (one rollout -> next).
* ``GET /health``            as above.

Without ``--admin-socket`` (imported BFCL tasks) ``GET /state`` is also answered on the TCP
port and there is no reset.

Every call is appended to ``--log`` (JSONL) and the state is written to ``--state-out`` after
each change, so a crash or a restart never loses what the agent did; a verifier (root) reads
those two files, which only the server's user can write.

What answers the calls is a :class:`Backend`: by default a :class:`~.core.Domain` bound to a JSON
state (``--domain NAME --state FILE``, the tool families); ``--backend bfcl --config FILE`` serves
an imported BFCL task instead (:mod:`.bfcl_backend`, shipped only in those tasks).
"""

from __future__ import annotations

import argparse
import json
import os
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from .core import Environment, load_domain
from .mcp import HttpReply, McpEndpoint


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


class JsonHandler(BaseHTTPRequestHandler):
    """JSON replies, no request logging (the call log is the record)."""

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

    def _reply(self, reply: HttpReply) -> None:
        self._send(reply.status, reply.body, reply.headers)

    def _raw(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


ADMIN_ONLY = "is a control endpoint: it is served only on the server's admin socket"


def make_handler(service: ToolService, *, serve_state: bool = True) -> type[JsonHandler]:
    """The handler of the agent-facing port. ``serve_state``: also answer ``GET /state`` (only
    for servers without an admin socket); ``/reset`` is never served here."""
    mcp = McpEndpoint(service)

    class Handler(JsonHandler):
        endpoint = mcp
        """The MCP side (its open sessions), for whoever holds the handler class."""

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            backend = service.backend
            if self.path == "/health":
                self._send(200, {"ok": True, "domain": backend.name})
            elif self.path == "/tools":
                self._send(200, {"tools": backend.openai_tools()})
            elif self.path == "/policy":
                self._send(200, {"policy": backend.policy})
            elif self.path == "/state" and serve_state:
                self._send(200, service.snapshot())
            elif self.path == "/state":
                self._send(404, {"error": f"{self.path} {ADMIN_ONLY}"})
            elif self.path == "/mcp":
                text = "no server-initiated stream here: POST requests, DELETE ends a session"
                self._send(405, {"error": text}, {"Allow": "POST, DELETE"})
            else:
                self._send(404, {"error": f"no such endpoint: {self.path}"})

        def do_DELETE(self) -> None:  # noqa: N802 - http.server API
            self._raw()
            if self.path == "/mcp":
                self._reply(mcp.delete(self.headers))
            else:
                self._send(405, {"error": f"DELETE is only for /mcp, not {self.path}"})

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            raw = self._raw()
            if self.path == "/mcp":
                self._reply(mcp.post(self.headers, raw))
                return
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError as exc:
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
                self._send(404, {"ok": False, "error": f"{self.path} {ADMIN_ONLY}"})
            else:
                self._send(404, {"error": f"no such endpoint: {self.path}"})

    return Handler


def make_admin_handler(service: ToolService) -> type[JsonHandler]:
    """The handler of the admin socket: the verifier's view and the reset."""

    class AdminHandler(JsonHandler):
        def address_string(self) -> str:  # a unix socket peer has no host
            return "admin"

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            if self.path == "/health":
                self._send(200, {"ok": True, "domain": service.backend.name})
            elif self.path == "/state":
                self._send(200, service.snapshot())
            else:
                self._send(404, {"error": f"no such admin endpoint: {self.path}"})

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            self._raw()
            if self.path == "/reset":
                service.reset()
                self._send(200, {"ok": True})
            else:
                self._send(404, {"error": f"no such admin endpoint: {self.path}"})

    return AdminHandler


class UnixHttpServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """HTTP on a unix socket, readable and writable by its owner only."""

    daemon_threads = True

    def server_bind(self) -> None:
        path = Path(self.server_address)
        if path.is_socket():
            path.unlink()  # left by an earlier run of this server
        old = os.umask(0o177)
        try:
            super().server_bind()
        finally:
            os.umask(old)


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


def serve(
    backend: Backend,
    port: int,
    log: Path | None,
    state_out: Path | None,
    admin_socket: Path | None = None,
) -> None:
    service = ToolService(backend, log, state_out)
    if admin_socket is not None:
        admin = UnixHttpServer(str(admin_socket), make_admin_handler(service))
        threading.Thread(target=admin.serve_forever, name="admin", daemon=True).start()
    handler = make_handler(service, serve_state=admin_socket is None)
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    server.serve_forever()


def drop_privileges(user: str) -> None:
    """Become ``user`` (from root), with only its own group; a no-op when already ``user``."""
    import pwd

    entry = pwd.getpwnam(user)
    if os.geteuid() == entry.pw_uid:
        return
    if os.geteuid() != 0:
        raise SystemExit(f"server: --user {user} needs to be started as root")
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
    os.environ["HOME"] = entry.pw_dir


def parse_server_args(
    parser: argparse.ArgumentParser,
    argv: list[str] | None,
    admin_help: str = "serve /state and /reset on this unix socket only",
) -> argparse.Namespace:
    """``parser`` (which holds a server's own options) with the options every server takes
    (--port, --log, --state-out, --admin-socket, --user), applied to ``argv``; with ``--user``,
    the process has become that user before this returns (before any file is read)."""
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log", type=Path, help="append every call here (JSONL)")
    parser.add_argument("--state-out", type=Path, help="write the current state here")
    parser.add_argument("--admin-socket", type=Path, help=admin_help)
    parser.add_argument("--user", help="started as root: run as this user from the start")
    args = parser.parse_args(argv)
    if args.user:
        drop_privileges(args.user)
    return args


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a tool domain over HTTP and MCP.")
    parser.add_argument("--backend", default="domain", choices=("domain", "bfcl"))
    parser.add_argument("--domain", help="domain module (--backend domain)")
    parser.add_argument("--state", type=Path, help="initial state, JSON (--backend domain)")
    parser.add_argument("--config", type=Path, help="task file (--backend bfcl)")
    args = parse_server_args(parser, argv)
    backend = make_backend(args.backend, domain=args.domain, state=args.state, config=args.config)
    serve(backend, args.port, args.log, args.state_out, args.admin_socket)


if __name__ == "__main__":
    main()
