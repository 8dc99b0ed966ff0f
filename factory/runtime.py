"""The one module that talks to Docker.

Everything that touches the engine goes through :class:`DockerRuntime` (images, builds) and
:class:`Sandbox` (one running task container). The rules it enforces:

* every container and image carries labels (``factory.managed``, run id, task id, owner pid);
* containers run unprivileged, with CPU / memory / pids limits, ``no-new-privileges``, no host
  mounts, and no network unless the task allows it; a container (or a build) that may use the
  network gets factory's own bridge, whose egress filter drops the host and private addresses
  (:mod:`factory.egress`), never the default bridge;
* image builds are limited like containers: memory + swap and CPU per step, and processes and
  memory for the whole build through a cgroup of their own (:mod:`factory.build_cgroup`);
* every wait has a deadline: each exec, each build, each healthcheck (overall, too) and each
  copy; at an exec's timeout the container is killed (which kills the command and everything it
  started), and the caller is told;
* Ctrl-C / SIGTERM cancel builds at once (the build's socket is shut down, so the engine sees
  the client go and stops the build) and remove containers: :meth:`DockerRuntime.close`;
* containers are removed on every exit path, and :func:`collect_garbage` removes what a killed
  run left behind, and only that: what live runs are using is left alone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import re
import shlex
import socket
import stat
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO

from factory import egress
from factory.archive import (
    DEFAULT_FILE_CAP,
    DEFAULT_TOTAL_CAP,
    DOCKERFILE_NAME,
    DownloadedFiles,
    build_context,
    extract_capped,
    tar_directory,
)
from factory.build_cgroup import BuildCgroup, create_build_cgroup, remove_stale_build_cgroups
from factory.errors import (
    BaseImageMissingError,
    BuildLimitError,
    CancelledError,
    ContainerDiedError,
    DockerUnavailableError,
    EnvironmentUnhealthyError,
    ExecTimeoutError,
    FactoryError,
    ImageBuildError,
)
from factory.processes import pid_alive

log = logging.getLogger(__name__)

LABEL_MANAGED = "factory.managed"
LABEL_RUN = "factory.run"
LABEL_TASK = "factory.task"
LABEL_KIND = "factory.kind"
LABEL_PID = "factory.pid"
LABEL_HOST = "factory.host"
LABEL_ENV_HASH = "factory.env_hash"
LABEL_RECIPE_HASH = "factory.recipe_hash"

KIND_CONTAINER = "container"
KIND_TASK_IMAGE = "task-image"
KIND_BASE_IMAGE = "base-image"
KIND_ROOTFS = "rootfs"
KIND_BUILD_LEASE = "build-lease"
KIND_NETWORK = "network"

TASK_IMAGE_REPO = "factory-env"
FACTORY_NETWORK = "factory-net"
"""The bridge network (interface :data:`factory.egress.BRIDGE`) of containers with network."""
HARNESS_IMAGE = "factory/harness:bookworm"
"""factory's harness toolkit (a static busybox; environments/images/harness.toml)."""
HARNESS_MOUNT = "/.factory"
"""Where every task container sees the harness toolkit, read-only."""
BUSYBOX = f"{HARNESS_MOUNT}/busybox"
_HARNESS_SOURCE = "/opt/factory-harness"
KIND_HARNESS = "harness"
DEFAULT_PIDS_LIMIT = 1024
DEFAULT_MAX_OUTPUT = 256 * 1024
MAX_WAIT_SEC = 2 * 86_400.0
"""No single wait is longer (a larger timeout is clamped: `Event.wait(1e300)` overflows)."""
POLL_SEC = 0.25
"""How often a waiting thread looks at cancellation, deadlines and build limits."""
CANCEL_GRACE_SEC = 3.0
"""How long a cancelled build's stream gets to end after its socket was shut down."""
CLOSE_DEADLINE_SEC = 20.0
"""How long :meth:`DockerRuntime.close` spends removing containers before it gives up."""
COPY_TIMEOUT_SEC = 60.0
"""Deadline of one download from a container."""
MAX_BUILD_LOG_BYTES = 16 << 20
"""A build log on disk is cut here (a build printing without end does not fill the disk)."""


def max_ready_sec() -> float:
    """The harness maximum for a healthcheck, whatever its retries (``FACTORY_MAX_READY_SEC``,
    default 600 s)."""
    try:
        return max(1.0, float(os.environ.get("FACTORY_MAX_READY_SEC", "600")))
    except ValueError:
        return 600.0


class BuildNetwork(str, Enum):
    """What network image builds get."""

    FILTERED = "filtered"
    """Factory's filtered bridge: registries and mirrors yes, the host and private ranges no."""
    NONE = "none"
    """No network at all."""

    @classmethod
    def parse(cls, text: str, option: str = "--build-network") -> BuildNetwork:
        try:
            return cls(text.lower())
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise FactoryError(f"{option} must be one of {choices}, not {text!r}") from None


@dataclass(frozen=True)
class BuildLimits:
    """Limits of one image build (a task's: its environment's cpus, memory_mb, pids_limit)."""

    memory_mb: int
    cpus: float
    pids: int = DEFAULT_PIDS_LIMIT
    storage_mb: int | None = None
    """Cap on each file a build step writes (RLIMIT_FSIZE), when the task sets storage_mb."""


@dataclass
class BuiltImage:
    """What :meth:`DockerRuntime.build_image` produced."""

    id: str
    notes: list[str] = field(default_factory=list)
    """Limits that could not be enforced on this engine, and why."""


_KEEP_ALIVE = ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"]


def new_run_id(prefix: str = "run") -> str:
    """A fresh run id; ``FACTORY_RUN_PREFIX`` (set by the test suite) is put in front."""
    outer = os.environ.get("FACTORY_RUN_PREFIX")
    prefix = f"{outer}-{prefix}" if outer else prefix
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _docker():
    import docker  # imported lazily: `import factory` stays light

    return docker


@dataclass
class ExecResult:
    """What one command in a container did."""

    exit_code: int | None
    """Exit status; None when the command was killed at its timeout."""
    output: str
    """stdout and stderr interleaved, truncated to the budget (head and tail kept)."""
    duration_sec: float
    timed_out: bool = False
    truncated: bool = False


