""":class:`DockerRuntime`: images, builds and containers for one run, made of the runtime's parts."""

from __future__ import annotations

import queue
import threading

from factory.runtime.builds import BuildNetwork, BuildsMixin, _BuildHandle
from factory.runtime.client import ConnectionMixin
from factory.runtime.constants import new_run_id
from factory.runtime.containers import ContainersMixin
from factory.runtime.group import GroupMixin
from factory.runtime.images import ImagesMixin
from factory.runtime.network import NetworkMixin
from factory.runtime.sandbox import Sandbox


class DockerRuntime(
    ConnectionMixin, NetworkMixin, ImagesMixin, BuildsMixin, GroupMixin, ContainersMixin
):
    """Images, builds and containers for one run (one ``run_id``)."""

    def __init__(
        self,
        run_id: str | None = None,
        *,
        pool_size: int = 16,
        build_network: BuildNetwork | str = BuildNetwork.FILTERED,
    ) -> None:
        self.run_id = run_id or new_run_id()
        self.pool_size = pool_size
        self.build_network = BuildNetwork(build_network)
        self._client = None
        self._lock = threading.Lock()
        self._live: dict[str, Sandbox] = {}
        self._closing = False
        self._removals: queue.Queue[str | None] = queue.Queue()
        self._reaper: threading.Thread | None = None
        self._image_ids: dict[str, str] = {}
        self._builds: set[_BuildHandle] = set()
        self._harness_volume: str | None = None
        self._references: dict[str, str] = {}  # image id -> a created (never started) container
        self._image_env: dict[str, str] = {}
        self._path_kinds: dict[tuple[str, str], str | None] = {}
        self._storage_quota: bool | None = None  # unknown until a task asks for storage_mb
        self._ncpu: int | None = None
        self._driver: str | None = None
        self._network_lock = threading.Lock()
        self._network: tuple[str, str | None] | None = None  # (network mode, why unfiltered)
        self._protect_lock = threading.Lock()
        self._bridges_protected: bool | None = None  # task networks' host filter, once
