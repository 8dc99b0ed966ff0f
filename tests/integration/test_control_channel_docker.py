"""The runtime's in-place reset over a container's root control channel, in real containers:
it restores a tool task's and a web task's state, and the agent's user can neither write
into the channel, read its descriptors or signal it, nor reach the tool server's admin
socket."""

from __future__ import annotations

import json

import pytest

from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial
from factory.images.task_image import TaskImageBuilder
from factory.tasks.model import load_task
from factory.validate.phases import container_spec

pytestmark = pytest.mark.docker

AGENT_PROBES = """
import os, socket, sys
pid = int(sys.argv[1])
probes = (
    ("stdin", lambda: open(f"/proc/{pid}/fd/0", "wb").write(b'{"id": 9, "op": "reset"}\\n')),
    ("fds", lambda: os.listdir(f"/proc/{pid}/fd")),
    ("signal", lambda: os.kill(pid, 19)),
    ("admin", lambda: socket.socket(socket.AF_UNIX).connect("/run/toolenv/admin.sock")),
)
seen = []
for name, probe in probes:
    try:
        probe()
        seen.append(f"{name}:done")
    except OSError as exc:
        seen.append(f"{name}:{type(exc).__name__}")
print(" ".join(seen))
"""

ORDERS = (  # python's sqlite3: the browser-mode image has no sqlite3 command
    "python3 -c \"import sqlite3; print(sqlite3.connect('/srv/app/data/app.db')"
    ".execute('SELECT COUNT(*) FROM orders').fetchone()[0])\""
)


def _task(runtime, tmp_path, family: str):
    trial = render_trial(family, Difficulty.EASY, 1, tmp_path / "tasks")
    task = load_task(trial.path)
    return trial, task, TaskImageBuilder(runtime).ensure(task).ref


def test_tool_reset_over_the_channel_is_out_of_the_agents_reach(runtime, tmp_path):
    trial, task, image = _task(runtime, tmp_path, "tool-calendar")
    agent = task.config.agent.user
    assert agent and agent != "root"
    with runtime.start(container_spec(task, image)) as box:
        box.wait_ready()
        channel = box.control()
        assert channel.kinds == ["tool"] and channel.pid
        initial = channel.request("state", timeout_sec=30)["state"]
        solve = (trial.path / "solution" / "solve.sh").read_text()
        solved = box.exec(["bash", "-c", solve], timeout_sec=60, user=agent)
        assert solved.exit_code == 0, solved.output
        changed = channel.request("state", timeout_sec=30)["state"]
        assert changed["state"] != initial["state"] and changed["log"]

        probed = box.exec(
            ["python3", "-c", AGENT_PROBES, str(channel.pid)], timeout_sec=30, user=agent
        )
        assert probed.output.split() == [
            "stdin:PermissionError",
            "fds:PermissionError",
            "signal:PermissionError",
            "admin:PermissionError",
        ], probed.output
        assert channel.request("state", timeout_sec=30)["state"] == changed  # nothing got in

        reply = box.reset_in_place(timeout_sec=30)
        assert reply["ok"] and reply["kinds"] == ["tool"]
        assert box.control() is channel  # the same open stream, not a new exec
        assert channel.request("state", timeout_sec=30)["state"] == {
            "state": initial["state"],
            "log": [],
        }
        # the exec way reads the same state: the channel reset the server itself
        legacy = box.exec(
            ["sh", "-c", "PYTHONPATH=/opt/toolenv python3 -m toolenv.admin state"],
            timeout_sec=30,
        )
        assert json.loads(legacy.output)["log"] == []


@pytest.mark.parametrize("family", ["web-shop", "web-shop-browser"])
def test_web_reset_over_the_channel_restores_the_database(runtime, tmp_path, family):
    trial, task, image = _task(runtime, tmp_path, family)
    with runtime.start(container_spec(task, image)) as box:
        box.wait_ready()
        expected = ["browser"] if family.endswith("-browser") else ["web"]
        assert box.control().kinds == expected
        solve = (trial.path / "solution" / "solve.sh").read_text()
        for _ in range(2):  # twice over one channel: the second reset finds it open still
            solved = box.exec(["bash", "-c", solve], timeout_sec=120)
            assert solved.exit_code == 0, solved.output
            assert box.exec(["sh", "-c", ORDERS], timeout_sec=30).output.strip() == "1"
            assert box.reset_in_place(timeout_sec=60)["kinds"] == expected
            assert box.exec(["sh", "-c", ORDERS], timeout_sec=30).output.strip() == "0"