@dataclass
class ContainerSpec:
    """How to start a task container."""

    image: str
    cpus: float = 1.0
    memory_mb: int = 2048
    pids_limit: int = DEFAULT_PIDS_LIMIT
    storage_mb: int | None = None
    gpus: int = 0
    network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str | None = None
    task_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    readiness: Readiness | None = None
    """A check to pass before the container is used (see :meth:`Sandbox.wait_ready`)."""
    harness: bool = True
    """Mount the harness toolkit read-only at :data:`HARNESS_MOUNT` (verifier isolation)."""


@dataclass(frozen=True)
class Readiness:
    """A readiness check run inside the container (Harbor's ``[environment.healthcheck]``)."""

    command: str
    interval_sec: float = 1.0
    timeout_sec: float = 10.0
    retries: int = 30
    start_period_sec: float = 0.0
    start_interval_sec: float = 0.2
    max_wait_sec: float | None = None
    """The harness maximum (default :func:`max_ready_sec`)."""

    def deadline_sec(self) -> float:
        """The longest the check may take in all: the start period plus every retry at its
        full interval and timeout, and never more than the harness maximum."""
        worst = self.start_period_sec + self.retries * (self.interval_sec + self.timeout_sec)
        cap = self.max_wait_sec if self.max_wait_sec is not None else max_ready_sec()
        return min(worst, cap)


