"""Web and tool environments end to end, in real containers: a scripted agent solves a shop
task through the text browser and a calendar task through the tool server; the MCP endpoint
and per-rollout state reset work."""

from __future__ import annotations

import json
import random
import re
import shlex

import pytest
from fixtures.built_tasks import PagePlan, built_trial, element_id, sign_in

from factory.agent.actions import ActionFormat
from factory.agent.harness import HarnessConfig, ReplyPolicy, ScriptedPolicy, run_episode
from factory.families import registry
from factory.generate.taxonomy import Difficulty
from factory.validate.phases import container_spec

pytestmark = pytest.mark.docker


class BrowserShopper(PagePlan):
    """Reads each page the browser prints and acts on the numbered elements it finds there,
    the way a model would: sign in, search, open the product, add it, check out."""

    def _steps(self):
        item = self.c["items"][0]
        address = self.c["address"]
        yield lambda page: "browse open http://127.0.0.1:8000/login"
        yield lambda page: sign_in(page, self.c["user"])
        yield lambda page: " && ".join(
            [
                f"browse type {element_id(page, 'textbox', 'Search')} {shlex.quote(item['name'])}",
                f"browse click {element_id(page, 'button', 'Search')}",
            ]
        )
        yield lambda page: f"browse click {element_id(page, 'link', item['name'])}"
        yield lambda page: " && ".join(
            [
                f"browse type {element_id(page, 'textbox', 'Quantity')} {item['qty']}",
                f"browse click {element_id(page, 'button', 'Add to cart')}",
            ]
        )
        yield lambda page: f"browse click {element_id(page, 'link', 'Proceed to checkout')}"
        yield lambda page: " && ".join(
            [
                *(
                    f"browse type {element_id(page, 'textbox', label)} {shlex.quote(address[key])}"
                    for key, label in (
                        ("name", "Full name"),
                        ("street", "Street"),
                        ("city", "City"),
                        ("zip", "ZIP code"),
                    )
                ),
                f"browse click {element_id(page, 'button', 'Place order')}",
            ]
        )


def test_scripted_agent_shops_through_the_browser(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "web-shop", Difficulty.EASY)
    # The family's draft context is what the instruction says: the agent "reads" it there.
    context = registry.get("web-shop").draft(random.Random(1), Difficulty.EASY, {}).context
    result = run_episode(runtime, task, image, BrowserShopper(context), HarnessConfig(), tmp_path)
    pages = [m["content"] for m in result.transcript if m["role"] == "user"]
    assert result.infra_error is None, result.infra_error
    assert any("Order #" in p and "placed" in p for p in pages), pages[-1][-1500:]
    assert result.reward == 1.0


def test_unsolved_web_task_scores_zero(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "web-shop", Difficulty.EASY)
    policy = ScriptedPolicy(["browse open http://127.0.0.1:8000/products"])
    result = run_episode(runtime, task, image, policy, HarnessConfig(), tmp_path)
    assert result.infra_error is None and result.reward == 0.0
    page = [m["content"] for m in result.transcript if m["role"] == "user"][1]
    assert "[1] link" in page and "Title: Products - Shop" in page


def test_scripted_agent_uses_the_tool_server(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "tool-calendar", Difficulty.MEDIUM)
    calls = [
        line
        for line in (trial.path / "solution" / "solve.sh").read_text().splitlines()
        if line.startswith("tool call ")
    ]
    result = run_episode(
        runtime, task, image, ScriptedPolicy(["tool list", *calls]), HarnessConfig(), tmp_path
    )
    assert result.infra_error is None and result.reward == 1.0
    listing = [m["content"] for m in result.transcript if m["role"] == "user"][1]
    assert "create_event" in listing and "arguments" in listing


def test_policy_violation_fails_the_task(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "tool-calendar", Difficulty.HARD)
    script = (trial.path / "solution" / "solve.sh").read_text().splitlines()
    calls = [line for line in script if line.startswith("tool call ")]
    match = re.search(r"\((ev-\d+)\)", task.instruction)
    assert match, "the hard request names a colleague's event"
    trap = f"tool call cancel_event '{json.dumps({'event_id': match.group(1)})}'"
    result = run_episode(
        runtime, task, image, ScriptedPolicy(["\n".join(calls), trap]), HarnessConfig(), tmp_path
    )
    refusal = [m["content"] for m in result.transcript if m["role"] == "user"][-1]
    assert "refused by policy" in refusal
    assert result.reward == 0.0


def _exec_json(box, script: str) -> dict:
    result = box.exec(["python3", "-c", script], timeout_sec=30)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


