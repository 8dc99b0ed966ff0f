"""What runs on a Ray node: one unit of work against the node's own Docker engine.

Plain functions (the driver wraps them with ``ray.remote``), so this module imports without
Ray. A unit of work (:class:`factory.executor.Work`: check a task, certify a candidate) gets a
scratch folder and a :class:`DockerRuntime` of its own, with a run id of its own under the
driver's (``<driver run id>-<unit>``: closing a runtime sweeps its run id, and
units on one engine must not sweep each other's containers). The runtime is closed on every
exit path, cancellation included (Ray raises KeyboardInterrupt in a cancelled task), so a
cancelled unit leaves no container behind; :func:`sweep_node` is the driver's belt and braces.
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

from factory import __version__
from factory.distributed.payload import TaskPayload, pack_logs
from factory.executor import Site, Work
from factory.images.task_image import TaskImageBuilder
from factory.runtime import LABEL_MANAGED, LABEL_RUN, BuildNetwork, DockerRuntime

LOCK_DIR = Path(tempfile.gettempdir()) / "factory-image-locks"


def node_info() -> dict[str, Any]:
    """Who ran this: the Ray node id, host name, worker pid and factory version."""
    node_id = ""
    try:
        import ray

        node_id = ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - outside Ray (unit tests)
        pass
    return {
        "node_id": node_id,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "version": __version__,
    }


def probe_node(base_image: str) -> dict[str, Any]:
    """Pre-flight on one node: is its engine up, does it hold the base image?"""
    info = node_info()
    runtime = DockerRuntime(f"probe-{uuid.uuid4().hex[:6]}")
    try:
        runtime.ping()
        info["docker"] = None
        info["base_image"] = runtime.image_exists(base_image)
    except Exception as exc:  # noqa: BLE001 - reported to the driver as text
        info["docker"] = str(exc)
        info["base_image"] = False
    return info


def unit_run_id(run_id: str) -> str:
    return f"{run_id}-{uuid.uuid4().hex[:6]}"


class _NodeLock:
    """A thread lock plus a file lock: one build per environment hash on this node, across the
    worker processes Ray runs side by side."""

    def __init__(self, thread_lock: threading.Lock, path: Path) -> None:
        self.thread_lock = thread_lock
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> _NodeLock:
        self.thread_lock.acquire()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o666)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._release_fd()
            self.thread_lock.release()
            raise
        return self

    def _release_fd(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __exit__(self, *exc: object) -> None:
        try:
            self._release_fd()
        finally:
            self.thread_lock.release()


class NodeImageBuilder(TaskImageBuilder):
    """Task images built once per environment hash per node (not just per process)."""

    def _lock_for(self, key: str) -> _NodeLock:  # type: ignore[override]
        return _NodeLock(super()._lock_for(key), LOCK_DIR / f"{key[:32]}.lock")


class _Unit:
    """Scratch folder, runtime and site of one unit of work; all gone on exit."""

    def __init__(self, run_id: str, build_network: str = BuildNetwork.FILTERED.value) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="factory-ray-")
        self.scratch = Path(self._tmp.name)
        self.runtime = DockerRuntime(unit_run_id(run_id), build_network=BuildNetwork(build_network))
        self.site = Site(self.runtime, images=NodeImageBuilder(self.runtime))

    def __enter__(self) -> _Unit:
        return self

    def __exit__(self, exc_type, *_: object) -> None:
        if exc_type is not None:
            self.site.cancelled.set()  # stop between phases
        try:
            self.site.close(cancel=True)
        finally:
            try:
                self.runtime.close()
            finally:
                self._tmp.cleanup()


def run_on_node(
    work: Work, payload: TaskPayload, run_id: str, build_network: str = BuildNetwork.FILTERED.value
) -> dict:
    """Run one unit of work here on the task in ``payload`` (image builds on ``build_network``);
    its result (JSON) and its logs (a tar) go back, with the paths the driver rewrites to its
    own."""
    from pydantic import TypeAdapter

    with _Unit(run_id, build_network) as unit:
        task_dir = payload.materialize(unit.scratch / "task")
        logs = unit.scratch / "logs"
        result = work(unit.site, task_dir, logs)
        return {
            "result": TypeAdapter(work.result).dump_json(result).decode(),
            "logs": pack_logs(logs),
            "log_root": str(logs),
            "task_dir": str(task_dir),
            "node": node_info(),
        }


def sweep_node(run_id: str) -> int:
    """Remove this node's containers of the driver's run (every unit's run id starts with it)."""
    runtime = DockerRuntime(f"{run_id}-sweep")
    removed = 0
    try:
        found = runtime.api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"})
        for item in found:
            owner = (item.get("Labels") or {}).get(LABEL_RUN, "")
            if owner == run_id or owner.startswith(f"{run_id}-"):
                try:
                    runtime.api.remove_container(item["Id"], force=True, v=True)
                    removed += 1
                except Exception:  # noqa: BLE001 - already gone
                    pass
    except Exception:  # noqa: BLE001 - no engine: nothing to sweep
        return 0
    return removed