class _CappedBuffer:
    """Keeps the first and last ``limit/2`` bytes of a stream."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.limit // 2
            if excess > 0:
                self.dropped += excess
                del self.tail[:excess]

    def text(self) -> str:
        middle = f"\n... [{self.dropped} bytes dropped] ...\n".encode() if self.dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", errors="replace")


class Sandbox:
    """One running task container."""

    def __init__(self, runtime: DockerRuntime, container_id: str, spec: ContainerSpec) -> None:
        self.runtime = runtime
        self.id = container_id
        self.spec = spec
        self.dead = False
        self._overlay: tuple[str, list[str]] | tuple[()] | None = None

    @property
    def _api(self):
        return self.runtime.api

    def exec(
        self,
        command: list[str],
        *,
        timeout_sec: float,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
        what: str = "command",
    ) -> ExecResult:
        """Run ``command``; at ``timeout_sec`` the container is killed and ``timed_out`` set."""
        docker = _docker()
        if self.dead:
            raise ContainerDiedError(f"{what}: the container is gone")
        started = time.monotonic()
        try:
            exec_id = self._api.exec_create(
                self.id,
                command,
                environment=dict(env or {}),
                workdir=workdir or self.spec.workdir,
                user=user or "",
                stdout=True,
                stderr=True,
            )["Id"]
        except docker.errors.APIError as exc:
            self.dead = True
            raise ContainerDiedError(f"{what}: cannot exec in the container ({exc})") from None
        buffer = _CappedBuffer(max_output)
        finished = threading.Event()
        errors: list[BaseException] = []

        def pump() -> None:
            try:
                for chunk in self._api.exec_start(exec_id, stream=True, demux=False):
                    buffer.add(chunk)
            except BaseException as exc:  # noqa: BLE001 - reported to the caller below
                errors.append(exc)
            finally:
                finished.set()

        threading.Thread(target=pump, name=f"exec-{self.id[:12]}", daemon=True).start()
        deadline = started + min(max(timeout_sec, 0.0), MAX_WAIT_SEC)
        while not finished.wait(min(POLL_SEC, max(0.0, deadline - time.monotonic()))):
            if self.dead:  # killed under us: the run is shutting down or the phase ended
                raise ContainerDiedError(f"{what}: the container was stopped")
            if time.monotonic() >= deadline:
                self.kill()
                finished.wait(10)
                return ExecResult(
                    None, buffer.text(), time.monotonic() - started, True, buffer.dropped > 0
                )
        if errors:
            self.dead = not self.is_running()
            raise ContainerDiedError(f"{what}: lost the exec stream ({errors[0]})")
        exit_code = self._api.exec_inspect(exec_id).get("ExitCode")
        return ExecResult(
            exit_code, buffer.text(), time.monotonic() - started, False, buffer.dropped > 0
        )

    def wait_ready(self) -> float:
        """Run the spec's readiness check until it passes; returns the seconds waited.

        Attempts during the start period are free; after it, ``retries`` failures raise
        :class:`EnvironmentUnhealthyError`, and so does running past the check's overall
        deadline (:meth:`Readiness.deadline_sec`: ``retries = 1000000`` still ends). Each
        attempt is bounded inside the container by coreutils ``timeout`` (where present), so a
        hung check never kills the container.
        """
        check = self.spec.readiness
        if check is None:
            return 0.0
        started = time.monotonic()
        deadline = started + check.deadline_sec()
        quoted = shlex.quote(check.command)
        limit = f"{check.timeout_sec:g}"
        script = (
            f"if command -v timeout >/dev/null 2>&1; then exec timeout -k 1 {limit} sh -c {quoted};"
            f" else exec sh -c {quoted}; fi"
        )
        failures = 0
        last: list[str] = []
        while True:
            left = deadline - time.monotonic()
            result = self.exec(
                ["sh", "-c", script],
                timeout_sec=max(1.0, min(check.timeout_sec + 5, left)),
                what="healthcheck",
            )
            if result.exit_code == 0:
                return time.monotonic() - started
            last = result.output.strip().splitlines()[-1:] if result.output.strip() else []
            if result.timed_out:
                raise EnvironmentUnhealthyError(
                    f"healthcheck `{check.command}` hung past its deadline and the container "
                    "was stopped"
                )
            elapsed = time.monotonic() - started
            in_grace = elapsed < check.start_period_sec
            if not in_grace:
                failures += 1
            pause = check.start_interval_sec if in_grace else check.interval_sec
            out_of_time = time.monotonic() + pause >= deadline
            if failures >= check.retries or out_of_time:
                detail = f" (last output: {last[0][:200]})" if last else ""
                why = (
                    f"{failures} retries"
                    if failures >= check.retries
                    else f"{failures} retries, at its {check.deadline_sec():g}s deadline"
                )
                raise EnvironmentUnhealthyError(
                    f"healthcheck `{check.command}` still failing after {elapsed:.1f}s and "
                    f"{why}{detail}"
                )
            time.sleep(pause)

    def exec_checked(
        self, command: list[str], *, timeout_sec: float, what: str, user: str | None = None
    ) -> ExecResult:
        """Run a harness command that must succeed (raise otherwise); it runs in ``/``, since
        the agent may have removed the image's working directory."""
        result = self.exec(command, timeout_sec=timeout_sec, what=what, user=user, workdir="/")
        if result.timed_out:
            raise ExecTimeoutError(what, timeout_sec)
        if result.exit_code != 0:
            raise ContainerDiedError(f"{what} failed ({result.exit_code}): {result.output[-300:]}")
        return result

    def upload_dir(self, local_dir: Path, container_path: str) -> None:
        """Copy ``local_dir`` to ``container_path`` (an absolute path whose parent exists)."""
        parent, name = os.path.split(container_path.rstrip("/"))
        data = tar_directory(local_dir, name)
        try:
            self._api.put_archive(self.id, parent or "/", data)
        except _docker().errors.APIError as exc:
            raise ContainerDiedError(
                f"cannot upload {local_dir} to {container_path}: {exc}"
            ) from None

    def put_tar(self, parent: str, data: bytes) -> None:
        """Extract the tar ``data`` into the existing folder ``parent``."""
        try:
            self._api.put_archive(self.id, parent, data)
        except _docker().errors.APIError as exc:
            raise ContainerDiedError(f"cannot write into {parent}: {exc}") from None

    def changes(self) -> list[tuple[str, int, bool | None]]:
        """The container's filesystem changes against its image: (path, kind, is_dir) with kind
        0 modified, 1 added, 2 deleted, like ``docker diff``. Read from the overlay's upper
        folder on this host when the engine is local (milliseconds; the engine's own diff takes
        seconds), else from the engine (is_dir then None)."""
        layers = self._layers()
        if layers is not None:
            return list(_overlay_changes(*layers))
        try:
            found = self._api.diff(self.id) or []
        except _docker().errors.APIError as exc:
            raise ContainerDiedError(f"cannot list the container's changes: {exc}") from None
        return [(item["Path"], int(item["Kind"]), None) for item in found]

    def image_kind(self, path: str) -> str | None:
        """What the container's image has at ``path``: 'dir', 'file' (files, links, ...) or
        None."""
        layers = self._layers()
        if layers is None:
            return self.runtime.image_path_kind(self.spec.image, path)
        return _lower_kind(layers[1], path)

    def _layers(self) -> tuple[str, list[str]] | None:
        """(upper, lowers) folders of the container's overlay filesystem when this process can
        read them (local engine, overlay2, root), else None."""
        if self._overlay is None:
            self._overlay = ()
            try:
                driver = self._api.inspect_container(self.id).get("GraphDriver") or {}
            except _docker().errors.APIError:
                driver = {}
            data = driver.get("Data") or {}
            upper, lowers = data.get("UpperDir") or "", (data.get("LowerDir") or "").split(":")
            if driver.get("Name") == "overlay2" and upper and os.access(upper, os.R_OK | os.X_OK):
                self._overlay = (upper, [d for d in lowers if d])
        return self._overlay or None

    def read_text(self, path: str, *, limit: int) -> str:
        """The first ``limit`` bytes of one file ("" when it is absent or not a file)."""
        files = self.download_dir(path, max_file_bytes=limit)
        return next(iter(files.values()), b"").decode("utf-8", errors="replace")

    def download_dir(
        self,
        container_path: str,
        max_file_bytes: int = DEFAULT_FILE_CAP,
        *,
        max_total_bytes: int = DEFAULT_TOTAL_CAP,
        timeout_sec: float = COPY_TIMEOUT_SEC,
    ) -> DownloadedFiles:
        """Files under ``container_path`` (relative names -> content); empty when it is absent.

        The archive is streamed: at most ``max_file_bytes`` of each file and
        ``max_total_bytes`` in all are kept, within ``timeout_sec``; the result's
        ``truncated`` lists what was cut.
        """
        docker = _docker()
        try:
            stream, _ = self._api.get_archive(self.id, container_path, chunk_size=1 << 16)
        except docker.errors.NotFound:
            return DownloadedFiles()
        except docker.errors.APIError as exc:
            raise ContainerDiedError(f"cannot read {container_path}: {exc}") from None
        return extract_capped(
            stream, file_cap=max_file_bytes, total_cap=max_total_bytes, timeout_sec=timeout_sec
        )

    def copy_out(
        self,
        container_path: str,
        out: BinaryIO,
        *,
        max_bytes: int,
        timeout_sec: float = COPY_TIMEOUT_SEC,
    ) -> bool | None:
        """Write the engine's tar of ``container_path`` (links kept as links, modes and
        owners as they are) to ``out``. None: nothing is there; False: cut at ``max_bytes``
        or at the deadline (``out`` then holds an incomplete archive); True: complete."""
        docker = _docker()
        try:
            stream, _ = self._api.get_archive(self.id, container_path, chunk_size=1 << 16)
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as exc:
            raise ContainerDiedError(f"cannot read {container_path}: {exc}") from None
        deadline, written = time.monotonic() + timeout_sec, 0
        try:
            for chunk in stream:
                if written + len(chunk) > max_bytes or time.monotonic() > deadline:
                    return False
                out.write(chunk)
                written += len(chunk)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        return True

    def is_running(self) -> bool:
        try:
            return self._api.inspect_container(self.id)["State"]["Running"]
        except _docker().errors.APIError:
            return False

    def state(self) -> dict[str, Any]:
        try:
            return self._api.inspect_container(self.id)["State"]
        except _docker().errors.APIError:
            return {}

    def kill(self) -> None:
        self.dead = True
        try:
            self._api.kill(self.id)
        except _docker().errors.APIError:
            pass

    def close(self) -> None:
        """Remove the container (in the background; :meth:`DockerRuntime.close` waits)."""
        self.dead = True
        self.runtime._discard(self)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _BuildHandle:
    """One build's own API client, and the way to stop the build at once.

    Closing a client does not unblock a thread reading its streaming response, and the engine
    keeps building as long as the connection lives. Shutting the response's socket down ends
    the read in the consuming thread and shows the engine the client is gone, which cancels
    the build (the running step's container is killed; nothing is tagged).
    """

    def __init__(self, version: str) -> None:
        docker = _docker()
        self.api = docker.from_env(version=version, timeout=None).api
        self.api.hooks["response"].append(self._capture)
        self._response = None
        self._cancelled = False
        self._guard = threading.Lock()

    def _capture(self, response, *args: Any, **kwargs: Any):
        with self._guard:
            self._response = response
            cancelled = self._cancelled
        if cancelled:
            _shutdown_socket(response)
        return response

    def cancel(self) -> None:
        with self._guard:
            self._cancelled = True
            response = self._response
        if response is not None:
            _shutdown_socket(response)
        with contextlib.suppress(Exception):
            self.api.close()


