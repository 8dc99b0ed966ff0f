"""Builds and containers inside the sandbox, against the real engine: no route to host services,
registries still reachable, build limits that end in a named outcome, deadlines that hold,
capped copies, storage limits reported, and a gc that spares live builds."""

from __future__ import annotations

import http.server
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from factory.errors import EnvironmentUnhealthyError
from factory.runtime import (
    FACTORY_NETWORK,
    LABEL_MANAGED,
    BuildLimits,
    BuildNetwork,
    ContainerSpec,
    DockerRuntime,
    Readiness,
    collect_garbage,
)
from factory.validate.outcome import Outcome
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker
BASE = "factory/base:bookworm"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REPO = Path(__file__).resolve().parents[2]


# --- a service on the host --------------------------------------------------------------------


class _Secret(http.server.BaseHTTPRequestHandler):
    token = ""

    def do_GET(self):  # noqa: N802 - http.server's naming
        body = self.token.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def host_service():
    """An HTTP server on every host address (0.0.0.0) serving a secret token."""
    handler = type("Handler", (_Secret,), {"token": f"host-secret-{uuid.uuid4().hex}"})
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler.token, server.server_address[1]
    server.shutdown()
    server.server_close()


def _host_addresses(runtime: DockerRuntime) -> list[str]:
    """Addresses a container could try for the host: the gateways of docker0 and factory's
    network, and the host's own outward address."""
    found = []
    for name in ("bridge", FACTORY_NETWORK):
        try:
            configs = runtime.api.inspect_network(name)["IPAM"]["Config"] or []
        except Exception:  # noqa: BLE001 - no such network here
            continue
        found += [c["Gateway"] for c in configs if c.get("Gateway")]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.123", 9))  # no packet is sent: this only picks a route
        found.append(probe.getsockname()[0])
    return list(dict.fromkeys(found))


def _host_reaches_pypi() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/six/", timeout=10) as response:
            return response.status == 200
    except OSError:
        return False


def _probe_script(addresses: list[str], port: int) -> str:
    """Shell that tries each address and a registry. Its verdict words are split by quotes, so
    a build log that echoes the command never contains them."""
    lines = [
        f"curl -sS --max-time 3 http://{ip}:{port}/ && echo REACH''ED-{ip} || echo blo''cked-{ip}"
        for ip in addresses
    ]
    lines.append(
        "curl -sS -o /dev/null --max-time 20 https://pypi.org/simple/six/ "
        "&& echo REGISTRY''-OK || echo REGISTRY''-FAILED"
    )
    return "; ".join(lines)


def test_a_public_network_container_cannot_reach_host_services(runtime, host_service):
    token, port = host_service
    addresses = _host_addresses(runtime)
    spec = ContainerSpec(image=BASE, network=True)
    with runtime.start(spec) as box:
        result = box.exec(["sh", "-c", _probe_script(addresses, port)], timeout_sec=120)
    assert token not in result.output
    assert "REACHED" not in result.output
    assert all(f"blocked-{ip}" in result.output for ip in addresses)
    if runtime.container_network() == "none":
        pytest.skip(f"no filtered network here: {runtime.network_note()}")
    if _host_reaches_pypi():
        assert "REGISTRY-OK" in result.output, result.output


def test_a_build_cannot_reach_host_services_but_reaches_a_registry(runtime, host_service, tmp_path):
    token, port = host_service
    addresses = _host_addresses(runtime)
    dockerfile = f"FROM {BASE}\nRUN {_probe_script(addresses, port)}\n"
    log = tmp_path / "build.log"
    built = runtime.build_image(
        tmp_path,
        dockerfile,
        tag=f"factory-test/egress:{uuid.uuid4().hex[:8]}",
        labels={LABEL_MANAGED: "1"},
        timeout_sec=300,
        log_path=log,
        limits=BuildLimits(memory_mb=512, cpus=1, pids=256),
    )
    text = log.read_text()
    runtime.remove_image(built.id, force=True)
    assert token not in text and "REACHED" not in text
    assert all(f"blocked-{ip}" in text for ip in addresses)
    if runtime.container_network() == "none":
        pytest.skip(f"no filtered network here: {runtime.network_note()}")
    if _host_reaches_pypi():
        assert "REGISTRY-OK" in text, text[-2000:]


