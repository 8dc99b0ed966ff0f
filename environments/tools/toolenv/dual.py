"""Dual control (tau2-bench's idea, adapted): the customer holds part of the state and acts on it
with tools of their own, which the agent cannot call; the agent has to ask them.

A dual domain adds to a domain (:data:`DUALS`): the customer-side state it seeds, the
customer's tools (their banking app), agent tools that reach that state, guards on agent tools
(a step fails until the customer has done their part) and a policy section. Banking: before
``verify_identity`` the agent sends a sign-in request to the customer's app
(``send_app_sign_in``); only the customer can approve it (``approve_sign_in``, on their phone),
and ``verify_identity`` fails until they have.

The customer's tools run through :meth:`DualEnvironment.customer_call` (logged with ``"by":
"customer"``). In a task container ``python3 -m toolenv.dual`` serves the domain with:

* ``POST /say`` on the agent's port (``say MESSAGE`` in the shell): the scripted customer of the
  task (its profile, ``--customer``, kept in the server's own folder) answers, and does on its
  side what its script says when the agent asks for it (the task needs no harness to certify);
* ``POST /customer-call`` on the admin socket (root only): a customer tool, for a harness whose
  own simulated customer (scripted or a model) decided to use it;
* ``POST /customer-hangup`` on the admin socket (root only): a harness with its own customer
  takes the line, and ``/say`` on the agent's port stops answering (the agent could otherwise
  reach the scripted customer with ``curl`` or the ``say`` program in a command, and have them
  approve without ever convincing the harness's customer);

and everything else as :mod:`.server`. Shipped only in dual-control tasks; standard library only.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .core import JSON, Domain, Environment, Tool, ToolError, find, load_domain, require

TASK_TAG = "dual-control"
"""The tag factory gives a task of this mode (its in-process episodes read it)."""
SOCKET = "/run/toolenv/admin.sock"
HANGUP = "/customer-hangup"


@dataclass
class Dual:
    """What dual control adds to a domain."""

    policy: str
    """A section appended to the domain's policy."""
    customer_tools: dict[str, Tool] = field(default_factory=dict)
    agent_tools: dict[str, Tool] = field(default_factory=dict)
    guards: dict[str, Callable[[JSON, JSON], None]] = field(default_factory=dict)
    """Agent tool -> a check (state, arguments) that raises ToolError before it runs."""


