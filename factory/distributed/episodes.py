"""Agent episodes whose containers live on Ray nodes while the policy stays on the driver.

`factory eval --executor ray` keeps the model where it is (generation is batched across all
live episodes on the driver) and moves the environments out: each ``docker_slots`` slot of the
cluster gets an :class:`EpisodeHost` actor that builds the task's image on its node (cached per
node), starts the episode's container, runs the policy's commands and the verifier there, and
sends back observations and the result. :class:`RemoteEpisode` has the interface of
:class:`factory.agent.harness.Episode`, so the rollout engine drives it unchanged, and
:class:`RayEpisodes` wraps a rollout engine so that at most one episode per slot is live.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from factory.agent.harness import Episode, EpisodeResult, HarnessConfig, save_transcript
from factory.distributed import SLOT_RESOURCE
from factory.distributed.payload import TaskPayload
from factory.distributed.worker import NodeImageBuilder, node_info, unit_run_id
from factory.errors import FactoryError
from factory.runtime import DockerRuntime
from factory.tasks.model import Task, load_task
from factory.validate.outcome import PhaseResult


def result_to_wire(result: EpisodeResult) -> dict[str, Any]:
    """An episode's result as plain data for the trip from a node to the driver (the
    verifier's phase as its JSON): every field, so a remote episode scores, reports and logs
    exactly as a local one."""
    wire = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    wire["verifier"] = result.verifier.model_dump_json() if result.verifier else None
    return wire


def result_from_wire(wire: dict[str, Any]) -> EpisodeResult:
    """:func:`result_to_wire`'s inverse (keys it does not know, such as ``node``, are left)."""
    fields = {f.name for f in dataclasses.fields(EpisodeResult)}
    values = {k: v for k, v in wire.items() if k in fields}
    if values.get("verifier"):
        values["verifier"] = PhaseResult.model_validate_json(values["verifier"])
    return EpisodeResult(**values)


class EpisodeHost:
    """On a node: the tasks shipped here, their images, and the live episodes (a Ray actor)."""

    def __init__(self, run_id: str, harness: HarnessConfig) -> None:
        self.runtime = DockerRuntime(unit_run_id(run_id))
        self.builder = NodeImageBuilder(self.runtime)
        self.harness = harness
        self._tmp = tempfile.TemporaryDirectory(prefix="factory-episodes-")
        self.scratch = Path(self._tmp.name)
        self.tasks: dict[str, tuple[Task, str]] = {}
        self.episodes: dict[str, Episode] = {}
        self._lock = threading.Lock()

    def node(self) -> dict[str, Any]:
        return node_info()

    def _task(self, key: str, payload: TaskPayload) -> tuple[Task, str]:
        with self._lock:
            if key not in self.tasks:
                task = load_task(payload.materialize(self.scratch / "tasks" / key))
                self.tasks[key] = (task, self.builder.ensure(task).ref)
            return self.tasks[key]

    def start(self, episode_id: str, key: str, payload: TaskPayload) -> dict:
        try:
            task, image = self._task(key, payload)
        except FactoryError as exc:  # the image does not build here: an infra failure
            return {"messages": [], "done": True, "infra_error": f"image: {exc}"}
        log_dir = self.scratch / "logs" / episode_id
        episode = Episode(self.runtime, task, image, self.harness, log_dir)
        self.episodes[episode_id] = episode
        messages = episode.start()
        return {
            "messages": messages,
            "tools": episode.tools,
            "done": episode.done,
            "infra_error": episode.infra_error,
        }

    def observe(self, episode_id: str, reply: str, tool_calls: list[dict] | None) -> dict:
        episode = self.episodes[episode_id]
        before = len(episode.messages)
        observation = episode.observe(reply, tool_calls)
        return {
            "observation": observation,
            "done": episode.done,
            "messages": episode.messages[before:],
        }

    def finish(self, episode_id: str) -> dict:
        result = self.episodes.pop(episode_id).finish()
        return {**result_to_wire(result), "node": node_info()}

    def close(self) -> None:
        try:
            self.runtime.close()
        finally:
            self._tmp.cleanup()