def test_a_build_without_network_reaches_nothing(runtime, host_service, tmp_path):
    token, port = host_service
    log = tmp_path / "build.log"
    built = runtime.build_image(
        tmp_path,
        f"FROM {BASE}\nRUN {_probe_script(_host_addresses(runtime), port)}\n",
        tag=f"factory-test/egress:{uuid.uuid4().hex[:8]}",
        labels={LABEL_MANAGED: "1"},
        timeout_sec=120,
        log_path=log,
        network=BuildNetwork.NONE,
    )
    runtime.remove_image(built.id, force=True)
    text = log.read_text()
    assert token not in text and "REGISTRY-FAILED" in text


# --- build limits, as validate sees them -------------------------------------------------------


def _task(tmp_path: Path, dockerfile: str, environment: str, name: str = "task") -> Path:
    """A copy of an example task named ``name`` (its id too) with this Dockerfile and this
    [environment] table."""
    task = tmp_path / name
    shutil.copytree(EXAMPLES / "tasks" / "access-log-report", task)
    (task / "environment" / "Dockerfile").write_text(dockerfile)
    text = (task / "task.toml").read_text()
    head, _, _ = text.partition("[environment]")
    head = head.replace('name = "factory-examples/access-log-report"', f'name = "test/{name}"')
    (task / "task.toml").write_text(head + "[environment]\n" + textwrap.dedent(environment))
    return task


@pytest.mark.parametrize(
    "step, environment, outcome, reason, within",
    [
        pytest.param(
            "RUN python3 -c 'x = bytearray(900 * 1024 * 1024); print(len(x))'",
            "memory_mb = 256\nbuild_timeout_sec = 300",
            Outcome.BUILD_FAILED,
            "memory limit (256 MB",
            300,
            id="memory",
        ),
        pytest.param(
            "RUN for i in $(seq 400); do sleep 60 & done; wait",
            "pids_limit = 64\nbuild_timeout_sec = 300",
            Outcome.BUILD_FAILED,
            "process limit (64 processes",
            120,  # stopped at the limit, not at the build deadline
            id="pids",
        ),
        pytest.param(
            "RUN sleep 300",
            "build_timeout_sec = 20",
            Outcome.TIMEOUT,
            "20s timeout",
            30,  # was 50 s: the stream outlived the cancelled build
            id="deadline",
        ),
        pytest.param(
            "RUN echo fine\nRUNN echo typo",
            "build_timeout_sec = 60",
            Outcome.BUILD_FAILED,
            "docker build: environment/Dockerfile line 3: unknown instruction: RUNN",
            60,
            id="syntax-error",
        ),
    ],
)
def test_a_build_ends_in_its_named_outcome_within_its_deadline(
    runtime, tmp_path, step, environment, outcome, reason, within
):
    task = _task(
        tmp_path, f"FROM {BASE}\n{step}\n", f'network_mode = "no-network"\n{environment}\n'
    )
    verdict = Validator(runtime, tmp_path / "out").validate(task)
    unenforced = any("process limit" in n and "not enforced" in n for n in verdict.notes)
    if "process limit" in reason and unenforced:
        pytest.skip("no build cgroup on this engine (the verdict says so)")
    assert verdict.outcome is outcome, verdict.reason
    assert reason in verdict.reason
    assert len(verdict.reason) < 300 and "%7B" not in verdict.reason  # no URL-encoded dump
    assert verdict.timings["total"] < within


# --- healthchecks, copies, storage ------------------------------------------------------------


def test_a_million_healthcheck_retries_end_unhealthy_at_the_deadline(runtime):
    check = Readiness(
        command="false", retries=1_000_000, interval_sec=0.1, timeout_sec=1, max_wait_sec=3
    )
    with runtime.start(ContainerSpec(image=BASE, readiness=check)) as box:
        started = time.monotonic()
        with pytest.raises(EnvironmentUnhealthyError, match="deadline"):
            box.wait_ready()
        assert time.monotonic() - started < 15


