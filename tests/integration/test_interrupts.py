"""Ctrl-C and kill -9 in the middle of `factory validate`: no container is left behind."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.validate_runs import signal_when_started, start_validate

from factory.runtime import LABEL_MANAGED, DockerRuntime

pytestmark = pytest.mark.docker
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _slow_tasks(tmp_path: Path, count: int = 3) -> list[Path]:
    """Tasks whose solution takes a while, so that the run is interrupted mid-phase."""
    tasks = []
    for i in range(count):
        task = tmp_path / f"slow-{i}"
        shutil.copytree(EXAMPLES / "broken" / "fails-with-solution", task)
        (task / "solution" / "solve.sh").write_text(
            f"#!/bin/bash\nsleep 60\necho 42 > /app/answer.txt # {i}\n"
        )
        tasks.append(task)
    return tasks


def _containers_of(pid: int) -> list[dict]:
    api = DockerRuntime("pytest-probe").api
    return [
        c
        for c in api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"})
        if (c.get("Labels") or {}).get("factory.pid") == str(pid)
    ]


def _wait_for_containers(proc: subprocess.Popen, want: int = 2, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if len(_containers_of(proc.pid)) >= want:
            return
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    raise AssertionError("the run never started its containers")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_removes_containers(tmp_path, sig):
    proc = start_validate(_slow_tasks(tmp_path), tmp_path / "out", "--jobs", "2")
    output, _ = signal_when_started(proc, lambda: _wait_for_containers(proc), sig, timeout=60)
    assert proc.returncode == 130, output
    assert _containers_of(proc.pid) == []
    assert (tmp_path / "out" / "validation.json").is_file()


def test_kill9_leftovers_are_collected_by_gc(tmp_path):
    proc = start_validate(_slow_tasks(tmp_path), tmp_path / "out", "--jobs", "2")
    signal_when_started(proc, lambda: _wait_for_containers(proc), signal.SIGKILL, timeout=30)
    assert _containers_of(proc.pid), "kill -9 leaves containers (that is what gc is for)"
    gc = subprocess.run(
        [sys.executable, "-m", "factory", "gc", "--json"], capture_output=True, text=True
    )
    assert gc.returncode == 0, gc.stderr
    assert _containers_of(proc.pid) == []
    assert "removed" in gc.stderr
    assert len(json.loads(gc.stdout)["containers"]) >= 2
