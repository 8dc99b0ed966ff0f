"""``--executor ray``: the :class:`~factory.executor.Executor` whose units run on Ray nodes.

The driver keeps what is cheap and needs the whole run (parsing tasks, ids, resuming, reports,
journals, generation); each unit of work travels to a node with a free ``docker_slots`` slot
together with its task directory, runs there against the node's own engine, and sends back its
result and its logs, which land where the local executor would have put them. Episodes keep the
policy on the driver while their containers live on the nodes
(:mod:`factory.distributed.episodes`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from factory.distributed.cluster import RayCluster
from factory.distributed.payload import TaskPayload, relocate, unpack_logs
from factory.distributed.worker import run_on_node
from factory.executor import Done, EpisodeSite, Executor, R, Work
from factory.runtime import DockerRuntime
from factory.tasks.model import Task
from factory.validate.outcome import TaskValidation

NODE_NOTE = "ray node "


def node_note(node: dict) -> str:
    """The note that says where a unit ran (``ray node <id> on <host>``)."""
    return f"{NODE_NOTE}{node['node_id'][:12]} on {node['host']}"


def node_of(verdict: TaskValidation) -> str | None:
    """The Ray node id (12 characters) a verdict was made on, from its notes."""
    for note in verdict.notes:
        if note.startswith(NODE_NOTE):
            return note[len(NODE_NOTE) :].split()[0]
    return None


class RayExecutor(Executor):
    """One unit of work per ``docker_slots`` slot of the cluster; the task directory travels as
    a tar, or as its path with ``shared_fs``."""

    def __init__(
        self, cluster: RayCluster, runtime: DockerRuntime, *, shared_fs: bool = False
    ) -> None:
        self.cluster = cluster
        self.runtime = runtime
        self.run_id = cluster.run_id
        self.slots = cluster.slots
        self.queue = min(cluster.slots, 4)
        self.shared_fs = shared_fs

    def run(self, work: Work[R], task_dir: Path, logs: Path) -> Done[R]:
        started = time.monotonic()
        payload = TaskPayload.pack(task_dir, shared_fs=self.shared_fs)
        done = self.cluster.call(
            run_on_node, work, payload, self.run_id, self.runtime.build_network.value
        )
        unpack_logs(done["logs"], logs)
        # Paths on the node (its scratch logs, its copy of the task) -> paths here.
        text = relocate(done["result"], done["log_root"], str(logs))
        text = relocate(text, done["task_dir"], str(task_dir))
        result = TypeAdapter(work.result).validate_json(text)
        return Done(result, where=node_note(done["node"]), seconds=time.monotonic() - started)

    def episode_site(self) -> EpisodeSite:
        return RayEpisodeSite(self)

    def describe(self) -> str:
        return f"ray: {self.cluster.describe()}"

    def cancel(self) -> None:
        self.cluster.cancel()

    def close(self) -> None:
        self.cluster.shutdown()


class RayEpisodeSite(EpisodeSite):
    """Episodes' containers on the nodes (one live episode per slot): images are built there,
    and a rollout engine's episodes are run as remote twins."""

    runtime = None

    def __init__(self, executor: RayExecutor) -> None:
        self.executor = executor
        self.slots = executor.slots
        self._pool: Any = None
        self._lock = threading.Lock()

    def image(self, task: Task) -> str:
        return ""  # built on the node, when an episode of the task first starts there

    def engine(self, engine: Any) -> Any:
        return _RemoteEngine(self, engine)

    def pool(self, harness) -> Any:
        """The episode hosts (made on first use: they take the harness settings)."""
        from factory.distributed.episodes import HostPool

        with self._lock:
            if self._pool is None:
                self._pool = HostPool(
                    self.executor.cluster, harness, shared_fs=self.executor.shared_fs
                )
            return self._pool

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


class _RemoteEngine:
    """A rollout engine whose episodes (local, never started) run on the site's hosts."""

    def __init__(self, site: RayEpisodeSite, engine: Any) -> None:
        self.site = site
        self.engine = engine

    def run(self, episodes: list, groups: list[int]):
        from factory.distributed.episodes import RayEpisodes

        if not episodes:
            return [], {}
        pool = self.site.pool(episodes[0].config)
        return RayEpisodes(self.engine, pool).run(episodes, groups)
