"""The executor options, what travels to and from a Ray node, and the Ray connection's error
mapping (on a one-node Ray instance in this process; skipped without Ray)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from fixtures.fresh_import import loaded_after_import

import factory.distributed as distributed
from factory.distributed import ExecutorKind, executor_options
from factory.distributed.payload import TaskPayload, pack_logs, relocate, unpack_logs
from factory.distributed.ray_executor import node_note, node_of
from factory.errors import CancelledError, FactoryError
from factory.tasks.hashing import hash_tree
from factory.validate.outcome import Outcome, TaskValidation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_executor_options():
    assert executor_options("local").kind is ExecutorKind.LOCAL
    with pytest.raises(FactoryError, match="--executor must be local or ray"):
        executor_options("slurm")
    with pytest.raises(FactoryError, match="need --executor ray"):
        executor_options("local", "127.0.0.1:6379")


def test_ray_executor_without_ray_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(distributed, "ray_installed", lambda: False)
    with pytest.raises(FactoryError, match=r"needs Ray, which is not installed: pip install"):
        executor_options("ray", "127.0.0.1:6379")


def test_cli_says_how_to_install_ray(tmp_path):
    # A `ray` that cannot be found: a meta-path finder that hides it.
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ray' or name.startswith('ray.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "factory", "validate", str(EXAMPLES / "tasks"), "--executor", "ray"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(hide)},
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "--executor ray needs Ray" in done.stderr and "pip install" in done.stderr
    assert "Traceback" not in done.stderr


def test_importing_factory_does_not_import_ray():
    parts = ["cluster", "ray_executor", "worker", "episodes", "localcluster"]
    modules = ["factory", "factory.cli", "factory.distributed"]
    modules += [f"factory.distributed.{name}" for name in parts]
    assert loaded_after_import(modules, ["ray"]) == []


def test_task_payload_round_trip_keeps_the_content_hash(tmp_path):
    src = tmp_path / "src" / "my-task"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test.sh").write_text("#!/bin/sh\nexit 0\n")
    (src / "tests" / "test.sh").chmod(0o755)
    (src / "instruction.md").write_text("do it\n")
    (src / "link").symlink_to("instruction.md")
    payload = TaskPayload.pack(src)
    assert payload.tar and payload.path is None and payload.name == "my-task"
    there = payload.materialize(tmp_path / "node")
    assert there == tmp_path / "node" / "my-task"
    assert hash_tree(there) == hash_tree(src)
    assert os.access(there / "tests" / "test.sh", os.X_OK)

    shared = TaskPayload.pack(src, shared_fs=True)
    assert shared.tar is None and shared.materialize(tmp_path / "unused") == src.resolve()


def test_logs_come_back_and_paths_are_rewritten(tmp_path):
    node_logs = tmp_path / "scratch" / "out" / "logs" / "t1"
    (node_logs / "nop-1").mkdir(parents=True)
    (node_logs / "nop-1" / "test.log").write_text("ok\n")
    (node_logs / "build.log").write_text("built\n")
    verdict = TaskValidation(
        id="t1",
        path="x",
        outcome=Outcome.VALID,
        reason="",
        logs={"build": str(node_logs / "build.log"), "nop-1": str(node_logs / "nop-1")},
    )
    dest = tmp_path / "driver" / "logs" / "t1-2"
    (dest / "stale").mkdir(parents=True)  # an earlier attempt's logs are replaced
    unpack_logs(pack_logs(node_logs), dest)
    moved = TaskValidation.model_validate_json(
        relocate(verdict.model_dump_json(), str(node_logs), str(dest))
    )
    assert Path(moved.logs["build"]).read_text() == "built\n"
    assert (Path(moved.logs["nop-1"]) / "test.log").read_text() == "ok\n"
    assert not (dest / "stale").exists()
    assert pack_logs(tmp_path / "missing") == b""


def test_node_note_round_trip():
    verdict = TaskValidation(
        id="t",
        path="p",
        outcome=Outcome.VALID,
        reason="",
        notes=["x", node_note({"node_id": "abcdef0123456789", "host": "box"})],
    )
    assert node_of(verdict) == "abcdef012345"
    assert node_of(verdict.model_copy(update={"notes": []})) is None


# --- a one-node Ray instance in this process ------------------------------------------


@pytest.fixture(scope="module")
def local_cluster():
    if not distributed.ray_installed():
        pytest.skip("ray is not installed (pip install -e '.[ray]')")
    from factory.distributed.cluster import RayCluster

    cluster = RayCluster(
        executor_options("ray"), run_id=f"pytest-unit-{os.getpid()}", local_slots=2
    )
    yield cluster
    cluster.shutdown()


def test_ray_call_maps_errors_and_cancels(local_cluster):
    assert local_cluster.slots == 2

    def ok(x):
        return x + 1

    def fails():
        raise FactoryError("the task said no")

    def crashes():
        raise ValueError("a bug")

    assert local_cluster.call(ok, 41) == 42
    with pytest.raises(FactoryError, match="on a Ray node: the task said no"):
        local_cluster.call(fails)
    with pytest.raises(FactoryError, match="on a Ray node: .*a bug"):
        local_cluster.call(crashes)

    def sleeps():
        time.sleep(60)

    errors: list[BaseException] = []

    def waiter():
        try:
            local_cluster.call(sleeps)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=waiter)
    thread.start()
    deadline = time.monotonic() + 30
    while not local_cluster._outstanding and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # let it start on the node
    local_cluster.cancel()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert errors and isinstance(errors[0], CancelledError)
    with pytest.raises(CancelledError):
        local_cluster.call(ok, 1)  # a cancelled run takes no more work


class FakeCluster:
    """Stands in for a Ray cluster: answers like a node, from a scratch folder of its own."""

    slots = 2
    run_id = "run-x"

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.calls: list[str] = []
        self.cancelled = False

    def call(self, fn, work, payload, run_id, build_network):
        from factory.distributed.worker import run_on_node
        from factory.validate.checker import check_task

        assert fn is run_on_node and work.fn is check_task and run_id == "run-x"
        assert build_network == "filtered"  # the driver's choice reaches every node
        assert work.kwargs["repeats"] == 2
        self.calls.append(payload.name)  # list.append is atomic; the pool calls from threads
        unit = uuid.uuid4().hex
        task_dir = payload.materialize(self.scratch / "task" / unit)
        assert (task_dir / "task.toml").is_file()
        logs = self.scratch / "out" / unit / "logs"
        (logs / "nop-1").mkdir(parents=True)
        (logs / "nop-1" / "test.log").write_text("from the node\n")
        verdict = TaskValidation(
            id="node-id",
            path=str(task_dir),
            outcome=Outcome.VALID,
            reason=f"{task_dir}/solution/solve.sh: said hello",
            content_hash="node-hash",
            logs={"nop-1": str(logs / "nop-1")},
            timings={"total": 0.5},
            notes=["built on the node"],
        )
        return {
            "result": verdict.model_dump_json(),
            "logs": pack_logs(logs),
            "log_root": str(logs),
            "task_dir": str(task_dir),
            "node": {"node_id": "f00d" * 8, "host": "node-1"},
        }

    def cancel(self):
        self.cancelled = True


def test_ray_validator_bookkeeping_matches_the_local_validator(tmp_path):
    import json

    from factory.distributed.ray_executor import RayExecutor
    from factory.runtime import DockerRuntime
    from factory.tasks.model import discover_task_dirs, load_task
    from factory.validate.validator import Validator

    dirs = discover_task_dirs([EXAMPLES / "tasks"])[:2]
    cluster = FakeCluster(tmp_path / "node")
    out = tmp_path / "out"
    ray = RayExecutor(cluster, DockerRuntime("run-x"))
    validator = Validator(ray.runtime, out, repeats=2, executor=ray)
    assert validator.jobs == 4  # 2 slots + 2 queued
    report = validator.run(dirs + dirs[:1])  # the same task twice: unique ids, as locally
    assert sorted(cluster.calls) == sorted([d.name for d in dirs] + [dirs[0].name])
    ids = sorted(t.id for t in report.tasks)
    first = load_task(dirs[0])
    assert ids.count(first.id) == 1 and f"{first.id}-2" in ids
    for verdict in report.tasks:
        task = load_task(Path(verdict.path))
        assert verdict.content_hash == task.content_hash  # the driver's, not the node's
        assert verdict.logs["nop-1"] == str(out / "logs" / verdict.id / "nop-1")
        assert (Path(verdict.logs["nop-1"]) / "test.log").read_text() == "from the node\n"
        assert node_of(verdict) == "f00d" * 3 and "built on the node" in verdict.notes
        assert verdict.timings["total"] == 0.5 and verdict.timings["dispatch"] >= 0
        assert verdict.reason == f"{task.root}/solution/solve.sh: said hello"  # driver's path
    saved = json.loads((out / "validation.json").read_text())
    assert saved["summary"] == {"valid": 3, "total": 3}

    # Resume: certified with the same content hash -> nothing goes to the cluster.
    again = FakeCluster(tmp_path / "node2")
    ray = RayExecutor(again, DockerRuntime("run-x"))
    report = Validator(ray.runtime, out, repeats=2, executor=ray).run(dirs)
    assert again.calls == [] and all(t.resumed for t in report.tasks)


def test_an_interrupted_ray_run_cancels_the_cluster(tmp_path):
    from factory.distributed.ray_executor import RayExecutor
    from factory.runtime import DockerRuntime
    from factory.tasks.model import discover_task_dirs
    from factory.validate.validator import Validator

    class Interrupted(FakeCluster):
        def call(self, *args):
            raise KeyboardInterrupt

    cluster = Interrupted(tmp_path / "node")
    ray = RayExecutor(cluster, DockerRuntime("run-x"))
    validator = Validator(ray.runtime, tmp_path / "out", executor=ray)
    with pytest.raises(KeyboardInterrupt):
        validator.validate(discover_task_dirs([EXAMPLES / "tasks"])[0])
        validator.cancel()  # what Validator.run does when its wait is interrupted
    validator.cancel()
    assert cluster.cancelled


def test_a_remote_episode_reports_and_logs_what_the_node_reported(tmp_path):
    """Every field of the node's result reaches the driver (a policy error, the customer
    conversation, the checks, the verifier's phase), and the driver's transcript line is the
    one the local harness writes for that result."""
    from types import SimpleNamespace

    from factory.agent.harness import EpisodeResult, save_transcript
    from factory.distributed.episodes import RemoteEpisode, result_to_wire
    from factory.validate.outcome import PhaseKind, PhaseResult

    on_node = EpisodeResult(
        task_id="t-1",
        reward=0.0,
        turns=3,
        policy_error="the policy's command stopped the environment",
        verifier=PhaseResult(kind=PhaseKind.ORACLE, repeat=1, reward=0.0, test_exit_code=1),
        transcript=[{"role": "user", "content": "do it"}, {"role": "assistant", "content": "x"}],
        seconds=7.0,
        conversation=[{"role": "customer", "content": "hi", "source": "scripted"}],
        checks={"communicate": "the agent never told the customer the refund"},
    )

    class Call:
        def __init__(self, answer):
            self.answer = answer

        def remote(self, *args):
            return self.answer

    host = SimpleNamespace(finish=Call({**result_to_wire(on_node), "node": {"host": "n1"}}))
    pool = SimpleNamespace(get=lambda ref: ref)
    local = SimpleNamespace(task=SimpleNamespace(id="t-1"), config=None, log_dir=tmp_path / "ray")
    got = RemoteEpisode(pool, host, local, "key", payload=None).finish()

    assert {**vars(got), "seconds": 7.0} == vars(on_node)
    save_transcript(tmp_path / "local", on_node)
    remote_line = json.loads((tmp_path / "ray" / "transcript.jsonl").read_text())
    local_line = json.loads((tmp_path / "local" / "transcript.jsonl").read_text())
    assert {**remote_line, "seconds": 7.0} == local_line
    assert local_line["policy_error"] and local_line["checks"] and local_line["conversation"]