def _shutdown_socket(response: Any) -> None:
    """shutdown(2) the socket under a streaming ``requests`` response (urllib3 1.x and 2.x)."""
    raw = getattr(response, "raw", None)
    candidates = [
        getattr(getattr(raw, "_connection", None), "sock", None),
        getattr(getattr(raw, "connection", None), "sock", None),
        getattr(
            getattr(getattr(getattr(raw, "_fp", None), "fp", None), "raw", None), "_sock", None
        ),
    ]
    for sock in candidates:
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            return


_KILLED = re.compile(r"returned a non-zero code: 137\b")


def _build_error(
    message: str, limits: BuildLimits | None, cgroup: BuildCgroup | None, tail: str
) -> ImageBuildError:
    """The named error for a failed build: a limit that was hit, or what the builder said."""
    last = message.splitlines()[-1] if message else "build failed"
    if limits is not None:
        if cgroup is not None and cgroup.pids_exhausted():
            return BuildLimitError(
                "pids",
                f"a build step hit the build's process limit ({limits.pids} processes, "
                f"environment.pids_limit): {last[:200]}",
                tail,
            )
        oom = cgroup.memory_exhausted() if cgroup is not None else False
        if _KILLED.search(message) and (oom or cgroup is None):
            return BuildLimitError(
                "memory",
                f"a build step was killed at the build's memory limit ({limits.memory_mb} MB, "
                "environment.memory_mb, swap included)",
                tail,
            )
    return ImageBuildError(last, tail)


def _egress_unavailable(runtime: DockerRuntime) -> str | None:
    """Why factory cannot filter its network's egress here (None: it can)."""
    if not runtime.engine_is_local():
        return "the engine is not on this machine"
    if os.geteuid() != 0:
        return "factory does not run as root, so it cannot install the iptables rules"
    return None