def _tool(
    registry: dict[str, Tool], description: str, properties: JSON | None = None, mutates=True
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        props = properties or {}
        schema = {
            "type": "object",
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        }
        registry[fn.__name__] = Tool(fn.__name__, description, schema, fn, mutates)
        return fn

    return wrap


# --- banking: sign-in approved in the customer's app -------------------------------------------

BANKING = Dual(
    policy="""# Signing in through the banking app

Customers confirm who they are in the bank's app on their phone. Before `verify_identity`,
send a sign-in request to the customer's app with `send_app_sign_in` and ask the customer to
approve it there; only they can approve it, and `verify_identity` fails until they have. Never
ask for the app's passcode or try to approve the request yourself.
"""
)


def _app(state: JSON, customer_id: str) -> JSON:
    app = state.get("app")
    require(
        isinstance(app, dict) and app.get("customer_id") == customer_id,
        f"customer {customer_id} has no banking app registered",
    )
    return app


@_tool(
    BANKING.agent_tools,
    "Send a sign-in request to the customer's banking app, for them to approve there.",
    {"customer_id": {"type": "string"}},
)
def send_app_sign_in(state: JSON, customer_id: str) -> JSON:
    find(state["customers"], "customer_id", customer_id, "customer")
    app = _app(state, customer_id)
    require(app["sign_in"] != "approved", "the customer has already approved a sign-in")
    app["sign_in"] = "pending"
    return {"sent": True, "customer_id": customer_id}


@_tool(BANKING.customer_tools, "Approve the sign-in request shown in the banking app.")
def approve_sign_in(state: JSON) -> JSON:
    app = state.get("app") or {}
    require(app.get("sign_in") == "pending", "there is no sign-in request in the app to approve")
    app["sign_in"] = "approved"
    return {"approved": True}


@_tool(BANKING.customer_tools, "What the banking app shows.", mutates=False)
def open_app(state: JSON) -> JSON:
    app = state.get("app") or {}
    shown = {"pending": "a sign-in request", "approved": "signed in"}.get(app.get("sign_in"), "")
    return {"screen": shown or "nothing new"}


def _approved_first(state: JSON, arguments: JSON) -> None:
    app = state.get("app") or {}
    if app.get("customer_id") == arguments.get("customer_id") and app.get("sign_in") != "approved":
        raise ToolError(
            "the customer has not approved a sign-in in their banking app: send one with "
            "send_app_sign_in and ask them to approve it"
        )


BANKING.guards["verify_identity"] = _approved_first

DUALS: dict[str, Dual] = {"banking": BANKING}


def dual_domain(domain: Domain) -> Domain:
    """``domain`` with its dual part: the agent's extra tools and guards, the policy section."""
    dual = DUALS.get(domain.name)
    if dual is None:
        raise ValueError(f"domain {domain.name} has no dual-control variant")
    out = copy.copy(domain)  # no __post_init__: the policy's handover section stays once
    out.policy = domain.policy.rstrip() + "\n\n" + dual.policy
    tools = dict(domain.tools)
    for name, guard in dual.guards.items():
        tools[name] = _guarded(tools[name], guard)
    handover = {k: tools.pop(k) for k in list(tools) if k == "transfer_to_human"}
    out.tools = {**tools, **dual.agent_tools, **handover}
    out.rules = [_except(rule, set(dual.agent_tools)) for rule in domain.rules]
    return out


def _except(rule: Any, names: set[str]) -> Any:
    """``rule``, not asked about the dual part's own agent tools (it does not know them)."""

    def check(state: JSON, tool: str, arguments: JSON) -> str | None:
        return None if tool in names else rule(state, tool, arguments)

    return check


def _guarded(tool: Tool, guard: Callable[[JSON, JSON], None]) -> Tool:
    def run(state: JSON, **arguments: Any) -> Any:
        guard(state, arguments)
        return tool.fn(state, **arguments)

    return Tool(tool.name, tool.description, tool.parameters, run, tool.mutates)


class DualEnvironment(Environment):
    """An :class:`Environment` of a domain's dual variant, with the customer's tools."""

    def __init__(self, domain: Domain, state: JSON) -> None:
        dual = domain if _is_dual(domain) else dual_domain(domain)  # ValueError without one
        super().__init__(dual, state)
        self.customer_tools = DUALS[domain.name].customer_tools

    def customer_call(self, name: str, arguments: Any = None) -> JSON:
        """A call the customer makes on their side; logged with ``"by": "customer"``."""
        arguments = {} if arguments is None else arguments
        entry: JSON = {"tool": name, "arguments": arguments, "by": "customer"}
        tool = self.customer_tools.get(name)
        try:
            if tool is None:
                known = ", ".join(sorted(self.customer_tools))
                raise ToolError(f"the customer has no tool '{name}'; theirs: {known}")
            entry.update(ok=True, result=self.run_tool(tool, arguments))
        except (ToolError, TypeError) as exc:
            entry.update(ok=False, error=str(exc))
        self.log.append(entry)
        return {k: v for k, v in entry.items() if k in ("ok", "result", "error")}


def _is_dual(domain: Domain) -> bool:
    """Whether ``domain`` is already a dual variant (its dual agent tools are in)."""
    dual = DUALS.get(domain.name)
    return dual is not None and any(name in domain.tools for name in dual.agent_tools)


# --- the task's scripted customer, in the container --------------------------------------------


class ScriptedCustomer:
    """The profile's script (``tests/user.json``'s ``script``): for each message, the first
    rule for this reply's number or matching the message; a rule's ``act`` is a customer tool
    used before answering. (The host's ``factory.agent.user_sim.ScriptedUser``, in stdlib.)"""

    def __init__(self, profile: JSON) -> None:
        self.profile = profile
        self.replies = 0

    def answer(self, message: str) -> tuple[str, str | None]:
        """(the reply, the customer tool the rule uses or None)."""
        self.replies += 1
        for rule in self.profile.get("script", []):
            when = rule.get("when")
            if rule.get("turn") == self.replies or (
                when is not None and re.search(when, message, re.IGNORECASE)
            ):
                return rule["reply"], rule.get("act")
        return self.profile.get("default_reply", ""), None


class DualService:
    """The server's :class:`~.server.ToolService` plus the customer's side."""

    def __init__(self, service: Any, customer: ScriptedCustomer | None) -> None:
        self.service = service
        self.customer = customer
        self.hung_up = False

    def customer_call(self, name: str, arguments: Any = None) -> JSON:
        service = self.service
        with service.lock:
            env = service.backend.env
            result = env.customer_call(name, arguments)
            if service.log_path:
                with service.log_path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(env.log[-1], sort_keys=True) + "\n")
            if result["ok"]:
                service._persist_state()
        return result

    def hang_up(self) -> JSON:
        """The harness has the customer on its own line: the scripted one leaves for good."""
        self.customer = None
        self.hung_up = True
        return {"ok": True}

    def say(self, message: str) -> JSON:
        if self.hung_up:
            return {
                "ok": False,
                "error": "the customer is on your own line: write `say MESSAGE` as a line of "
                "its own (or use the say tool)",
            }
        if self.customer is None:
            return {"ok": False, "error": "nobody is on the line"}
        if not message.strip():
            return {"ok": False, "error": "say needs a message"}
        reply, act = self.customer.answer(message)
        if act:
            self.customer_call(act)
        return {"ok": True, "reply": reply}