MCP_SESSION = """
import json, urllib.request
def rpc(body):
    req = urllib.request.Request("http://127.0.0.1:8000/mcp", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return r.status, (json.loads(r.read() or b"null"))
out = {}
out["init"] = rpc({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "0"}}})
out["notified"] = rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})[0]
out["list"] = rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
out["call"] = rpc({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "list_rooms", "arguments": {}}})
out["bad"] = rpc({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                  "params": {"name": "cancel_event", "arguments": {"event_id": "nope"}}})
print(json.dumps(out))
"""


def test_mcp_endpoint_and_reset(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "tool-calendar", Difficulty.EASY)
    with runtime.start(container_spec(task, image)) as box:
        box.wait_ready()
        out = _exec_json(box, MCP_SESSION)
        assert out["init"][1]["result"]["capabilities"] == {"tools": {"listChanged": False}}
        assert out["notified"] == 202
        names = {t["name"] for t in out["list"][1]["result"]["tools"]}
        assert {"create_event", "find_user", "list_rooms"} <= names
        assert out["call"][1]["result"]["isError"] is False
        assert out["bad"][1]["result"]["isError"] is True
        # A change, then a reset: the state is the initial one again.
        solve = (trial.path / "solution" / "solve.sh").read_text()
        box.exec(["bash", "-c", solve], timeout_sec=60)
        initial = json.loads((trial.path / "environment" / "state.json").read_text())
        state = _admin(box, "state")
        assert state["state"] != initial and state["log"]
        # The agent's user reaches neither reset nor state: not on the port, not on the socket.
        refused = box.exec(
            ["python3", "-c", AGENT_RESETS], timeout_sec=30, user=task.config.agent.user
        )
        assert refused.output.split() == ["404", "404", "PermissionError"], refused.output
        assert _admin(box, "reset") == {"ok": True}
        state = _admin(box, "state")
        assert state == {"state": initial, "log": []}


AGENT_RESETS = """
import socket, urllib.error, urllib.request
for path, data in (("/reset", b"{}"), ("/state", None)):
    try:
        urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:8000" + path, data=data))
        print("served")
    except urllib.error.HTTPError as exc:
        print(exc.code)
try:
    socket.socket(socket.AF_UNIX).connect("/run/toolenv/admin.sock")
    print("connected")
except OSError as exc:
    print(type(exc).__name__)
"""


def _admin(box, command: str) -> dict:
    """The tool server's admin socket, as root (the verifier's and the reset's way in)."""
    result = box.exec(
        ["sh", "-c", f"PYTHONPATH=/opt/toolenv python3 -m toolenv.admin {command}"],
        timeout_sec=30,
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_web_reset_restores_the_pristine_database(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "web-shop", Difficulty.EASY)
    with runtime.start(container_spec(task, image)) as box:
        box.wait_ready()
        solve = (trial.path / "solution" / "solve.sh").read_text()
        assert box.exec(["bash", "-c", solve], timeout_sec=60).exit_code == 0
        # python's sqlite3 module: the faithful python stand-in has no sqlite3 CLI
        count = (
            "python3 -c \"import sqlite3; print(sqlite3.connect('/srv/app/data/app.db')"
            ".execute('SELECT COUNT(*) FROM orders').fetchone()[0])\""
        )
        assert box.exec(["sh", "-c", count], timeout_sec=10).output.strip() == "1"
        assert box.exec(["sh", "/opt/webkit/reset.sh"], timeout_sec=30).exit_code == 0
        assert box.exec(["sh", "-c", count], timeout_sec=10).output.strip() == "0"
        assert box.exec(["python3", "/opt/webkit/health.py"], timeout_sec=10).exit_code == 0


class NativeToolCaller(ReplyPolicy):
    """Makes the given calls as native tool calls (the tool-call format), then stops."""

    def __init__(self, calls: list[tuple[str, dict]]) -> None:
        self.calls = calls

    def reply(self, messages: list[dict], tools: list[dict] | None = None):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn >= len(self.calls):
            return "The meeting is booked.", None
        name, arguments = self.calls[turn]
        assert tools and name in {t["function"]["name"] for t in tools}
        function = {"name": name, "arguments": json.dumps(arguments)}
        return "", [{"id": f"call-{turn}", "type": "function", "function": function}]


def test_native_tool_calls_solve_a_tool_task_through_its_mcp_server(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "tool-calendar", Difficulty.MEDIUM)
    calls = []
    for line in (trial.path / "solution" / "solve.sh").read_text().splitlines():
        if line.startswith("tool call "):
            _tool, _call, name, arguments = shlex.split(line)
            calls.append((name, json.loads(arguments)))
    config = HarnessConfig(action_format=ActionFormat.TOOLS, max_turns=len(calls) + 1)
    result = run_episode(runtime, task, image, NativeToolCaller(calls), config, tmp_path)
    assert result.infra_error is None, result.infra_error
    answers = [m for m in result.transcript if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == [f"call-{i}" for i in range(len(calls))]
    assert not any(m["content"].startswith("error") for m in answers), answers
    assert result.reward == 1.0
