"""The separate verifier's fresh container (factory.validate.separate): started in the background
while the agent's container is isolated and its artifacts are copied, never left behind when
something fails, and given every artifact with one command and one archive. Docker-free: a
recording stand-in for the sandbox."""

from __future__ import annotations

import io
import subprocess
import tarfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from factory.errors import ContainerDiedError, EnvironmentUnhealthyError
from factory.runtime import BUSYBOX, ContainerSpec
from factory.tasks.model import Task, load_task
from factory.validate.separate import restore_artifacts, start_verifier, verifier_container

TASK_TOML = """
version = "1.0"
artifacts = ["/app/report.txt"]

[verifier]
environment_mode = "separate"
timeout_sec = 60.0

[[verifier.collect]]
command = "true"
"""


@dataclass
class FakeBox:
    runtime: FakeRuntime
    spec: ContainerSpec
    unhealthy: bool = False
    calls: list = field(default_factory=list)
    closed: int = 0

    def wait_ready(self) -> float:
        self.runtime.ready.wait(5)
        if self.unhealthy:
            raise EnvironmentUnhealthyError("healthcheck failed 3 times")
        return 0.0

    def exec_checked(self, command, **kwargs):
        self.calls.append(("exec", command))

    def exec(self, command, **kwargs):
        self.calls.append(("exec", command))
        raise ContainerDiedError("the agent's container is gone")

    def put_tar(self, parent, data):
        self.calls.append(("put_tar", parent, data))

    def close(self) -> None:
        self.closed += 1


@dataclass
class FakeRuntime:
    unhealthy: bool = False
    started: list = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)

    def start(self, spec):
        box = FakeBox(self, spec, unhealthy=self.unhealthy)
        self.started.append(box)
        return box


def _task(tmp_path: Path) -> Task:
    root = tmp_path / "task"
    (root / "tests").mkdir(parents=True)
    (root / "solution").mkdir()
    (root / "environment").mkdir()
    (root / "environment" / "Dockerfile").write_text("FROM factory/base:bookworm\n")
    (root / "instruction.md").write_text("Write the report.\n")
    (root / "tests" / "test.sh").write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    (root / "solution" / "solve.sh").write_text("#!/bin/sh\ntrue\n")
    (root / "task.toml").write_text(TASK_TOML)
    return load_task(root)


def test_the_fresh_container_starts_before_the_agents_side_is_done(tmp_path):
    runtime = FakeRuntime()
    agent = FakeBox(runtime, ContainerSpec(image="img"))
    starting = start_verifier(_task(tmp_path), agent, ContainerSpec(image="img", network=True))
    for _ in range(100):  # the start runs on its own thread, before anyone asks for it
        if runtime.started:
            break
        threading.Event().wait(0.01)
    assert len(runtime.started) == 1
    assert runtime.started[0].spec.network is False  # the task's verifier network: none
    runtime.ready.set()
    fresh, seconds = starting.result()
    assert fresh is runtime.started[0] and seconds >= 0
    starting.close()
    starting.close()
    assert fresh.closed == 1


def test_an_unhealthy_fresh_container_is_a_named_error_and_is_removed(tmp_path):
    runtime = FakeRuntime(unhealthy=True)
    runtime.ready.set()
    agent = FakeBox(runtime, ContainerSpec(image="img"))
    starting = start_verifier(_task(tmp_path), agent, ContainerSpec(image="img"))
    with pytest.raises(ContainerDiedError, match="separate verifier's container"):
        starting.result()
    starting.close()
    assert runtime.started[0].closed == 1


def test_the_fresh_container_is_removed_when_the_agents_side_fails(tmp_path):
    """A collect hook whose container died: the error goes up, the fresh container (whose
    start is still under way) is removed once started, nothing is left behind."""
    runtime = FakeRuntime()
    agent = FakeBox(runtime, ContainerSpec(image="img"))
    task = _task(tmp_path)
    starting = start_verifier(task, agent, ContainerSpec(image="img"))
    timer = threading.Timer(0.2, runtime.ready.set)
    timer.start()
    with (
        pytest.raises(ContainerDiedError, match="gone"),
        verifier_container(task, agent, starting, tmp_path, {}),
    ):
        pytest.fail("the body must not run")
    timer.join()
    assert [b.closed for b in runtime.started] == [1]
    assert "separate verifier" in (tmp_path / "artifacts.log").read_text()


def _local(tmp_path: Path) -> list[tuple[str, str, Path]]:
    folder = tmp_path / "copies" / "0"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "mod.py").write_text("x = 1\n")
    report = tmp_path / "copies" / "1"
    report.write_text("answer\n")
    return [("/", "app", folder), ("/srv/out", "report.txt", report)]


def test_every_artifact_is_placed_with_one_command_and_one_archive(tmp_path):
    box = FakeBox(FakeRuntime(), ContainerSpec(image="img"))
    restore_artifacts(box, _local(tmp_path))
    (exec_call, tar_call) = box.calls
    assert exec_call[0] == "exec" and tar_call[:2] == ("put_tar", "/")
    command = exec_call[1]
    assert command[:3] == [BUSYBOX, "sh", "-c"]
    assert command[4:] == ["restore", "/app", "/", "/srv/out/report.txt", "/srv/out"]
    with tarfile.open(fileobj=io.BytesIO(tar_call[2])) as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert sorted(members) == ["app", "app/pkg", "app/pkg/mod.py", "srv/out/report.txt"]
        assert all(m.uid == 0 and m.gid == 0 for m in members.values())
        assert archive.extractfile("srv/out/report.txt").read() == b"answer\n"


def test_the_placing_command_empties_folders_and_opens_file_parents(tmp_path):
    """The command itself, run here with the host's tools on paths under tmp_path: a folder
    target is emptied (what the agent's copy had is gone) and made mode 777, a file target's
    parent is created with mode 777 (Harbor's empty_dirs / ensure_dirs)."""
    box = FakeBox(FakeRuntime(), ContainerSpec(image="img"))
    restore_artifacts(box, _local(tmp_path))
    command = box.calls[0][1]
    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    (root / "app" / "stale.txt").write_text("from the image\n")
    args = [str(root) + a for a in command[5:]]
    script = command[3].replace(f"{BUSYBOX} ", "")
    subprocess.run(["sh", "-c", script, "restore", *args], check=True)
    assert list((root / "app").iterdir()) == []
    assert (root / "app").stat().st_mode & 0o777 == 0o777
    assert (root / "srv" / "out").is_dir()
    assert (root / "srv" / "out").stat().st_mode & 0o777 == 0o777


def test_no_artifacts_no_calls(tmp_path):
    box = FakeBox(FakeRuntime(), ContainerSpec(image="img"))
    restore_artifacts(box, [])
    assert box.calls == []