class DockerRuntime:
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
        self._references: dict[str, str] = {}  # image -> a created (never started) container
        self._image_env: dict[str, str] = {}
        self._path_kinds: dict[tuple[str, str], str | None] = {}
        self._storage_quota: bool | None = None  # unknown until a task asks for storage_mb
        self._ncpu: int | None = None
        self._driver: str | None = None
        self._network_lock = threading.Lock()
        self._network: tuple[str, str | None] | None = None  # (network mode, why unfiltered)

    # --- connection --------------------------------------------------------------------
    @property
    def client(self):
        if self._client is None:
            with self._lock:
                if self._client is None:
                    docker = _docker()
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

    # --- network ----------------------------------------------------------------------
    def container_network(self) -> str:
        """The network mode for a container (or build) that may use the network: factory's
        filtered bridge, or ``none`` where its filter cannot be installed (see
        :meth:`network_note`)."""
        with self._network_lock:
            if self._network is None:
                self._network = self._setup_network()
            return self._network[0]

    def network_note(self) -> str | None:
        """Why containers that may use the network get none here (None when filtered)."""
        self.container_network()
        return self._network[1] if self._network else None

    def _setup_network(self) -> tuple[str, str | None]:
        why = _egress_unavailable(self)
        if why is None:
            try:
                self._ensure_factory_network()
                subnets = [
                    cfg.get("Subnet", "")
                    for net in self.api.networks()
                    for cfg in ((net.get("IPAM") or {}).get("Config") or [])
                    if ":" not in cfg.get("Subnet", ":")
                ]
                egress.install(subnets)
                return FACTORY_NETWORK, None
            except (egress.EgressError, OSError, _docker().errors.APIError) as exc:
                why = str(exc).splitlines()[0][:200]
        note = (
            f"network: the egress filter is unavailable ({why}); containers and builds that "
            "may use the network got none (a network without the filter could reach the host)"
        )
        log.warning(note)
        return "none", note

    def _ensure_factory_network(self) -> None:
        """Create :data:`FACTORY_NETWORK` once per engine (idempotent across processes)."""
        docker = _docker()
        options = {
            "com.docker.network.bridge.name": egress.BRIDGE,
            "com.docker.network.bridge.enable_icc": "false",
            "com.docker.network.bridge.enable_ip_masquerade": "true",
        }
        try:
            found = self.api.inspect_network(FACTORY_NETWORK)
        except docker.errors.NotFound:
            try:
                self.api.create_network(
                    FACTORY_NETWORK,
                    driver="bridge",
                    options=options,
                    labels={LABEL_MANAGED: "1", LABEL_KIND: KIND_NETWORK},
                    check_duplicate=True,
                )
            except docker.errors.APIError as exc:
                if getattr(exc, "status_code", None) != 409:  # another process was first
                    raise
            found = self.api.inspect_network(FACTORY_NETWORK)
        bridge = (found.get("Options") or {}).get("com.docker.network.bridge.name")
        if bridge != egress.BRIDGE or found.get("Driver") != "bridge":
            raise egress.EgressError(
                f"a network named {FACTORY_NETWORK} exists that factory did not make "
                f"(bridge {bridge!r}); remove it"
            )
        if not Path("/sys/class/net", egress.BRIDGE).exists():
            raise egress.EgressError(f"the bridge {egress.BRIDGE} is not on this machine")

    def engine_cpus(self) -> int:
        if self._ncpu is None:
            try:
                self._ncpu = int(self.api.info().get("NCPU") or os.cpu_count() or 1)
            except Exception:  # noqa: BLE001
                return os.cpu_count() or 1
        return self._ncpu

    # --- images -----------------------------------------------------------------------
    def image_id(self, ref: str) -> str | None:
        """The image's id, or None when the engine does not have it (positive results cached)."""
        cached = self._image_ids.get(ref)
        if cached:
            return cached
        try:
            image_id = self.api.inspect_image(ref)["Id"]
        except _docker().errors.ImageNotFound:
            return None
        except _docker().errors.APIError as exc:
            if getattr(exc, "status_code", None) in (400, 404):
                return None
            raise
        self._image_ids[ref] = image_id
        return image_id

    def image_exists(self, ref: str) -> bool:
        return self.image_id(ref) is not None

    def image_labels(self, ref: str) -> dict[str, str]:
        try:
            return self.api.inspect_image(ref)["Config"].get("Labels") or {}
        except _docker().errors.APIError:
            return {}

    # --- the harness toolkit and pristine image contents ---------------------------------
    def harness_volume(self) -> str:
        """The read-only volume with factory's harness toolkit, made from
        :data:`HARNESS_IMAGE` once per engine (its name carries the image id)."""
        if self._harness_volume:
            return self._harness_volume
        docker = _docker()
        image_id = self.image_id(HARNESS_IMAGE)
        if image_id is None:
            raise BaseImageMissingError(
                f"factory's harness image {HARNESS_IMAGE} is not built; run `factory images build`"
            )
        name = f"factory-harness-{image_id.split(':')[-1][:16]}"
        with _harness_lock():
            try:
                self.api.inspect_volume(name)
            except docker.errors.NotFound:
                self._populate_harness_volume(name)
        self._harness_volume = name
        return name

    def _populate_harness_volume(self, name: str) -> None:
        """Fill a new named volume: mounted where the harness image has its files, it gets a
        copy of them from the engine; the container then runs the busybox from the volume, and a
        volume it cannot run from is removed again (callers hold :func:`_harness_lock`)."""
        docker = _docker()
        labels = {LABEL_MANAGED: "1", LABEL_KIND: KIND_HARNESS}
        self.api.create_volume(name, labels=labels)
        mount = docker.types.Mount(_HARNESS_SOURCE, name, type="volume")
        container = self.api.create_container(
            HARNESS_IMAGE,
            command=[f"{_HARNESS_SOURCE}/busybox", "true"],
            labels={**self.base_labels(), LABEL_KIND: KIND_CONTAINER},
            host_config=self.api.create_host_config(mounts=[mount], network_mode="none"),
        )["Id"]
        try:
            self.api.start(container)
            status = self.api.wait(container, timeout=60).get("StatusCode")
        except Exception:
            status = None
        finally:
            self.api.remove_container(container, force=True)
        if status != 0:
            self.api.remove_volume(name, force=True)
            raise DockerUnavailableError(f"could not fill the harness volume {name}")

    def image_path_env(self, image: str) -> str:
        """The image's PATH (the verifier's commands are looked up on it)."""
        if image not in self._image_env:
            env = self.api.inspect_image(image)["Config"].get("Env") or []
            found = [e.split("=", 1)[1] for e in env if e.startswith("PATH=")]
            self._image_env[image] = found[0] if found else _DEFAULT_PATH
        return self._image_env[image]

    def _reference(self, image: str) -> str:
        """A container created (never started) from ``image``: its files are the image's."""
        with self._lock:
            found = self._references.get(image)
        if found:
            return found
        created = self.api.create_container(
            image,
            command=["true"],
            entrypoint=[],
            labels={**self.base_labels(), LABEL_KIND: KIND_CONTAINER},
            host_config=self.api.create_host_config(network_mode="none"),
        )["Id"]
        with self._lock:
            if image in self._references:
                keep = self._references[image]
            else:
                self._references[image] = keep = created
        if keep != created:
            self.api.remove_container(created, force=True)
        return keep

    def image_path_kind(self, image: str, path: str) -> str | None:
        """'dir', 'file' (anything else: files, links) or None: what ``image`` has at
        ``path``."""
        key = (image, path)
        if key not in self._path_kinds:
            try:
                stream, stat = self.api.get_archive(self._reference(image), path)
                stream.close()
            except _docker().errors.NotFound:
                self._path_kinds[key] = None
            else:
                is_dir = bool(int(stat.get("mode", 0)) & (1 << 31))  # Go's os.ModeDir
                self._path_kinds[key] = "dir" if is_dir else "file"
        return self._path_kinds[key]

    def image_archive(self, image: str, path: str) -> bytes | None:
        """A tar of ``path`` as ``image`` has it (None when the image has nothing there)."""
        try:
            stream, _ = self.api.get_archive(self._reference(image), path)
        except _docker().errors.NotFound:
            return None
        return b"".join(stream)

    def forget_image(self, ref: str) -> None:
        self._image_ids.pop(ref, None)

    def build_image(
        self,
        context_dir: Path,
        dockerfile_text: str,
        *,
        tag: str,
        labels: Mapping[str, str],
        timeout_sec: float,
        log_path: Path | None = None,
        extra_files: Mapping[str, bytes] | None = None,
        limits: BuildLimits | None = None,
        network: BuildNetwork | None = None,
    ) -> BuiltImage:
        """Build ``dockerfile_text`` with ``context_dir`` as context.

        The build log is streamed to ``log_path``. ``limits`` bound every step (memory + swap,
        CPU) and the build as a whole (processes, memory: a cgroup of its own where the engine
        is local and factory is root). ``network`` (default: the runtime's ``build_network``)
        is factory's filtered bridge or none. At ``timeout_sec``, on :meth:`close` and when the
        build exhausts its processes, the build's socket is shut down, which makes the engine
        cancel the build at once.

        Raises ImageBuildError (BuildLimitError for a limit), ExecTimeoutError or
        CancelledError.
        """
        notes: list[str] = []
        network = BuildNetwork(network or self.build_network)
        network_mode = "none"
        if network is BuildNetwork.FILTERED:
            network_mode = self.container_network()
            if network_mode == "none":
                notes.append(f"build {self.network_note()}")
        params, container_limits, cgroup = self._build_limits(limits, notes)
        context = build_context(context_dir, dockerfile_text, extra_files or {})
        handle = _BuildHandle(self.api._version)
        handle.api.params = params  # sent with the build request (the SDK lacks these options)
        with self._lock:
            if self._closing:
                handle.cancel()
                if cgroup:
                    cgroup.remove(wait_sec=0)
                raise CancelledError("the run is shutting down")
            self._builds.add(handle)
        lease = self._take_build_lease()
        lines: list[str] = []
        errors: list[str] = []
        image_id: list[str] = []
        finished = threading.Event()
        log_file = log_path.open("w", encoding="utf-8") if log_path else None

        logged = [0]

        def emit(text: str) -> None:
            text = _ANSI.sub("", text)  # the legacy builder colours each stderr chunk red
            lines.append(text[-4096:])
            if len(lines) > 400:
                del lines[:200]
            if log_file and logged[0] <= MAX_BUILD_LOG_BYTES:
                logged[0] += len(text)
                if logged[0] > MAX_BUILD_LOG_BYTES:
                    text = f"\n... [build log cut at {MAX_BUILD_LOG_BYTES} bytes]\n"
                log_file.write(text)
                log_file.flush()

        def consume() -> None:
            docker = _docker()
            try:
                for item in handle.api.build(
                    fileobj=context,
                    custom_context=True,
                    dockerfile=DOCKERFILE_NAME,
                    tag=tag,
                    labels=dict(labels),
                    rm=True,
                    forcerm=True,
                    pull=False,
                    decode=True,
                    network_mode=network_mode,
                    container_limits=container_limits,
                ):
                    if "stream" in item:
                        emit(item["stream"])
                    if "error" in item:
                        errors.append(item["error"].strip())
                        emit(f"ERROR: {item['error']}\n")
                    aux = item.get("aux")
                    if isinstance(aux, dict) and "ID" in aux:
                        image_id.append(aux["ID"])
            except docker.errors.APIError as exc:  # refused before it started (a parse error)
                errors.append(str(exc.explanation or exc).strip())
            except BaseException as exc:  # noqa: BLE001
                errors.append(f"build stream broke: {exc}")
            finally:
                finished.set()

        worker = threading.Thread(target=consume, name=f"build-{tag}", daemon=True)
        stopped: str | None = None
        deadline = time.monotonic() + min(max(timeout_sec, 0.0), MAX_WAIT_SEC)
        try:
            worker.start()
            while not finished.wait(POLL_SEC):
                if self._closing:
                    stopped = "cancelled"
                elif time.monotonic() >= deadline:
                    stopped = "timeout"
                elif cgroup is not None and cgroup.pids_exhausted():
                    stopped = "pids"
                if stopped:
                    handle.cancel()
                    finished.wait(CANCEL_GRACE_SEC)
                    break
            if stopped is None and self._closing:  # close() cut the stream under us
                stopped = "cancelled"
        finally:
            handle.cancel()
            with self._lock:
                self._builds.discard(handle)
            if log_file:
                log_file.close()
            self._release_build_lease(lease)
        tail = "".join(lines[-30:])
        try:
            if stopped == "cancelled":
                raise CancelledError("the run is shutting down")
            if stopped == "timeout":
                raise ExecTimeoutError(f"docker build of {tag}", timeout_sec)
            if stopped == "pids" and limits is not None:
                raise BuildLimitError(
                    "pids",
                    f"a build step hit the build's process limit ({limits.pids} processes, "
                    "environment.pids_limit); the build was stopped",
                    tail,
                )
            if errors:
                raise _build_error(errors[0], limits, cgroup, tail)
        finally:
            if cgroup is not None and stopped:  # the engine is still removing the step
                threading.Thread(target=cgroup.remove, args=(5.0,), daemon=True).start()
            elif cgroup is not None:
                cgroup.remove()
        self.forget_image(tag)
        found = self.image_id(tag)
        if found is None:
            raise ImageBuildError("the build produced no image", tail)
        return BuiltImage(image_id[-1] if image_id else found, notes)

    def _build_limits(
        self, limits: BuildLimits | None, notes: list[str]
    ) -> tuple[dict[str, Any], dict[str, int], BuildCgroup | None]:
        """(extra build API parameters, per-step container limits, the build's cgroup)."""
        if limits is None:
            return {}, {}, None
        memory = limits.memory_mb << 20
        container_limits = {"memory": memory, "memswap": memory}
        cpus = min(limits.cpus, self.engine_cpus())
        params: dict[str, Any] = {"cpuperiod": 100_000, "cpuquota": max(1000, int(cpus * 100_000))}
        if limits.storage_mb:
            size = limits.storage_mb << 20
            params["ulimits"] = json.dumps([{"Name": "fsize", "Soft": size, "Hard": size}])
            notes.append(
                f"build: storage_mb is enforced per file ({limits.storage_mb} MB), not in total"
            )
        cgroup, why = None, "the engine is not on this machine"
        if self.engine_is_local() and self._cgroup_driver() == "cgroupfs":
            cgroup, why = create_build_cgroup(memory_mb=limits.memory_mb, pids_max=limits.pids)
        elif self.engine_is_local():
            why = f"the engine's cgroup driver is {self._cgroup_driver()}, not cgroupfs"
        if cgroup is not None:
            params["cgroupparent"] = cgroup.parent
        else:
            notes.append(
                f"build: the process limit (pids_limit {limits.pids}) is not enforced ({why}); "
                "memory and CPU are, per build step"
            )
        return params, container_limits, cgroup

    def _cgroup_driver(self) -> str:
        if self._driver is None:
            try:
                self._driver = str(self.api.info().get("CgroupDriver") or "")
            except Exception:  # noqa: BLE001
                return ""
        return self._driver

    def _take_build_lease(self) -> str | None:
        """A labelled volume that marks "this run is building" for `factory gc`: what the
        build creates (intermediate images and containers, which carry no run label) after
        the lease was taken belongs to a live build while its owner lives."""
        name = f"factory-build-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        labels = {**self.base_labels(), LABEL_KIND: KIND_BUILD_LEASE}
        try:
            self.api.create_volume(name, labels=labels)
        except Exception as exc:  # noqa: BLE001 - a lease only protects from a concurrent gc
            log.warning("could not record the build lease: %s", exc)
            return None
        return name

    def _release_build_lease(self, name: str | None) -> None:
        if name:  # a lease left behind is gc's (its owner is gone by then)
            with contextlib.suppress(Exception):
                self.api.remove_volume(name, force=True)

    def import_rootfs(self, tar_path: Path, tag: str, changes: Iterable[str] = ()) -> str:
        """``docker import`` a root filesystem tarball (labelled with its run and owner, so gc
        finds a stray one and leaves one that a live build is using alone)."""
        repository, _, image_tag = tag.rpartition(":")
        owner = " ".join(f"{k}={json.dumps(v)}" for k, v in self.base_labels().items())
        label = f"LABEL {owner} {LABEL_KIND}={KIND_ROOTFS}"
        self.api.import_image_from_file(
            str(tar_path), repository=repository, tag=image_tag, changes=[label, *changes]
        )
        self.forget_image(tag)
        found = self.image_id(tag)
        if found is None:
            raise ImageBuildError(f"docker import of {tag} produced no image")
        return found

    def remove_image(self, ref: str, *, force: bool = False) -> bool:
        self.forget_image(ref)
        try:
            self.api.remove_image(ref, force=force)
            return True
        except _docker().errors.APIError:
            return False

    def tag_image(self, image: str, tag: str) -> None:
        repository, _, image_tag = tag.rpartition(":")
        self.api.tag(image, repository, image_tag)
        self.forget_image(tag)

    # --- containers -------------------------------------------------------------------
    def start(self, spec: ContainerSpec) -> Sandbox:
        """Create and start a sandboxed container that idles until commands are exec'd."""
        docker = _docker()
        if self._closing:
            raise CancelledError("the run is shutting down")
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
        if spec.workdir:
            kwargs["working_dir"] = spec.workdir
        if spec.storage_mb and self._storage_quota is not False:
            kwargs["storage_opt"] = {"size": f"{spec.storage_mb}m"}
        elif spec.storage_mb:
            kwargs["ulimits"] = [_file_size_limit(spec.storage_mb)]
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
        with self._lock:
            self._live[container.id] = sandbox
            closing = self._closing
        if closing:
            sandbox.close()
            raise CancelledError("the run is shutting down")
        try:
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
        docker = _docker()
        try:
            container = self.client.containers.create(image, **kwargs)
        except docker.errors.APIError as exc:
            if "storage_opt" not in kwargs or "storage-opt" not in str(exc).lower():
                raise
            log.warning("storage_mb is not enforced in total: the storage driver has no quotas")
            self._storage_quota = False
            size_mb = int(kwargs["storage_opt"]["size"].rstrip("m"))
            kwargs = {k: v for k, v in kwargs.items() if k != "storage_opt"}
            kwargs["ulimits"] = [_file_size_limit(size_mb)]
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
            docker = _docker()
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
        with self._lock:
            self._live.pop(sandbox.id, None)
            closing = self._closing
            if not closing and self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name="reaper", daemon=True)
                self._reaper.start()
        if closing:  # no reaper any more: remove it now, in this (joined) thread
            self._remove_containers([sandbox.id], time.monotonic() + CLOSE_DEADLINE_SEC)
        else:
            self._removals.put(sandbox.id)

    def _reap(self) -> None:
        while True:
            container_id = self._removals.get()
            if container_id is None:
                return
            self._remove_container(container_id)

    def _remove_container(self, container_id: str) -> bool:
        try:
            self.api.remove_container(container_id, force=True, v=True)
        except _docker().errors.NotFound:
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
        self._remove_containers([s.id for s in live] + queued + references, deadline)
        if reaper is not None:
            reaper.join(max(0.0, deadline - time.monotonic()))
        if self._client is not None:
            self.sweep(deadline)

    def sweep(self, deadline: float | None = None) -> int:
        """Remove every container labelled with this run id (belt and braces after close)."""
        try:
            found = self.api.containers(all=True, filters={"label": f"{LABEL_RUN}={self.run_id}"})
        except Exception:  # noqa: BLE001
            return 0
        deadline = deadline or time.monotonic() + CLOSE_DEADLINE_SEC
        return self._remove_containers([item["Id"] for item in found], deadline)


