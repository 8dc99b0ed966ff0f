"""The servers of the two new tool modes, run as the container runs them (a process on a port,
an admin socket), without Docker: ``toolenv.agent_policy`` executes a forbidden call and keeps
the violation only in its log; ``toolenv.dual`` answers ``say`` with the task's scripted
customer, who approves in their app when asked, and serves the customer's tools on the admin
socket only."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from factory.toolenv.core import load_domain
from factory.toolenv.dual import customer_call_over_socket, hang_up_over_socket

from factory.families.base import registry
from factory.families.tool.scenario import run_chain
from factory.generate.taxonomy import Difficulty

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(tmp_path: Path, module: str, domain: str, state: dict, *extra: str):
    """``python -m factory.toolenv.MODULE`` on a free port; (base url, record folder, socket)."""
    (tmp_path / "initial.json").write_text(json.dumps(state))
    port, sock = _free_port(), tmp_path / "admin.sock"
    command = [sys.executable, "-m", f"factory.toolenv.{module}", "--domain", domain]
    command += ["--state", str(tmp_path / "initial.json"), "--port", str(port)]
    command += ["--log", str(tmp_path / "calls.jsonl"), "--state-out", str(tmp_path / "state.json")]
    command += ["--admin-socket", str(sock), *extra]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'train'}"}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"server did not start: {process.stderr.read()[-500:]}")
        yield base, tmp_path, str(sock)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _log(record: Path) -> list[dict]:
    return [json.loads(line) for line in (record / "calls.jsonl").read_text().splitlines()]


def test_the_agent_policy_server_executes_and_records(tmp_path):
    fam = registry.get("tool-banking")
    domain = load_domain("banking")
    for seed in range(1, 200):
        rng = random.Random(seed)
        state = fam.seed_state(rng, Difficulty.HARD)
        scenario = fam.sample(rng, state, Difficulty.HARD)
        if scenario.traps:
            break
    expected = run_chain(domain, state, scenario.calls, what="reference")
    trap = scenario.traps[0]
    with served(tmp_path, "agent_policy", "banking", expected) as (base, record, _sock):
        status, answer = _post(base + "/call", {"name": trap.name, "arguments": trap.arguments})
        assert status == 200 and "violation" not in answer
        (entry,) = _log(record)
        assert entry["tool"] == trap.name and entry["violation"]
        if answer["ok"]:
            assert json.loads((record / "state.json").read_text()) != expected


@pytest.fixture
def dual_served(tmp_path):
    """tool-banking's dual-mode server (seed 2, easy) with its scripted customer: (the
    customer's id, the tool port's URL, the record folder, the admin socket)."""
    fam = registry.get("tool-banking")
    draft = fam.draft(random.Random(2), Difficulty.EASY, {**fam.default_params, "user": "dual"})
    state = json.loads(draft.files["environment/state.json"])
    (tmp_path / "customer.json").write_text(draft.files["environment/customer.json"])
    args = ("--customer", str(tmp_path / "customer.json"))
    with served(tmp_path, "dual", "banking", state, *args) as (base, record, sock):
        yield state["app"]["customer_id"], base, record, sock


def test_the_dual_server_answers_say_and_keeps_the_customer_tools_off_the_port(dual_served):
    me, base, record, sock = dual_served
    tools = json.loads(urllib.request.urlopen(base + "/tools").read())["tools"]
    names = {t["function"]["name"] for t in tools}
    assert "send_app_sign_in" in names and "approve_sign_in" not in names
    assert _post(base + "/call", {"name": "approve_sign_in", "arguments": {}})[1]["ok"] is False
    assert _post(base + "/customer-call", {"name": "approve_sign_in"})[0] == 404
    call = {"name": "send_app_sign_in", "arguments": {"customer_id": me}}
    assert _post(base + "/call", call)[1]["ok"]
    status, said = _post(base + "/say", {"message": "Hi! Please approve the sign-in request."})
    assert status == 200 and said["reply"].startswith("OK, I opened the app")
    saved = json.loads((record / "state.json").read_text())
    assert saved["app"]["sign_in"] == "approved"
    by = [e.get("by") for e in _log(record)]
    assert by[-1] == "customer"
    # the harness's way in, as root in a container: the admin socket
    again = customer_call_over_socket("approve_sign_in", sock)
    assert again["ok"] is False and "no sign-in request" in again["error"]
    assert customer_call_over_socket("open_app", sock)["result"] == {"screen": "signed in"}
    # a message that asks for nothing gets the script's other answers
    assert _post(base + "/say", {"message": "Thanks"})[1]["ok"]


def test_a_harness_with_its_own_customer_hangs_up_the_scripted_one(dual_served):
    # In an episode the harness's customer (scripted or a model) is on the line; the task's
    # scripted customer on the tool port must not approve for an agent that reaches it with
    # curl (or the container's `say` program) behind the harness's back.
    me, base, record, sock = dual_served
    assert _post(base + "/customer-hangup", {})[0] == 404  # not on the agent's port
    assert hang_up_over_socket(sock) == {"ok": True}
    call = {"name": "send_app_sign_in", "arguments": {"customer_id": me}}
    assert _post(base + "/call", call)[1]["ok"]
    status, said = _post(base + "/say", {"message": "Please approve the sign-in request."})
    assert status == 200 and said["ok"] is False and "your own line" in said["error"]
    saved = json.loads((record / "state.json").read_text())
    assert saved["app"]["sign_in"] == "pending"
    assert all(e.get("by") != "customer" for e in _log(record))
    # the harness's customer still acts through the admin socket
    assert customer_call_over_socket("approve_sign_in", sock)["ok"] is True
