"""Multi-container tasks in containers: the Harbor and Terminal-Bench 1 examples certify, the
sidecars run limited on a network of the task's own that reaches neither the host nor
anything else, the separate verifier gets fresh sidecars (as in Harbor), and nothing is left behind:
not after a phase, not after Ctrl-C, and `gc` collects what kill -9 left."""

from __future__ import annotations

import ipaddress
import shutil
import signal
import socket
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest
from fixtures.validate_runs import signal_when_started, start_validate

from factory.images.task_image import TaskImageBuilder
from factory.runtime import (
    KIND_TASK_NETWORK,
    LABEL_KIND,
    LABEL_MANAGED,
    LABEL_RUN,
    LABEL_SERVICE,
    DockerRuntime,
    collect_garbage,
)
from factory.tasks.model import load_task
from factory.validate.outcome import Outcome, PhaseKind
from factory.validate.phases import container_spec
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
HARBOR_EXAMPLE = ROOT / "examples" / "harbor" / "kv-inventory"
TB1_EXAMPLE = ROOT / "examples" / "tb1" / "order-api"


def _leftovers(api, label: str) -> tuple[list[str], list[str]]:
    """(containers, task networks) carrying ``label``."""
    containers = [c["Id"] for c in api.containers(all=True, filters={"label": label})]
    networks = [
        n["Name"]
        for n in api.networks(filters={"label": label})
        if (n.get("Labels") or {}).get(LABEL_KIND) == KIND_TASK_NETWORK
    ]
    return containers, networks


def _wait_gone(api, label: str, limit: float = 30.0) -> tuple[list[str], list[str]]:
    deadline = time.monotonic() + limit
    found = _leftovers(api, label)
    while (found[0] or found[1]) and time.monotonic() < deadline:
        time.sleep(0.3)
        found = _leftovers(api, label)
    return found


@pytest.mark.parametrize("example", [HARBOR_EXAMPLE, TB1_EXAMPLE], ids=["harbor", "tb1"])
def test_the_examples_certify_and_leave_nothing(runtime, tmp_path, example):
    validator = Validator(runtime, tmp_path / "out", repeats=1, jobs=1)
    report = validator.run([example])
    (verdict,) = report.tasks
    assert verdict.outcome is Outcome.VALID, verdict.reason
    rewards = {p.kind: p.reward for p in verdict.phases}
    assert rewards == {PhaseKind.NOP: 0.0, PhaseKind.ORACLE: 1.0}
    logs = tmp_path / "out" / "logs" / verdict.id
    assert [p.name for p in logs.glob("build-*.log")] in (["build-kv.log"], ["build-api.log"])
    assert _wait_gone(runtime.api, f"{LABEL_RUN}={runtime.run_id}") == ([], [])