def _file_size_limit(size_mb: int):
    """RLIMIT_FSIZE at ``size_mb``: the cap on each file where the total cannot be capped."""
    size = size_mb << 20
    return _docker().types.Ulimit(name="fsize", soft=size, hard=size)


_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _harness_lock():
    """A host-wide lock around making the harness volume (several runs may start at once)."""
    import fcntl

    @contextlib.contextmanager
    def locked():
        folder = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
        with (folder / "factory-harness.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    return locked()


# --- overlay filesystems ------------------------------------------------------------------

_OPAQUE_XATTR = "trusted.overlay.opaque"


def _is_whiteout(info: os.stat_result) -> bool:
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _lower_kind(lowers: list[str], path: str) -> str | None:
    """What the merged lower layers (top-most first) have at the absolute ``path``."""
    rel = path.lstrip("/")
    for lower in lowers:
        try:
            info = os.lstat(os.path.join(lower, rel))
        except OSError:
            continue
        if _is_whiteout(info):
            return None
        return "dir" if stat.S_ISDIR(info.st_mode) else "file"
    return None


def _overlay_changes(upper: str, lowers: list[str]):
    """``docker diff`` from an overlay's folders: yields (path, kind, is_dir). A whiteout is a
    deletion; an opaque folder hides the image's content below it (reported as deleted, then
    what is in it as added)."""
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(upper, rel) if rel else upper))
        except OSError:
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            path = "/" + child
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if _is_whiteout(info):
                yield path, 2, None
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            in_image = _lower_kind(lowers, path) is not None
            if is_dir and in_image and _opaque(entry.path):
                yield path, 2, True
                yield path, 1, True
            else:
                yield path, 0 if in_image else 1, is_dir
            if is_dir:
                stack.append(child)


