"""The tool environment's core and server, on the host (no Docker): argument checks, policy
violations, OpenAI and MCP surfaces, reset."""

from __future__ import annotations

import json
import os
import random
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

import pytest
from factory.toolenv.admin import admin_request
from factory.toolenv.core import Environment, load_domain
from factory.toolenv.server import (
    DomainBackend,
    ToolService,
    UnixHttpServer,
    make_admin_handler,
    make_handler,
)

from factory.families import registry
from factory.generate.taxonomy import Difficulty


@pytest.fixture
def calendar_state():
    family = registry.get("tool-calendar")
    return family.seed_state(random.Random(3), Difficulty.EASY)


def test_calls_are_checked_logged_and_atomic(calendar_state):
    env = Environment(load_domain("calendar"), calendar_state)
    assert env.call("find_user", {"query": calendar_state["users"][1]["name"]})["ok"]
    missing = env.call("find_user", {})
    assert not missing["ok"] and "missing required argument 'query'" in missing["error"]
    wrong = env.call(
        "find_free_rooms",
        {"date": "2026-01-01", "start": "09:00", "end": "10:00", "min_capacity": "two"},
    )
    assert "expected integer" in wrong["error"]
    assert "unknown tool" in env.call("teleport", {})["error"]
    before = json.dumps(env.state, sort_keys=True)
    bad = env.call(
        "create_event",
        {
            "title": "x",
            "attendees": ["u-nobody"],
            "date": "2026-01-01",
            "start": "09:00",
            "end": "10:00",
        },
    )
    assert not bad["ok"] and json.dumps(env.state, sort_keys=True) == before
    assert len(env.log) == 5


def test_policy_violation_is_refused_and_recorded(calendar_state):
    env = Environment(load_domain("calendar"), calendar_state)
    theirs = next(
        e for e in calendar_state["events"] if e["organizer"] != calendar_state["acting_user"]
    )
    result = env.call("cancel_event", {"event_id": theirs["event_id"]})
    assert not result["ok"] and "refused by policy" in result["error"]
    assert result["violation"] and env.violations()
    assert theirs in env.state["events"]


@pytest.fixture
def server(calendar_state):
    service = ToolService(
        DomainBackend(Environment(load_domain("calendar"), calendar_state)), None, None
    )
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(service))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _post(url: str, body: object) -> tuple[int, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        raw = response.read()
        return response.status, json.loads(raw) if raw else None


def _get(url: str) -> dict:
    with urllib.request.urlopen(url) as response:
        return json.loads(response.read())


def test_openai_surface(server):
    tools = _get(server + "/tools")["tools"]
    create = next(t for t in tools if t["function"]["name"] == "create_event")
    assert create["type"] == "function" and create["function"]["strict"] is True
    parameters = create["function"]["parameters"]
    assert parameters["required"] == ["title", "attendees", "date", "start", "end", "room_id"]
    assert parameters["properties"]["room_id"]["type"] == ["string", "null"]
    assert parameters["properties"]["title"]["type"] == "string"
    status, result = _post(server + "/call", {"name": "list_rooms", "arguments": "{}"})
    assert status == 200 and result["ok"] and result["result"]
    assert _get(server + "/state")["log"][0]["tool"] == "list_rooms"


def test_mcp_surface(server):
    status, init = _post(
        server + "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-03-26"},
        },
    )
    assert init["result"]["protocolVersion"] == "2025-03-26"
    assert "Scheduling policy" in init["result"]["instructions"]
    assert (
        _post(server + "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202
    )
    _, listed = _post(server + "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert all("inputSchema" in t for t in listed["result"]["tools"])
    _, batch = _post(  # batches: only in 2025-03-26 (a request without the version header)
        server + "/mcp",
        [
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "get_event", "arguments": {"event_id": "ev-0"}},
            },
            {"jsonrpc": "2.0", "id": 4, "method": "no/such"},
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "teleport"}},
        ],
    )
    assert batch[0]["result"]["isError"] is True
    assert batch[1]["error"]["code"] == -32601
    assert batch[2]["error"] == {"code": -32602, "message": "Unknown tool: teleport"}
    assert _get(server + "/state")["log"][-1]["tool"] == "teleport"  # still on the record


