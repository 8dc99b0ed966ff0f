"""One running task container: exec with a deadline and an output budget, readiness checks,
copies in and out, its filesystem changes."""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from factory.archive import (
    DEFAULT_FILE_CAP,
    DEFAULT_TOTAL_CAP,
    DownloadedFiles,
    extract_capped,
    tar_directory,
)
from factory.errors import ContainerDiedError, EnvironmentUnhealthyError, ExecTimeoutError
from factory.runtime.client import docker_sdk
from factory.runtime.constants import (
    COPY_TIMEOUT_SEC,
    DEFAULT_MAX_OUTPUT,
    DEFAULT_PIDS_LIMIT,
    MAX_WAIT_SEC,
    POLL_SEC,
    max_ready_sec,
)
from factory.runtime.control import ControlChannel, ControlError
from factory.runtime.overlay import lower_kind, overlay_changes


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
    services: tuple[ServiceSpec, ...] = ()
    """Sidecars, started first in this order on a network of the task's own (see
    :mod:`factory.runtime.group`); they are removed with the container."""
    alias: str = "main"
    """The container's name on its task's network (when it has sidecars)."""
    join: str | None = None
    """Join this task network (another container's :attr:`Sandbox.network`: its sidecars)
    instead of making one; the separate verifier does."""


@dataclass(frozen=True)
class ServiceSpec:
    """A sidecar: a service of the task's compose file besides the agent's container. It runs
    its image's own command (or ``command``/``entrypoint``), unprivileged and limited like the
    task's container, with no harness mount and no network but the task's own."""

    name: str
    """Its service name: its host name and its name on the task's network."""
    image: str
    command: tuple[str, ...] | None = None
    entrypoint: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str | None = None
    user: str | None = None
    cpus: float = 1.0
    memory_mb: int = 512
    pids_limit: int = 256
    readiness: Readiness | None = None
    """Its healthcheck; None: the image's HEALTHCHECK, if it has one."""
    image_healthcheck: bool = True
    """Whether the image's HEALTHCHECK counts when ``readiness`` is None (Compose's
    ``healthcheck: {disable: true}`` says no)."""
    must_complete: bool = False
    """A dependent waits for it to exit 0 (``service_completed_successfully``)."""


def retry_budget_sec(
    start_period_sec: float, retries: int, interval_sec: float, timeout_sec: float
) -> float:
    """How long a healthcheck may go on failing, as Docker counts it: the start period plus
    every retry at its full interval and timeout."""
    return start_period_sec + retries * (interval_sec + timeout_sec)


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
        worst = retry_budget_sec(
            self.start_period_sec, self.retries, self.interval_sec, self.timeout_sec
        )
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


class SandboxOwner(Protocol):
    """What a :class:`Sandbox` needs of the runtime that started it (a
    :class:`~factory.runtime.engine.DockerRuntime`)."""

    @property
    def api(self) -> Any: ...

    def image_path_kind(self, image: str, path: str) -> str | None: ...

    def _discard(self, sandbox: Sandbox) -> None: ...


class Sandbox:
    """One running task container."""

    def __init__(self, runtime: SandboxOwner, container_id: str, spec: ContainerSpec) -> None:
        self.runtime = runtime
        self.id = container_id
        self.spec = spec
        self.dead = False
        self._overlay: tuple[str, list[str]] | tuple[()] | None = None
        self.network: str | None = None
        """The task's own network when it has sidecars (or joined another's)."""
        self.owns_network = False
        """Whether the network is removed with this container."""
        self.sidecars: list[Sandbox] = []
        """The sidecars started for this container (removed with it)."""
        self._control: ControlChannel | None = None
        self._control_lock = threading.Lock()

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
        docker = docker_sdk()
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

    def control(self, *, timeout_sec: float = 30.0) -> ControlChannel:
        """The container's root control channel (:mod:`factory.runtime.control`), opened on
        first use and kept until the container is closed; a broken one is opened again. A
        harness that freezes processes before its verifier (:mod:`factory.validate.isolation`)
        opens it before it records the environment's processes, so it counts as one of them."""
        with self._control_lock:
            if self.dead:
                raise ContainerDiedError("control channel: the container is gone")
            if self._control is None or self._control.closed:
                self._control = ControlChannel.open(self._api, self.id, timeout_sec=timeout_sec)
            return self._control

    def reset_in_place(self, *, timeout_sec: float = 30.0) -> dict:
        """Put the container's web app and tool server back in their initial state (one
        request over :meth:`control`); the reply (``kinds``: what was reset, ``seconds``: how
        long it took inside). ControlError when the reset failed, ContainerDiedError when the
        container is gone."""
        try:
            return self.control(timeout_sec=timeout_sec).request("reset", timeout_sec=timeout_sec)
        except ControlError:
            if self.dead or not self.is_running():
                self.dead = True
                raise ContainerDiedError("reset: the container is gone") from None
            raise

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
        except docker_sdk().errors.APIError as exc:
            raise ContainerDiedError(
                f"cannot upload {local_dir} to {container_path}: {exc}"
            ) from None

    def put_tar(self, parent: str, data: bytes) -> None:
        """Extract the tar ``data`` into the existing folder ``parent``."""
        try:
            self._api.put_archive(self.id, parent, data)
        except docker_sdk().errors.APIError as exc:
            raise ContainerDiedError(f"cannot write into {parent}: {exc}") from None

    def changes(self) -> list[tuple[str, int, bool | None]]:
        """The container's filesystem changes against its image: (path, kind, is_dir) with kind
        0 modified, 1 added, 2 deleted, like ``docker diff``. Read from the overlay's upper
        folder on this host when the engine is local (milliseconds; the engine's own diff takes
        seconds), else from the engine (is_dir then None)."""
        layers = self._layers()
        if layers is not None:
            return list(overlay_changes(*layers))
        try:
            found = self._api.diff(self.id) or []
        except docker_sdk().errors.APIError as exc:
            raise ContainerDiedError(f"cannot list the container's changes: {exc}") from None
        return [(item["Path"], int(item["Kind"]), None) for item in found]

    def image_kind(self, path: str) -> str | None:
        """What the container's image has at ``path``: 'dir', 'file' (files, links, ...) or
        None."""
        layers = self._layers()
        if layers is None:
            return self.runtime.image_path_kind(self.spec.image, path)
        return lower_kind(layers[1], path)

    def _layers(self) -> tuple[str, list[str]] | None:
        """(upper, lowers) folders of the container's overlay filesystem when this process can
        read them (local engine, overlay2, root), else None."""
        if self._overlay is None:
            self._overlay = ()
            try:
                driver = self._api.inspect_container(self.id).get("GraphDriver") or {}
            except docker_sdk().errors.APIError:
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
        docker = docker_sdk()
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
        docker = docker_sdk()
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
        except docker_sdk().errors.APIError:
            return False

    def state(self) -> dict[str, Any]:
        try:
            return self._api.inspect_container(self.id)["State"]
        except docker_sdk().errors.APIError:
            return {}

    def kill(self) -> None:
        self.dead = True
        try:
            self._api.kill(self.id)
        except docker_sdk().errors.APIError:
            pass

    def close(self) -> None:
        """Remove the container (in the background; :meth:`DockerRuntime.close` waits)."""
        self.dead = True
        if self._control is not None:
            self._control.close()
        self.runtime._discard(self)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
