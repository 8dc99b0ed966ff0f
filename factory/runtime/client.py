"""The connection to the engine: the lazily imported SDK, the client, and what every
resource is labelled with."""

from __future__ import annotations

import os
import socket
import threading

from factory.errors import DockerUnavailableError
from factory.runtime.constants import LABEL_HOST, LABEL_MANAGED, LABEL_PID, LABEL_RUN, LABEL_TASK


def docker_sdk():
    import docker  # imported lazily: `import factory` stays light

    return docker


class ConnectionMixin:
    """The engine connection of a :class:`~factory.runtime.engine.DockerRuntime`."""

    run_id: str
    pool_size: int
    _client: object | None
    _lock: threading.Lock
    _ncpu: int | None

    @property
    def client(self):
        if self._client is None:
            with self._lock:
                if self._client is None:
                    docker = docker_sdk()
                    try:
                        client = docker.from_env(max_pool_size=self.pool_size, timeout=120)
                        client.ping()
                    except Exception as exc:  # noqa: BLE001 - any failure means "no engine"
                        raise DockerUnavailableError(str(exc).splitlines()[0][:200]) from None
                    self._client = client
        return self._client

    @property
    def api(self):
        return self.client.api

    def ping(self) -> None:
        """Connect now (raises DockerUnavailableError when the engine is down)."""
        _ = self.client

    def base_labels(self, task_id: str = "") -> dict[str, str]:
        labels = {
            LABEL_MANAGED: "1",
            LABEL_RUN: self.run_id,
            LABEL_PID: str(os.getpid()),
            LABEL_HOST: socket.gethostname(),
        }
        if task_id:
            labels[LABEL_TASK] = task_id[:200]
        return labels

    def engine_is_local(self) -> bool:
        """Whether the engine runs on this machine (a unix socket), so that factory can set
        host-side limits for it (cgroups, iptables)."""
        host = os.environ.get("DOCKER_HOST", "")
        return not host or host.startswith("unix://")

    def engine_cpus(self) -> int:
        if self._ncpu is None:
            try:
                self._ncpu = int(self.api.info().get("NCPU") or os.cpu_count() or 1)
            except Exception:  # noqa: BLE001
                return os.cpu_count() or 1
        return self._ncpu