def serve(
    backend: Any,
    customer: ScriptedCustomer | None,
    port: int,
    log: Path | None,
    state_out: Path | None,
    admin_socket: Path | None,
) -> None:
    from .server import ToolService, UnixHttpServer, make_admin_handler, make_handler

    service = ToolService(backend, log, state_out)
    dual = DualService(service, customer)
    if admin_socket is not None:
        admin_base = make_admin_handler(service)

        class Admin(admin_base):  # type: ignore[misc, valid-type]
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                if self.path == HANGUP:
                    self._raw()
                    self._send(200, dual.hang_up())
                    return
                if self.path != "/customer-call":
                    return super().do_POST()
                body = _body(self._raw())
                self._send(200, dual.customer_call(str(body.get("name")), body.get("arguments")))

        admin = UnixHttpServer(str(admin_socket), Admin)
        threading.Thread(target=admin.serve_forever, name="admin", daemon=True).start()
    base = make_handler(service, serve_state=admin_socket is None)

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            if self.path == "/customer-call":  # the customer's side is not the agent's
                self._raw()
                self._send(404, {"ok": False, "error": "no such endpoint: /customer-call"})
                return
            if self.path != "/say":
                return super().do_POST()
            body = _body(self._raw())
            self._send(200, dual.say(str(body.get("message", ""))))

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def _body(raw: bytes) -> JSON:
    try:
        body = json.loads(raw) if raw.strip() else {}
    except ValueError:
        body = {}
    return body if isinstance(body, dict) else {}


def customer_call_over_socket(name: str, socket_path: str = SOCKET) -> JSON:
    """``POST /customer-call`` on the admin socket (root): the customer uses tool ``name``."""
    return _admin_post("/customer-call", {"name": name, "arguments": {}}, socket_path)


def hang_up_over_socket(socket_path: str = SOCKET) -> JSON:
    """``POST /customer-hangup`` on the admin socket (root): the harness takes the line."""
    return _admin_post(HANGUP, {}, socket_path)


def _admin_post(path: str, payload: JSON, socket_path: str) -> JSON:
    body = json.dumps(payload).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(socket_path)
        head = (
            f"POST {path} HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


def say(message: str) -> int:
    """``say MESSAGE`` in the agent's shell: the customer's answer, printed."""
    import os
    import urllib.request

    base = os.environ.get("TOOL_SERVER", "http://127.0.0.1:8000")
    request = urllib.request.Request(
        base + "/say",
        data=json.dumps({"message": message}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
    except OSError as exc:
        print(f"say: the customer cannot be reached ({exc})", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        print(f"say: {answer.get('error')}", file=sys.stderr)
        return 1
    print(f"customer: {answer.get('reply') or '(no reply)'}")
    return 0


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["act"] and len(args) == 2:  # root: python3 -m toolenv.dual act NAME
        print(json.dumps(customer_call_over_socket(args[1])))
        return
    if args == ["hangup"]:  # root: python3 -m toolenv.dual hangup
        print(json.dumps(hang_up_over_socket()))
        return
    if args[:1] == ["say"]:  # the agent: python3 -m toolenv.dual say MESSAGE
        sys.exit(say(" ".join(args[1:])))
    from .server import DomainBackend, parse_server_args

    parser = argparse.ArgumentParser(description="Serve a tool domain with dual control.")
    parser.add_argument("--domain", required=True, help="domain module")
    parser.add_argument("--state", type=Path, required=True, help="initial state, JSON")
    parser.add_argument("--customer", type=Path, help="the scripted customer's profile, JSON")
    options = parse_server_args(parser, args, "state, reset, customer calls (root)")
    state = json.loads(options.state.read_text(encoding="utf-8"))
    profile = options.customer and json.loads(options.customer.read_text(encoding="utf-8"))
    customer = ScriptedCustomer(profile) if profile else None
    backend = DomainBackend(DualEnvironment(load_domain(options.domain), state))
    serve(backend, customer, options.port, options.log, options.state_out, options.admin_socket)


if __name__ == "__main__":
    main()