def test_validate_ends_a_hopeless_healthcheck_in_unhealthy(runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("FACTORY_MAX_READY_SEC", "3")
    task = _task(
        tmp_path,
        (EXAMPLES / "tasks" / "access-log-report" / "environment" / "Dockerfile").read_text(),
        'network_mode = "no-network"\n[environment.healthcheck]\ncommand = "false"\n'
        "retries = 1000000\ninterval_sec = 0.1\n",
    )
    verdict = Validator(runtime, tmp_path / "out", repeats=1).validate(task)
    assert verdict.outcome is Outcome.UNHEALTHY, verdict.reason


def test_a_2gb_verifier_log_is_streamed_with_caps(runtime):
    with runtime.start(ContainerSpec(image=BASE)) as box:
        box.exec_checked(
            [
                "sh",
                "-c",
                "mkdir -p /logs/verifier && truncate -s 2G /logs/verifier/huge.log "
                "&& echo 1 > /logs/verifier/reward.txt",
            ],
            timeout_sec=30,
            what="setup",
        )
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        files = box.download_dir("/logs/verifier")
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert files["reward.txt"] == b"1\n"
    assert len(files["huge.log"]) == 1 << 20
    assert files.truncated == [f"huge.log: kept the first {1 << 20} of {2 << 30} bytes"]
    assert grown_mb < 200  # was 4.25 GB


def test_storage_mb_caps_each_file_where_the_driver_has_no_quota(runtime):
    note = runtime.storage_note(BASE, 16)
    spec = ContainerSpec(image=BASE, storage_mb=16)
    with runtime.start(spec) as box:
        result = box.exec(
            [
                "sh",
                "-c",
                "head -c 40M /dev/zero > /tmp/big; echo exit=$?; echo size=$(wc -c < /tmp/big)",
            ],
            timeout_sec=60,
        )
    if note is None:
        pytest.skip("the storage driver enforces quotas here")
    assert "not enforced in total" in note
    assert "exit=0" not in result.output
    # (the shell's "File size limit exceeded" goes to stderr, which the engine may interleave
    # with stdout in any order)
    assert f"size={16 << 20}\n" in result.output, result.output


# --- cancellation ---------------------------------------------------------------------------


def _step_containers(api, marker: str) -> list[dict]:
    """Build-step containers whose command carries ``marker``."""
    return [
        c
        for c in api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"})
        if marker in c.get("Command", "")
    ]


def _wait_gone(api, marker: str, limit: float = 15) -> bool:
    """The engine removes a cancelled step's container on its own, within seconds."""
    deadline = time.monotonic() + limit
    while _step_containers(api, marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "train")])}


def test_close_races_with_workers_closing_their_sandboxes(runtime):
    """The intermittent '>60 s after "interrupted"' of test_interrupts.py: a worker closing its
    sandbox after close() had begun started a second reaper, which could take the stop
    sentinel meant for the first; close() then sat in a 60 s join on a reaper that never
    stopped. Now close() removes what is left itself, within its deadline."""
    for _ in range(5):
        run = DockerRuntime(f"pytest-close-{uuid.uuid4().hex[:8]}")
        boxes = [run.start(ContainerSpec(image=BASE)) for _ in range(4)]
        boxes[0].close()  # a reaper is running
        barrier = threading.Barrier(len(boxes))
        workers = [
            threading.Thread(target=lambda b=b, g=barrier: (g.wait(), b.close())) for b in boxes[1:]
        ]
        for worker in workers:
            worker.start()
        barrier.wait()
        started = time.monotonic()
        run.close()
        took = time.monotonic() - started
        for worker in workers:
            worker.join(30)
        assert took < 25, f"close() took {took:.1f}s"
        assert run.api.containers(all=True, filters={"label": f"factory.run={run.run_id}"}) == []


def test_ctrl_c_during_a_build_exits_within_5s_20_times_out_of_20(runtime, tmp_path):
    api = runtime.api
    slow = []
    for attempt in range(20):
        marker = f"cancel-{uuid.uuid4().hex[:8]}"
        task = _task(
            tmp_path,
            f"FROM {BASE}\nRUN sleep 300 # {marker}\n",
            'network_mode = "no-network"\n',
            name=marker,
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "factory", "validate", str(task), "--out", str(tmp_path / "o")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        deadline = time.monotonic() + 60
        while not _step_containers(api, marker):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the build never started"
            time.sleep(0.1)
        time.sleep(0.05 * (attempt % 5))  # interrupt at different moments
        proc.send_signal(signal.SIGINT if attempt % 2 == 0 else signal.SIGTERM)
        started = time.monotonic()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)  # the CLI prints every thread's stack
            time.sleep(2)
            proc.kill()
            pytest.fail(f"attempt {attempt}: still running 60 s after the signal:\n"
                        f"{proc.communicate()[1][-20000:]}")  # fmt: skip
        took = time.monotonic() - started
        assert proc.returncode == 130, proc.stderr.read()
        if took > 5:
            slow.append(round(took, 1))
        assert _wait_gone(api, marker), f"attempt {attempt}: the build went on"
        tagged = api.images(filters={"label": f"factory.task=test__{marker}"})
        assert not tagged, f"attempt {attempt}: an image was tagged after the interrupt"
    assert not slow, f"exits slower than 5 s: {slow}"