def _host_addresses() -> list[str]:
    """Every IPv4 address of this machine except loopback (the engine's bridges included)."""
    text = subprocess.run(
        ["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in text.splitlines():
        address = line.split()[3].split("/")[0]
        if not ipaddress.ip_address(address).is_loopback:
            found.append(address)
    return found


PROBE = textwrap.dedent(
    """
    import socket, sys
    port = int(sys.argv[1])
    reached = []
    for address in sys.argv[2:]:
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((address, port))
            reached.append(address)
        except OSError:
            pass
        finally:
            s.close()
    print("REACHED", " ".join(reached))
    """
)


def test_sidecars_are_limited_isolated_from_the_host_and_removed(runtime):
    task = load_task(HARBOR_EXAMPLE)
    image = TaskImageBuilder(runtime).ensure(task).ref
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    accepted: list[str] = []

    def accept() -> None:
        while True:
            try:
                conn, peer = listener.accept()
            except OSError:
                return
            accepted.append(peer[0])
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    addresses = _host_addresses()
    assert addresses
    box = runtime.start(container_spec(task, image))
    try:
        (kv,) = box.sidecars
        api = runtime.api
        info = api.inspect_container(kv.id)
        host = info["HostConfig"]
        assert info["Config"]["Labels"][LABEL_SERVICE] == "kv"
        assert host["Memory"] == 128 << 20 and host["MemorySwap"] == 128 << 20
        assert host["NanoCpus"] == 500_000_000 and host["PidsLimit"] == 256
        assert host["Privileged"] is False and "no-new-privileges" in host["SecurityOpt"]
        assert list(info["NetworkSettings"]["Networks"]) == [box.network]
        network = api.inspect_network(box.network)
        assert network["Internal"] is True
        # main reaches the sidecar by its service name ...
        ok = box.exec(
            [
                "python3",
                "-c",
                "import urllib.request as u; "
                "print(u.urlopen('http://kv:8080/health', timeout=5).read().decode())",
            ],
            timeout_sec=30,
        )
        assert ok.exit_code == 0 and "ok" in ok.output, ok.output
        # ... and neither main nor the sidecar reaches the host on any of its addresses
        for where in (box, kv):
            probe = where.exec(["python3", "-c", PROBE, str(port), *addresses], timeout_sec=60)
            assert probe.exit_code == 0, probe.output
            assert probe.output.strip().endswith("REACHED"), probe.output
        assert accepted == []
        # the control: the same probe from Docker's default bridge does reach the host
        control = api.create_container(
            image,
            command=["python3", "-c", PROBE, str(port), *addresses],
            labels={LABEL_MANAGED: "1", LABEL_RUN: runtime.run_id},
            host_config=api.create_host_config(network_mode="bridge"),
        )
        try:
            api.start(control)
            api.wait(control, timeout=60)
            reached = api.logs(control).decode().split()
        finally:
            api.remove_container(control, force=True)
        assert reached[0] == "REACHED" and len(reached) > 1, reached
        # nor the internet (the task has no network; sidecars never do)
        outside = kv.exec(["python3", "-c", PROBE, "53", "1.1.1.1", "8.8.8.8"], timeout_sec=30)
        assert outside.output.strip().endswith("REACHED"), outside.output
        label = f"{LABEL_RUN}={runtime.run_id}"
        assert len(_leftovers(api, label)[0]) == 2 and _leftovers(api, label)[1] == [box.network]
    finally:
        box.close()
        listener.close()
    assert _wait_gone(runtime.api, f"{LABEL_RUN}={runtime.run_id}") == ([], [])


def test_an_unhealthy_sidecar_is_named_and_removed(runtime, tmp_path):
    task_dir = tmp_path / "task"
    shutil.copytree(HARBOR_EXAMPLE, task_dir)
    compose = task_dir / "environment" / "docker-compose.yaml"
    compose.write_text(
        compose.read_text().replace("/health", "/missing").replace("retries: 15", "retries: 2")
    )
    validator = Validator(runtime, tmp_path / "out", repeats=1, jobs=1)
    (verdict,) = validator.run([task_dir]).tasks
    assert verdict.outcome is Outcome.UNHEALTHY, verdict.reason
    assert "sidecar 'kv'" in verdict.reason
    assert _wait_gone(runtime.api, f"{LABEL_RUN}={runtime.run_id}") == ([], [])


ASKS_THE_SIDECAR = """
import sys, urllib.request
value = urllib.request.urlopen("http://kv:8080/keys/stock:apple", timeout=10).read().decode()
sys.exit(0 if value.strip() == "12" else 1)
"""


def test_the_separate_verifier_gets_fresh_sidecars_as_in_harbor(runtime, tmp_path):
    """Harbor 0.26 starts a separate verifier's environment afresh, sidecars included: the
    shipped example (its hook snapshots the agent's kv) is valid, and the same task whose tests
    ask kv directly is not, since the verifier's kv never saw the agent's writes."""
    asks = tmp_path / "asks-the-sidecar"
    shutil.copytree(HARBOR_EXAMPLE, asks)
    (asks / "tests" / "check.py").write_text(ASKS_THE_SIDECAR.lstrip())
    validator = Validator(runtime, tmp_path / "out", repeats=1, jobs=1)
    shipped, asking = validator.run([HARBOR_EXAMPLE, asks]).tasks
    assert shipped.outcome is Outcome.VALID, shipped.reason
    assert asking.outcome is Outcome.FAILS_WITH_SOLUTION, asking.reason
    assert {p.kind: p.reward for p in asking.phases}[PhaseKind.ORACLE] == 0.0
    assert _wait_gone(runtime.api, f"{LABEL_RUN}={runtime.run_id}") == ([], [])


def _slow_copy(tmp_path: Path) -> Path:
    task_dir = tmp_path / "slow"
    shutil.copytree(HARBOR_EXAMPLE, task_dir)
    (task_dir / "solution" / "solve.sh").write_text("#!/bin/bash\nsleep 120\n")
    return task_dir


def _of_pid(api, pid: int) -> tuple[list[str], list[str]]:
    return _leftovers(api, f"factory.pid={pid}")


def _start_validate(task_dir: Path, out: Path) -> subprocess.Popen:
    return start_validate([task_dir], out, "--jobs", "1", "--repeats", "1")


def _wait_for_group(api, proc: subprocess.Popen, limit: float = 240.0) -> None:
    """Until the run has a task container, its sidecar and its network."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        containers, networks = _of_pid(api, proc.pid)
        if len(containers) >= 2 and networks:
            time.sleep(1.0)  # into the phase
            return
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.3)
    raise AssertionError("the run never started its sidecar")


def test_ctrl_c_removes_sidecars_and_the_network(tmp_path):
    api = DockerRuntime("pytest-probe").api
    proc = _start_validate(_slow_copy(tmp_path), tmp_path / "out")
    output, _ = signal_when_started(proc, lambda: _wait_for_group(api, proc))
    assert proc.returncode == 130, output
    assert _of_pid(api, proc.pid) == ([], [])


def test_kill9_leftovers_of_a_group_are_collected_by_gc(tmp_path):
    runtime = DockerRuntime("pytest-probe")
    api = runtime.api
    proc = _start_validate(_slow_copy(tmp_path), tmp_path / "out")
    signal_when_started(proc, lambda: _wait_for_group(api, proc), signal.SIGKILL, timeout=30)
    containers, networks = _of_pid(api, proc.pid)
    assert len(containers) >= 2 and networks, "kill -9 leaves them (that is what gc is for)"
    run_ids = {
        (c.get("Labels") or {}).get(LABEL_RUN)
        for c in api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"})
        if (c.get("Labels") or {}).get("factory.pid") == str(proc.pid)
    }
    removed: list[str] = []
    for run_id in run_ids:  # only this run's: the engine is shared
        report = collect_garbage(runtime, run_id=run_id)
        removed += report.networks
    assert set(networks) <= set(removed)
    assert _of_pid(api, proc.pid) == ([], [])