class HostPool:
    """One :class:`EpisodeHost` per slot of the cluster, and the tasks already shipped."""

    def __init__(self, cluster, harness: HarnessConfig, *, shared_fs: bool = False) -> None:
        self.cluster = cluster
        self.ray = cluster.ray
        self.shared_fs = shared_fs
        actor = self.ray.remote(EpisodeHost).options(
            num_cpus=0, resources={SLOT_RESOURCE: 1}, max_concurrency=4
        )
        self.hosts = [actor.remote(cluster.run_id, harness) for _ in range(cluster.slots)]
        self._next = itertools.cycle(range(len(self.hosts)))
        self._payloads: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return len(self.hosts)

    def episode(self, local: Episode) -> RemoteEpisode:
        """The remote twin of an episode made for the local harness (never started)."""
        key = f"{local.task.id}-{local.task.content_hash[:12]}"
        with self._lock:
            if key not in self._payloads:
                payload = TaskPayload.pack(local.task.root, shared_fs=self.shared_fs)
                self._payloads[key] = self.ray.put(payload)
            host = self.hosts[next(self._next)]
        return RemoteEpisode(self, host, local, key, self._payloads[key])

    def get(self, ref: Any) -> Any:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            lines = str(exc).strip().splitlines()
            raise FactoryError(f"episode host: {lines[-1] if lines else exc!r}") from None

    def close(self) -> None:
        """Close every host (their containers go) and end the actors; then sweep the nodes."""
        refs = [host.close.remote() for host in self.hosts]
        try:
            self.ray.wait(refs, num_returns=len(refs), timeout=60)
        finally:
            for host in self.hosts:
                with contextlib.suppress(Exception):  # already gone
                    self.ray.kill(host)
            self.hosts = []
            self.cluster.sweep()


class RemoteEpisode:
    """:class:`Episode`'s interface; the container and the commands live on an EpisodeHost."""

    def __init__(self, pool: HostPool, host: Any, local: Episode, key: str, payload: Any) -> None:
        self.pool = pool
        self.host = host
        self.task = local.task
        self.config = local.config
        self.log_dir = local.log_dir
        self.key = key
        self.payload = payload
        self.id = uuid.uuid4().hex[:12]
        self.messages: list[dict] = []
        self.tools: list[dict] = []
        """The tools the episode offers (tool-call format), as its host listed them."""
        self.done = False
        self.infra_error: str | None = None
        self._started = time.monotonic()

    def opening(self) -> list[dict]:
        return Episode(None, self.task, "", self.config).opening()  # type: ignore[arg-type]

    def start(self) -> list[dict]:
        try:
            answer = self.pool.get(self.host.start.remote(self.id, self.key, self.payload))
        except FactoryError as exc:
            self.messages, self.done, self.infra_error = self.opening(), True, str(exc)
            return self.messages
        self.messages = answer["messages"] or self.opening()
        self.tools = answer.get("tools") or []
        self.done = answer["done"]
        self.infra_error = answer["infra_error"]
        return self.messages

    def observe(self, reply: str, tool_calls: list[dict] | None = None) -> str | None:
        if self.done:
            return None
        try:
            answer = self.pool.get(self.host.observe.remote(self.id, reply, tool_calls))
        except FactoryError as exc:
            self.infra_error, self.done = str(exc), True
            return None
        self.messages.extend(answer["messages"])
        self.done = answer["done"]
        return answer["observation"]

    def finish(self) -> EpisodeResult:
        self.done = True
        try:
            done = self.pool.get(self.host.finish.remote(self.id))
        except FactoryError as exc:
            result = EpisodeResult(
                task_id=self.task.id,
                reward=None,
                turns=sum(1 for m in self.messages if m["role"] == "assistant"),
                infra_error=self.infra_error or str(exc),
                transcript=list(self.messages),
                seconds=time.monotonic() - self._started,
            )
        else:
            result = result_from_wire(done)
            result.seconds = time.monotonic() - self._started
        if self.log_dir is not None:
            save_transcript(self.log_dir, result)
        return result


class RayEpisodes:
    """Wraps a rollout engine (``run(episodes, groups) -> (rollouts, stats)``): the episodes it
    is given (local, never started) run as :class:`RemoteEpisode` on the cluster, at most one
    live episode per slot (in chunks of the cluster's slot count)."""

    def __init__(self, engine, pool: HostPool) -> None:
        self.engine = engine
        self.pool = pool

    def run(self, episodes: list[Episode], groups: list[int]):
        remote = [self.pool.episode(e) for e in episodes]
        rollouts: list = []
        stats: dict[str, float] = {}
        for start in range(0, len(remote), self.pool.size):
            part, part_stats = self.engine.run(
                remote[start : start + self.pool.size], groups[start : start + self.pool.size]
            )
            rollouts += part
            for key, value in part_stats.items():
                stats[key] = stats.get(key, 0.0) + value
        return rollouts, stats

    def close(self) -> None:
        self.engine.close()