# --- gc ---------------------------------------------------------------------------------------

_BUILDER = """
import sys, time
from pathlib import Path
from factory.runtime import DockerRuntime, LABEL_MANAGED
runtime = DockerRuntime(sys.argv[1])
if sys.argv[2] == "rootfs":
    runtime.import_rootfs(Path(sys.argv[3]), sys.argv[4])
    print("imported", flush=True)
    time.sleep(600)
else:
    runtime.build_image(Path(sys.argv[3]), sys.argv[4], tag=sys.argv[5],
                        labels={LABEL_MANAGED: "1"}, timeout_sec=300)
    print("built", flush=True)
"""


def _helper(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _BUILDER, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
    )


def _leases(api, run_id: str) -> list[str]:
    found = api.volumes(filters={"label": f"factory.run={run_id}"}) or {}
    return [v["Name"] for v in found.get("Volumes") or []]


def _wait_for_step(api, marker: str, proc: subprocess.Popen) -> dict:
    deadline = time.monotonic() + 120
    while True:
        found = [c for c in _step_containers(api, marker) if "sleep" in c["Command"]]
        if found:
            return found[0]
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "the build never reached its slow step"
        time.sleep(0.2)


def test_gc_spares_a_live_build_and_takes_a_dead_ones_leftovers(runtime, tmp_path):
    api = runtime.api
    runs = {kind: f"pytest-gc-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("dead", "live")}

    def dockerfile(run: str, seconds: int) -> str:
        return (
            f"FROM {BASE}\nLABEL factory.managed=1\nRUN echo {run} > /step1\n"
            f"RUN sleep {seconds} # {run}\n"
        )

    dead = _helper(runs["dead"], "build", str(tmp_path), dockerfile(runs["dead"], 300), "x:dead")
    _wait_for_step(api, runs["dead"], dead)
    dead.kill()  # kill -9 mid-build: what it leaves is garbage
    dead.wait()
    assert _leases(api, runs["dead"]), "a killed build leaves its lease"
    live_tag = f"factory-test/gc:{uuid.uuid4().hex[:8]}"
    live = _helper(runs["live"], "build", str(tmp_path), dockerfile(runs["live"], 8), live_tag)
    step = _wait_for_step(api, runs["live"], live)
    try:
        report = collect_garbage(runtime)
        assert step["Id"][:12] not in report.containers
        assert _leases(api, runs["live"]), "the live build's lease was taken"
        assert not _leases(api, runs["dead"]), "the dead build's lease is garbage"
        output, _ = live.communicate(timeout=120)
        assert "built" in output, output  # gc did not break the build in progress
    finally:
        if live.poll() is None:
            live.kill()
        runtime.remove_image(live_tag, force=True)
    assert not _leases(api, runs["live"]), "a finished build returns its lease"


def test_gc_spares_the_rootfs_of_a_live_images_build(runtime, tmp_path):
    rootfs = tmp_path / "rootfs.tar"
    subprocess.run(["tar", "-cf", str(rootfs), "-C", str(EXAMPLES), "taxonomy.yaml"], check=True)
    tag = f"factory/rootfs:pytest-{uuid.uuid4().hex[:8]}"
    owner = _helper(f"pytest-rootfs-{uuid.uuid4().hex[:6]}", "rootfs", str(rootfs), tag)
    try:
        assert owner.stdout.readline().strip() == "imported"
        assert tag not in collect_garbage(runtime).images
        assert runtime.image_exists(tag)
    finally:
        owner.kill()
        owner.wait()
    assert tag in collect_garbage(runtime).images
    assert not runtime.image_exists(tag)