def test_reset_restores_initial_state(tmp_path, calendar_state):
    """Reset and the verifier's view are served on the admin socket only; the agent's port
    refuses both (a reset there would wipe the record of a forbidden call)."""
    with admin_served(tmp_path, calendar_state) as (port, sock):
        me = calendar_state["acting_user"]
        args = {
            "title": "t",
            "attendees": [],
            "date": "2027-03-03",
            "start": "09:00",
            "end": "10:00",
        }
        assert _post(port + "/call", {"name": "create_event", "arguments": args})[1]["ok"]
        for path, body in (("/reset", {}), ("/state", None)):
            with pytest.raises(urllib.error.HTTPError) as refused:
                _post(port + path, body) if body is not None else _get(port + path)
            assert refused.value.code == 404
            assert "admin socket" in refused.value.read().decode()
        state = admin_request("GET", "/state", sock)
        assert len(state["state"]["events"]) == len(calendar_state["events"]) + 1
        assert admin_request("POST", "/reset", sock) == {"ok": True}
        assert admin_request("GET", "/state", sock) == {"state": calendar_state, "log": []}
        assert admin_request("GET", "/health", sock)["ok"]
        with pytest.raises(OSError, match="HTTP 404"):
            admin_request("POST", "/teleport", sock)
        assert oct(os.stat(sock).st_mode & 0o777) == "0o600"
        mine = [e for e in calendar_state["events"] if e["organizer"] == me]
        assert mine == [
            e
            for e in admin_request("GET", "/state", sock)["state"]["events"]
            if e["organizer"] == me
        ]


@contextmanager
def admin_served(tmp_path, state):
    """The calendar server as the task containers run it: the agent's port, which serves no
    control endpoint, and the admin socket (owner-only) for state and reset."""
    service = ToolService(DomainBackend(Environment(load_domain("calendar"), state)), None, None)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(service, serve_state=False))
    sock = str(tmp_path / "admin.sock")
    admin = UnixHttpServer(sock, make_admin_handler(service))
    for srv in (httpd, admin):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", sock
    finally:
        for srv in (httpd, admin):
            srv.shutdown()
            srv.server_close()


def test_a_rule_on_some_tools_judges_only_their_calls():
    from factory.toolenv.core import Domain

    domain = Domain("t", "T", "policy")
    seen: list[str] = []

    @domain.tool("Set x.", {"x": {"type": "integer"}}, mutates=True)
    def set_x(state, x):
        state["x"] = x
        return x

    @domain.tool("Read x.")
    def get_x(state):
        return state["x"]

    @domain.rule_on("set_x")
    def small(state, tool, args):
        seen.append(tool)
        return f"{tool} to {args['x']}" if args["x"] > 9 else None

    env = Environment(domain, {"x": 0})
    assert env.call("get_x", {})["ok"] and seen == []
    assert env.call("set_x", {"x": 3})["ok"] and seen == ["set_x"]
    refused = env.call("set_x", {"x": 10})
    assert refused["violation"] == "set_x to 10" and env.state == {"x": 3}
    assert small({}, "get_x", {"x": 99}) == "get_x to 99"  # the function itself stays as written


def test_lookup_and_days_between_answer_none_where_a_rule_has_nothing_to_judge():
    from factory.toolenv.core import days_between, lookup

    rows = [{"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "b", "n": 3}]
    assert lookup(rows, "id", "b") == {"id": "b", "n": 2}
    assert lookup(rows, "id", "c") is None
    assert days_between("2026-02-27", "2026-03-02") == 3
    assert days_between("2026-03-02", "2026-02-27") == -3
    assert days_between("yesterday", "2026-03-02") is None


def test_every_server_entry_point_takes_the_serving_options(monkeypatch):
    import argparse

    from factory.toolenv import server

    dropped: list[str] = []
    monkeypatch.setattr(server, "drop_privileges", dropped.append)
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain")
    argv = ["--domain", "crm", "--port", "9001", "--log", "/tmp/c.jsonl", "--user", "agent"]
    args = server.parse_server_args(parser, argv)
    assert (args.domain, args.port, str(args.log), args.state_out) == (
        "crm",
        9001,
        "/tmp/c.jsonl",
        None,
    )
    assert dropped == ["agent"]
    assert server.parse_server_args(argparse.ArgumentParser(), []).port == 8000
    assert dropped == ["agent"]  # no --user: nobody to become
