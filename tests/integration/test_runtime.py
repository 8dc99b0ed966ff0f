"""The Docker runtime against the real engine: sandbox settings, timeouts, cleanup."""

from __future__ import annotations

import time

import pytest

from factory.errors import CancelledError
from factory.runtime import (
    FACTORY_NETWORK,
    HARNESS_MOUNT,
    LABEL_MANAGED,
    LABEL_RUN,
    LABEL_TASK,
    ContainerSpec,
)

pytestmark = pytest.mark.docker
BASE = "factory/base:bookworm"


def test_container_is_sandboxed(runtime):
    spec = ContainerSpec(image=BASE, cpus=1, memory_mb=256, pids_limit=64, task_id="t-sandbox")
    with runtime.start(spec) as box:
        info = runtime.api.inspect_container(box.id)
        host = info["HostConfig"]
        assert host["Privileged"] is False
        assert host["NetworkMode"] == "none"
        assert host["Memory"] == 256 * 1024 * 1024
        assert host["NanoCpus"] == 1_000_000_000
        assert host["PidsLimit"] == 64
        assert "no-new-privileges" in host["SecurityOpt"]
        # the only mount is factory's harness toolkit, read-only (verifier isolation)
        mounts = [(m["Destination"], m["RW"]) for m in info["Mounts"]]
        assert mounts == [(HARNESS_MOUNT, False)]
        labels = info["Config"]["Labels"]
        assert labels[LABEL_MANAGED] == "1"
        assert labels[LABEL_RUN] == runtime.run_id
        assert labels[LABEL_TASK] == "t-sandbox"
        # no network interface but loopback
        result = box.exec(["sh", "-c", "ls /sys/class/net"], timeout_sec=10)
        assert result.output.split() == ["lo"]


def test_network_only_when_allowed(runtime):
    """A container that may use the network gets factory's filtered bridge, never the default
    one (tests/integration/test_sandbox_docker.py checks what the filter blocks)."""
    with runtime.start(ContainerSpec(image=BASE, network=True)) as box:
        mode = runtime.api.inspect_container(box.id)["HostConfig"]["NetworkMode"]
        assert mode == runtime.container_network()
        assert mode in (FACTORY_NETWORK, "none")
        assert mode != "bridge"


def test_pids_limit_is_enforced(runtime):
    with runtime.start(ContainerSpec(image=BASE, pids_limit=32)) as box:
        code = "import subprocess\n[subprocess.Popen(['sleep', '3']) for _ in range(100)]"
        result = box.exec(["python3", "-c", code], timeout_sec=30)
        assert result.exit_code != 0
        assert "Resource temporarily unavailable" in result.output


def test_exec_output_and_exit_code(runtime):
    with runtime.start(ContainerSpec(image=BASE)) as box:
        result = box.exec(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout_sec=10)
        assert result.exit_code == 3
        assert "out" in result.output and "err" in result.output
        assert not result.timed_out


def test_output_is_capped(runtime):
    with runtime.start(ContainerSpec(image=BASE)) as box:
        result = box.exec(
            ["sh", "-c", "yes x | head -c 3000000"], timeout_sec=30, max_output=10_000
        )
        assert result.truncated and len(result.output) < 12_000
        assert "bytes dropped" in result.output


def test_looping_exec_is_killed_at_its_timeout(runtime):
    box = runtime.start(ContainerSpec(image=BASE))
    started = time.monotonic()
    result = box.exec(["bash", "-c", "while :; do :; done"], timeout_sec=2)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.exit_code is None
    assert elapsed < 15
    # the container (and with it the loop) is gone
    assert not box.is_running()
    box.close()


def test_upload_and_download(runtime, tmp_path):
    src = tmp_path / "payload"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("alpha\n")
    (src / "sub" / "b.sh").write_text("#!/bin/sh\necho beta\n")
    (src / "sub" / "b.sh").chmod(0o755)
    with runtime.start(ContainerSpec(image=BASE)) as box:
        box.upload_dir(src, "/data")
        result = box.exec(
            ["sh", "-c", "cat /data/a.txt; /data/sub/b.sh; stat -c %U /data/a.txt"], timeout_sec=10
        )
        assert result.output.split() == ["alpha", "beta", "root"]
        box.exec(["sh", "-c", "mkdir -p /out && echo 1 > /out/r.txt"], timeout_sec=10)
        assert box.download_dir("/out") == {"r.txt": b"1\n"}
        assert box.download_dir("/does-not-exist") == {}


def test_close_removes_every_container_and_refuses_new_ones(runtime):
    for _ in range(3):
        runtime.start(ContainerSpec(image=BASE))
    assert runtime.live_containers() == 3
    runtime.close()
    left = runtime.api.containers(all=True, filters={"label": f"{LABEL_RUN}={runtime.run_id}"})
    assert left == []
    with pytest.raises(CancelledError):
        runtime.start(ContainerSpec(image=BASE))


def test_unenforceable_disk_quota_is_dropped_not_fatal(runtime):
    """overlay2 on ext4 has no quotas: storage_mb must not make every task an infra error."""
    with runtime.start(ContainerSpec(image=BASE, storage_mb=512)) as box:
        assert box.exec(["true"], timeout_sec=10).exit_code == 0


def test_what_an_image_holds_is_read_afresh_when_its_tag_moves(runtime):
    """The runtime answers "what does the image have at PATH" from a created container of the
    image; keyed by the image id, a tag that the runtime points elsewhere is read again (keyed
    by the tag, the old image's files kept answering)."""
    tag, path = "factory-test/moving-tag:1", "/usr/local/bin/pip3.11"
    try:
        runtime.tag_image(BASE, tag)
        assert runtime.image_path_kind(tag, path) is None
        assert runtime.image_archive(tag, path) is None
        runtime.tag_image("factory/python:bookworm", tag)
        assert runtime.image_path_kind(tag, path) == "file"
        assert runtime.image_archive(tag, path)
    finally:
        runtime.remove_image(tag)