def _opaque(folder: str) -> bool:
    try:
        return os.getxattr(folder, _OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False


# --- garbage collection -----------------------------------------------------------------


@dataclass
class GcReport:
    containers: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    skipped_live: list[str] = field(default_factory=list)
    leases: list[str] = field(default_factory=list)
    """Build leases of dead runs that were removed."""
    cgroups: int = 0
    """Empty build cgroups of dead factory processes that were removed."""


def owner_alive(labels: Mapping[str, str]) -> bool:
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False
    try:
        pid = int(labels.get(LABEL_PID, "0"))
    except ValueError:
        return False
    return pid != os.getpid() and pid_alive(pid)


@dataclass
class _Lease:
    name: str
    labels: dict[str, str]
    created: float
    """Engine time (unix seconds) the build started."""

    @property
    def run(self) -> str:
        return self.labels.get(LABEL_RUN, "")


def _build_leases(api) -> list[_Lease]:
    found = api.volumes(filters={"label": f"{LABEL_KIND}={KIND_BUILD_LEASE}"}) or {}
    leases = []
    for volume in found.get("Volumes") or []:
        try:
            created = datetime.fromisoformat(volume["CreatedAt"].replace("Z", "+00:00"))
        except (KeyError, ValueError):
            continue
        leases.append(_Lease(volume["Name"], volume.get("Labels") or {}, created.timestamp()))
    return leases


class _BuildOwnership:
    """Which run an unlabelled build leftover (an intermediate image or step container)
    belongs to: the leases that were open when it was created."""

    SLACK_SEC = 2.0

    def __init__(self, leases: list[_Lease], *, force: bool) -> None:
        self.live = [lease for lease in leases if not force and owner_alive(lease.labels)]
        self.dead = [lease for lease in leases if lease not in self.live]

    def in_use(self, created: float) -> bool:
        """Made after a live build started: that build may still need it."""
        return any(created >= lease.created - self.SLACK_SEC for lease in self.live)

    def of_run(self, created: float, run_id: str) -> bool:
        """Made after ``run_id`` (which died) started building."""
        return any(
            lease.run == run_id and created >= lease.created - self.SLACK_SEC for lease in self.dead
        )


def collect_garbage(
    runtime: DockerRuntime,
    *,
    run_id: str | None = None,
    task_images: bool = False,
    force: bool = False,
) -> GcReport:
    """Remove what killed runs left behind, and nothing a live run is using.

    * containers labelled ``factory.managed`` whose owning process is gone (all with ``force``);
    * stopped build-step containers and dangling (untagged) images of interrupted builds,
      except those made after a live run began a build (its build lease); with ``run_id``,
      only those made while that run was building;
    * root filesystem imports of `factory images build` runs that are gone;
    * the build leases and (local engine, as root) empty build cgroups of dead processes;
    * with ``task_images``: the cached task images too (they are rebuilt on demand).
    """
    docker = _docker()
    api = runtime.api
    report = GcReport()
    leases = _build_leases(api)
    builds = _BuildOwnership(leases, force=force)

    def leftover_of_dead_build(created: float) -> bool:
        if builds.in_use(created):
            return False
        return builds.of_run(created, run_id) if run_id else True

    label_filter = [f"{LABEL_MANAGED}=1"] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])
    for item in api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"}):
        labels = item.get("Labels") or {}
        if LABEL_PID not in labels:
            # Not started by a run (those carry their owner's pid): it inherited the labels
            # from one of our images. Only a stopped one (an interrupted build's step
            # container) is garbage, and only once no live build can be using it.
            if item.get("State") == "running" or not leftover_of_dead_build(item["Created"]):
                continue
        elif run_id and labels.get(LABEL_RUN) != run_id:
            continue
        elif not force and owner_alive(labels):
            report.skipped_live.append(item["Id"][:12])
            continue
        try:
            api.remove_container(item["Id"], force=True, v=True)
            report.containers.append(item["Id"][:12])
        except docker.errors.APIError:
            pass
    for item in api.images(filters={"label": f"{LABEL_KIND}={KIND_ROOTFS}"}):
        labels = item.get("Labels") or {}
        if run_id and labels.get(LABEL_RUN) != run_id:
            continue
        if not force and owner_alive(labels):  # a live `factory images build` imported it
            continue
        for tag in item.get("RepoTags") or []:
            if runtime.remove_image(tag):
                report.images.append(tag)
    for item in api.images(filters={"dangling": True, "label": f"{LABEL_MANAGED}=1"}):
        if not leftover_of_dead_build(item.get("Created", 0)):
            continue
        try:
            api.remove_image(item["Id"], force=False)
            report.images.append(item["Id"].split(":")[-1][:12])
        except docker.errors.APIError:
            pass
    if task_images:
        filters = {"label": [f"{LABEL_KIND}={KIND_TASK_IMAGE}"] + label_filter[1:]}
        for item in api.images(filters=filters):
            for tag in item.get("RepoTags") or [item["Id"]]:
                runtime.remove_image(tag, force=False)
            report.images.append(item["Id"].split(":")[-1][:12])
    for lease in builds.dead:
        if run_id and lease.run != run_id:
            continue
        try:
            api.remove_volume(lease.name, force=True)
            report.leases.append(lease.name)
        except docker.errors.APIError:
            pass
    if runtime.engine_is_local() and os.geteuid() == 0:
        report.cgroups = remove_stale_build_cgroups()
    return report


def engine_summary(runtime: DockerRuntime) -> dict[str, Any]:
    info = runtime.api.info()
    return {k: info.get(k) for k in ("ServerVersion", "NCPU", "MemTotal", "Driver")}


__all__ = [
    "BuildLimits",
    "BuildNetwork",
    "BuiltImage",
    "ContainerSpec",
    "DockerRuntime",
    "ExecResult",
    "GcReport",
    "Sandbox",
    "collect_garbage",
]
