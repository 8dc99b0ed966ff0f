"""Task containers: created unprivileged with CPU / memory / pids / storage limits and no network
unless allowed, tracked while live, and removed on every exit path (:meth:`close`)."""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from factory.errors import CancelledError, ContainerDiedError
from factory.runtime.client import docker_sdk
from factory.runtime.constants import (
    CLOSE_DEADLINE_SEC,
    HARNESS_MOUNT,
    KIND_CONTAINER,
    LABEL_KIND,
    LABEL_RUN,
)
from factory.runtime.group import NETWORK_MARK
from factory.runtime.sandbox import ContainerSpec, Sandbox

log = logging.getLogger(__name__)

_KEEP_ALIVE = ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"]


def file_size_limit(size_mb: int):
    """RLIMIT_FSIZE at ``size_mb``: the cap on each file where the total cannot be capped."""
    size = size_mb << 20
    return docker_sdk().types.Ulimit(name="fsize", soft=size, hard=size)


class ContainersMixin:
    """The containers of a :class:`~factory.runtime.engine.DockerRuntime`."""

    run_id: str
    _lock: threading.Lock
    _live: dict[str, Sandbox]
    _closing: bool
    _removals: queue.Queue[str | None]
    _reaper: threading.Thread | None
    _storage_quota: bool | None

    def start(self, spec: ContainerSpec) -> Sandbox:
        """Create and start a sandboxed container that idles until commands are exec'd; with
        ``spec.services``, its sidecars first, on a network of its own."""
        if self._closing:
            raise CancelledError("the run is shutting down")
        if spec.services or spec.join:
            return self._start_in_group(spec)
        return self._start_one(spec)

    def _start_in_group(self, spec: ContainerSpec) -> Sandbox:
        """The task's network (or the one it joins) and sidecars first, then its container on
        it (see :mod:`factory.runtime.group`); on failure nothing is left behind."""
        network = spec.join or self.create_task_network(spec.task_id)
        owns = spec.join is None
        sidecars: list[Sandbox] = []
        try:
            sidecars = self.start_sidecars(spec, network)
            box = self._start_one(spec, group=network)
        except BaseException:
            for sidecar in sidecars:
                self._remove_container(sidecar.id)
            if owns:
                self.remove_network(network)
            raise
        box.network, box.owns_network, box.sidecars = network, owns, sidecars
        return box

    def _start_one(self, spec: ContainerSpec, *, group: str | None = None) -> Sandbox:
        docker = docker_sdk()
        labels = {**self.base_labels(spec.task_id), LABEL_KIND: KIND_CONTAINER, **spec.labels}
        host_cpus = self.engine_cpus()
        kwargs: dict[str, Any] = {
            "command": _KEEP_ALIVE,
            "labels": labels,
            "detach": True,
            "network_mode": self.container_network() if spec.network else "none",
            "nano_cpus": int(min(spec.cpus, host_cpus) * 1e9),
            "mem_limit": f"{spec.memory_mb}m",
            "memswap_limit": f"{spec.memory_mb}m",
            "pids_limit": spec.pids_limit,
            "privileged": False,
            "security_opt": ["no-new-privileges"],
            "init": True,
            "environment": dict(spec.env),
            "hostname": "sandbox",
        }
        if group is not None:  # on the task's network; internet through factory's bridge
            del kwargs["network_mode"]
            kwargs["network"] = group
            aliases = [spec.alias] if spec.join is None else []
            kwargs["networking_config"] = {
                group: self.api.create_endpoint_config(aliases=aliases or None)
            }
        if spec.workdir:
            kwargs["working_dir"] = spec.workdir
        if spec.storage_mb and self._storage_quota is not False:
            kwargs["storage_opt"] = {"size": f"{spec.storage_mb}m"}
        elif spec.storage_mb:
            kwargs["ulimits"] = [file_size_limit(spec.storage_mb)]
        if spec.harness:
            kwargs["mounts"] = [
                docker.types.Mount(
                    HARNESS_MOUNT, self.harness_volume(), type="volume", read_only=True
                )
            ]
        if spec.gpus:
            kwargs["device_requests"] = [
                docker.types.DeviceRequest(count=spec.gpus, capabilities=[["gpu"]])
            ]
        try:
            container = self._create(spec.image, kwargs)
        except docker.errors.ImageNotFound:
            raise ContainerDiedError(f"image {spec.image} does not exist") from None
        except docker.errors.APIError as exc:
            raise ContainerDiedError(
                f"cannot create a container: {exc.explanation or exc}"
            ) from None
        sandbox = Sandbox(self, container.id, spec)
        if group is not None:
            sandbox.network = group  # removed by the caller if the start fails
        with self._lock:
            self._live[container.id] = sandbox
            closing = self._closing
        if closing:
            sandbox.close()
            raise CancelledError("the run is shutting down")
        try:
            if group is not None and spec.network:
                outside = self.container_network()
                if outside != "none":
                    self.api.connect_container_to_network(container.id, outside)
            container.start()
        except docker.errors.APIError as exc:
            sandbox.close()
            raise ContainerDiedError(
                f"cannot start the container: {exc.explanation or exc}"
            ) from None
        return sandbox

    def _create(self, image: str, kwargs: dict[str, Any]):
        """containers.create; a disk quota the storage driver cannot enforce is replaced (once
        per engine, with a warning) by a cap on each file's size rather than failing every
        task (see :meth:`storage_note`)."""
        docker = docker_sdk()
        try:
            container = self.client.containers.create(image, **kwargs)
        except docker.errors.APIError as exc:
            if "storage_opt" not in kwargs or "storage-opt" not in str(exc).lower():
                raise
            log.warning("storage_mb is not enforced in total: the storage driver has no quotas")
            self._storage_quota = False
            size_mb = int(kwargs["storage_opt"]["size"].rstrip("m"))
            kwargs = {k: v for k, v in kwargs.items() if k != "storage_opt"}
            kwargs["ulimits"] = [file_size_limit(size_mb)]
            return self.client.containers.create(image, **kwargs)
        if "storage_opt" in kwargs:
            self._storage_quota = True
        return container

    def storage_note(self, image: str, storage_mb: int | None) -> str | None:
        """What a task's ``storage_mb`` amounts to on this engine, for the verdict's notes:
        None where the storage driver enforces it as a quota (probed once with ``image``)."""
        if not storage_mb:
            return None
        if self._storage_quota is None:
            docker = docker_sdk()
            try:
                probe = self.api.create_container(
                    image,
                    command=["true"],
                    labels={**self.base_labels(), LABEL_KIND: KIND_CONTAINER},
                    host_config=self.api.create_host_config(storage_opt={"size": "64m"}),
                )
                self._storage_quota = True
                self.api.remove_container(probe["Id"], force=True)
            except docker.errors.APIError as exc:
                if "storage-opt" not in str(exc).lower():
                    return None  # an engine error, not an answer; start() will find out
                self._storage_quota = False
        if self._storage_quota:
            return None
        return (
            f"storage_mb ({storage_mb} MB) is not enforced in total: the engine's storage "
            f"driver has no quotas; each file the task writes is capped at {storage_mb} MB"
        )

    def _discard(self, sandbox: Sandbox) -> None:
        """Remove the container, then its sidecars, then the task network it owns."""
        with self._lock:
            self._live.pop(sandbox.id, None)
            closing = self._closing
            if not closing and self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name="reaper", daemon=True)
                self._reaper.start()
        items = [sandbox.id, *(s.id for s in sandbox.sidecars)]
        if sandbox.owns_network and sandbox.network:
            items.append(NETWORK_MARK + sandbox.network)
        if closing:  # no reaper any more: remove them now, in this (joined) thread
            deadline = time.monotonic() + CLOSE_DEADLINE_SEC
            self._remove_containers([i for i in items if not i.startswith(NETWORK_MARK)], deadline)
            for item in items:
                if item.startswith(NETWORK_MARK):
                    self.remove_network(item[len(NETWORK_MARK) :])
        else:
            for item in items:
                self._removals.put(item)

    def _reap(self) -> None:
        while True:
            item = self._removals.get()
            if item is None:
                return
            if item.startswith(NETWORK_MARK):
                self.remove_network(item[len(NETWORK_MARK) :])
            else:
                self._remove_container(item)

    def _remove_container(self, container_id: str) -> bool:
        try:
            self.api.remove_container(container_id, force=True, v=True)
        except docker_sdk().errors.NotFound:
            pass
        except Exception as exc:  # noqa: BLE001 - never let the reaper die
            log.warning("could not remove container %s: %s", container_id[:12], exc)
            return False
        return True

    def _remove_containers(self, ids: list[str], deadline: float) -> int:
        """Force-remove ``ids`` in parallel, giving up at ``deadline`` (what is left is then
        `factory gc`'s); returns how many went."""
        if not ids:
            return 0
        results: list[bool] = []
        threads = [
            threading.Thread(
                target=lambda i=i: results.append(self._remove_container(i)),
                name=f"remove-{i[:12]}",
                daemon=True,
            )
            for i in dict.fromkeys(ids)
        ]
        for index in range(0, len(threads), 8):  # at most 8 requests in flight
            batch = threads[index : index + 8]
            for thread in batch:
                thread.start()
            for thread in batch:
                thread.join(max(0.0, deadline - time.monotonic()))
        return sum(results)

    def live_containers(self) -> int:
        with self._lock:
            return len(self._live)

    def close(self) -> None:
        """Cancel this run's builds, and kill and remove its containers, within
        :data:`CLOSE_DEADLINE_SEC`. Safe to call more than once."""
        with self._lock:
            self._closing = True
            live = list(self._live.values())
            self._live.clear()
            builds = list(self._builds)
            reaper, self._reaper = self._reaper, None
            references = list(self._references.values())
            self._references.clear()
        for handle in builds:
            handle.cancel()  # the engine stops a build whose socket went away
        for sandbox in live:
            sandbox.dead = True  # execs waiting on it return at once
        deadline = time.monotonic() + CLOSE_DEADLINE_SEC
        queued: list[str] = []
        while True:
            try:
                item = self._removals.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                queued.append(item)
        if reaper is not None:
            self._removals.put(None)
        networks = [i[len(NETWORK_MARK) :] for i in queued if i.startswith(NETWORK_MARK)]
        networks += [s.network for s in live if s.owns_network and s.network]
        ids = [s.id for s in live] + [c.id for s in live for c in s.sidecars]
        ids += [i for i in queued if not i.startswith(NETWORK_MARK)]
        self._remove_containers(ids + references, deadline)
        if reaper is not None:
            reaper.join(max(0.0, deadline - time.monotonic()))
        if self._client is not None:
            self.sweep(deadline)
            for network in networks:
                self.remove_network(network)
            self.sweep_networks()

    def sweep(self, deadline: float | None = None) -> int:
        """Remove every container labelled with this run id (belt and braces after close)."""
        try:
            found = self.api.containers(all=True, filters={"label": f"{LABEL_RUN}={self.run_id}"})
        except Exception:  # noqa: BLE001
            return 0
        deadline = deadline or time.monotonic() + CLOSE_DEADLINE_SEC
        return self._remove_containers([item["Id"] for item in found], deadline)
