"""The one module that talks to Docker.

Everything that touches the engine goes through :class:`DockerRuntime` (images, builds) and
:class:`Sandbox` (one running task container). The rules it enforces:

* every container and image carries labels (``factory.managed``, run id, task id, owner pid);
* containers run unprivileged, with CPU / memory / pids limits, ``no-new-privileges``, no host
  mounts, and no network unless the task allows it;
* every exec has a timeout; at the timeout the container is killed (which kills the command and
  everything it started), and the caller is told;
* containers are removed on every exit path: :meth:`DockerRuntime.close` kills what is still
  alive, and :func:`collect_garbage` removes what a killed run left behind.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import queue
import re
import shlex
import socket
import stat
import tarfile
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.errors import (
    BaseImageMissingError,
    CancelledError,
    ContainerDiedError,
    DockerUnavailableError,
    EnvironmentUnhealthyError,
    ExecTimeoutError,
    ImageBuildError,
)

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

TASK_IMAGE_REPO = "factory-env"
HARNESS_IMAGE = "factory/harness:bookworm"
"""factory's harness toolkit (a static busybox; environments/images/harness.toml)."""
HARNESS_MOUNT = "/.factory"
"""Where every task container sees the harness toolkit, read-only."""
BUSYBOX = f"{HARNESS_MOUNT}/busybox"
_HARNESS_SOURCE = "/opt/factory-harness"
KIND_HARNESS = "harness"
DEFAULT_PIDS_LIMIT = 1024
DEFAULT_MAX_OUTPUT = 256 * 1024
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


def tar_directory(local_dir: Path, arcname: str) -> bytes:
    """A tar of ``local_dir`` whose entries live under ``arcname/``, owned by root."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:

        def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        archive.add(str(local_dir), arcname=arcname, filter=as_root)
    return buffer.getvalue()


def _extract_files(data: bytes, max_file_bytes: int) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue
            handle = archive.extractfile(member)
            if handle is not None:
                name = member.name.split("/", 1)[1] if "/" in member.name else member.name
                files[name] = handle.read(max_file_bytes)
    return files


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
        if not finished.wait(timeout_sec):
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
        :class:`EnvironmentUnhealthyError`. Each attempt is bounded inside the container by
        coreutils ``timeout`` (where present), so a hung check never kills the container.
        """
        check = self.spec.readiness
        if check is None:
            return 0.0
        started = time.monotonic()
        quoted = shlex.quote(check.command)
        limit = f"{check.timeout_sec:g}"
        script = (
            f"if command -v timeout >/dev/null 2>&1; then exec timeout -k 1 {limit} sh -c {quoted};"
            f" else exec sh -c {quoted}; fi"
        )
        failures = 0
        last: list[str] = []
        while True:
            result = self.exec(
                ["sh", "-c", script], timeout_sec=check.timeout_sec + 5, what="healthcheck"
            )
            if result.exit_code == 0:
                return time.monotonic() - started
            last = result.output.strip().splitlines()[-1:] if result.output.strip() else []
            in_grace = time.monotonic() - started < check.start_period_sec
            if not in_grace:
                failures += 1
                if failures >= check.retries:
                    detail = f" (last output: {last[0][:200]})" if last else ""
                    raise EnvironmentUnhealthyError(
                        f"healthcheck `{check.command}` still failing after "
                        f"{time.monotonic() - started:.1f}s and {failures} retries{detail}"
                    )
            time.sleep(check.start_interval_sec if in_grace else check.interval_sec)

    def exec_checked(
        self, command: list[str], *, timeout_sec: float, what: str, user: str | None = None
    ) -> ExecResult:
        """Run a harness command that must succeed (raise otherwise)."""
        result = self.exec(command, timeout_sec=timeout_sec, what=what, user=user)
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

    def download_dir(self, container_path: str, max_file_bytes: int = 1 << 20) -> dict[str, bytes]:
        """Files under ``container_path`` (relative names -> content); {} when it is absent."""
        docker = _docker()
        try:
            stream, _ = self._api.get_archive(self.id, container_path)
        except docker.errors.NotFound:
            return {}
        except docker.errors.APIError as exc:
            raise ContainerDiedError(f"cannot read {container_path}: {exc}") from None
        return _extract_files(b"".join(stream), max_file_bytes)

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


class DockerRuntime:
    """Images, builds and containers for one run (one ``run_id``)."""

    def __init__(self, run_id: str | None = None, *, pool_size: int = 16) -> None:
        self.run_id = run_id or new_run_id()
        self.pool_size = pool_size
        self._client = None
        self._lock = threading.Lock()
        self._live: dict[str, Sandbox] = {}
        self._closing = False
        self._removals: queue.Queue[str | None] = queue.Queue()
        self._reaper: threading.Thread | None = None
        self._image_ids: dict[str, str] = {}
        self._harness_volume: str | None = None
        self._references: dict[str, str] = {}  # image -> a created (never started) container
        self._image_env: dict[str, str] = {}
        self._path_kinds: dict[tuple[str, str], str | None] = {}
        self._builds: set[Any] = set()
        self._storage_quota: bool | None = None  # unknown until a task asks for storage_mb

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

    def engine_cpus(self) -> int:
        try:
            return int(self.api.info().get("NCPU") or os.cpu_count() or 1)
        except Exception:  # noqa: BLE001
            return os.cpu_count() or 1

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
    ) -> str:
        """Build ``dockerfile_text`` with ``context_dir`` as context; returns the image id.

        The build log is streamed to ``log_path``. At ``timeout_sec`` the connection is closed,
        which makes the engine cancel the build.
        """
        if self._closing:
            raise CancelledError("the run is shutting down")
        docker = _docker()
        context = _build_context(context_dir, dockerfile_text, extra_files or {})
        # A client of its own: closing it is how a build is cancelled (timeout, Ctrl-C).
        api = docker.from_env(version=self.api._version, timeout=None).api
        with self._lock:
            self._builds.add(api)
        lines: list[str] = []
        errors: list[str] = []
        image_id: list[str] = []
        finished = threading.Event()
        log_file = log_path.open("w", encoding="utf-8") if log_path else None

        def emit(text: str) -> None:
            text = _ANSI.sub("", text)  # the legacy builder colours each stderr chunk red
            lines.append(text)
            if len(lines) > 400:
                del lines[:200]
            if log_file:
                log_file.write(text)
                log_file.flush()

        def consume() -> None:
            try:
                for item in api.build(
                    fileobj=context,
                    custom_context=True,
                    dockerfile=_DOCKERFILE_NAME,
                    tag=tag,
                    labels=dict(labels),
                    rm=True,
                    forcerm=True,
                    pull=False,
                    decode=True,
                ):
                    if "stream" in item:
                        emit(item["stream"])
                    if "error" in item:
                        errors.append(item["error"].strip())
                        emit(f"ERROR: {item['error']}\n")
                    aux = item.get("aux")
                    if isinstance(aux, dict) and "ID" in aux:
                        image_id.append(aux["ID"])
            except BaseException as exc:  # noqa: BLE001
                errors.append(f"build stream broke: {exc}")
            finally:
                finished.set()

        worker = threading.Thread(target=consume, name=f"build-{tag}", daemon=True)
        worker.start()
        try:
            if not finished.wait(timeout_sec):
                api.close()
                finished.wait(30)
                raise ExecTimeoutError(f"docker build of {tag}", timeout_sec)
        finally:
            api.close()
            with self._lock:
                self._builds.discard(api)
            if log_file:
                log_file.close()
        tail = "".join(lines[-30:])
        if errors:
            raise ImageBuildError(errors[0].splitlines()[-1] if errors[0] else "build failed", tail)
        self.forget_image(tag)
        found = self.image_id(tag)
        if found is None:
            raise ImageBuildError("the build produced no image", tail)
        return image_id[-1] if image_id else found

    def import_rootfs(self, tar_path: Path, tag: str, changes: Iterable[str] = ()) -> str:
        """``docker import`` a root filesystem tarball (labelled, so gc finds a stray one)."""
        repository, _, image_tag = tag.rpartition(":")
        label = f"LABEL {LABEL_MANAGED}=1 {LABEL_KIND}={KIND_ROOTFS}"
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
            "network_mode": "bridge" if spec.network else "none",
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
        """containers.create; a disk quota the storage driver cannot enforce is dropped (once
        per engine, with a warning) rather than failing every task."""
        docker = _docker()
        try:
            container = self.client.containers.create(image, **kwargs)
        except docker.errors.APIError as exc:
            if "storage_opt" not in kwargs or "storage-opt" not in str(exc).lower():
                raise
            log.warning("storage_mb is not enforced: this engine's storage driver has no quotas")
            self._storage_quota = False
            kwargs = {k: v for k, v in kwargs.items() if k != "storage_opt"}
            return self.client.containers.create(image, **kwargs)
        self._storage_quota = True
        return container

    def _discard(self, sandbox: Sandbox) -> None:
        with self._lock:
            self._live.pop(sandbox.id, None)
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name="reaper", daemon=True)
                self._reaper.start()
        self._removals.put(sandbox.id)

    def _reap(self) -> None:
        while True:
            container_id = self._removals.get()
            if container_id is None:
                return
            try:
                self.api.remove_container(container_id, force=True, v=True)
            except _docker().errors.NotFound:
                pass
            except Exception as exc:  # noqa: BLE001 - never let the reaper die
                log.warning("could not remove container %s: %s", container_id[:12], exc)

    def live_containers(self) -> int:
        with self._lock:
            return len(self._live)

    def close(self) -> None:
        """Kill and remove every container of this run. Safe to call more than once."""
        with self._lock:
            self._closing = True
            live = list(self._live.values())
            builds = list(self._builds)
            references = list(self._references.values())
            self._references.clear()
        for api in builds:
            api.close()  # the engine cancels a build whose client went away
        for sandbox in live:
            sandbox.kill()
            sandbox.close()
        with self._lock:
            reaper = self._reaper
            self._reaper = None
        if reaper is not None:
            self._removals.put(None)
            reaper.join(timeout=60)
        for container_id in references:
            with contextlib.suppress(Exception):  # sweep() below is the backstop
                self.api.remove_container(container_id, force=True)
        if self._client is not None:
            self.sweep()

    def sweep(self) -> int:
        """Remove every container labelled with this run id (belt and braces after close)."""
        removed = 0
        try:
            found = self.api.containers(all=True, filters={"label": f"{LABEL_RUN}={self.run_id}"})
        except Exception:  # noqa: BLE001
            return 0
        for item in found:
            try:
                self.api.remove_container(item["Id"], force=True, v=True)
                removed += 1
            except _docker().errors.APIError:
                pass
        return removed


_DOCKERFILE_NAME = ".factory.Dockerfile"
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


def _dockerignore(context_dir: Path) -> list[str]:
    path = context_dir / ".dockerignore"
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _build_context(context_dir: Path, dockerfile_text: str, extra_files: Mapping[str, bytes]):
    """A tar build context: the folder minus .dockerignore'd paths, our Dockerfile, extras."""
    docker = _docker()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        if context_dir.is_dir():
            excluded = _dockerignore(context_dir)
            for rel in sorted(docker.utils.build.exclude_paths(str(context_dir), excluded)):
                archive.add(str(context_dir / rel), arcname=rel, recursive=False)
        extras = {**extra_files, _DOCKERFILE_NAME: dockerfile_text.encode()}
        for name, content in extras.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(content))
    out.seek(0)
    return out


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


def owner_alive(labels: Mapping[str, str]) -> bool:
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False
    try:
        pid = int(labels.get(LABEL_PID, "0"))
    except ValueError:
        return False
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def collect_garbage(
    runtime: DockerRuntime,
    *,
    run_id: str | None = None,
    task_images: bool = False,
    force: bool = False,
) -> GcReport:
    """Remove what killed runs left behind.

    * containers labelled ``factory.managed`` whose owning process is gone (all with ``force``);
    * dangling (untagged) images from interrupted builds;
    * with ``task_images``: the cached task images too (they are rebuilt on demand).
    """
    docker = _docker()
    api = runtime.api
    report = GcReport()
    label_filter = [f"{LABEL_MANAGED}=1"] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])
    for item in api.containers(all=True, filters={"label": label_filter}):
        labels = item.get("Labels") or {}
        if LABEL_RUN not in labels:
            # Not started by a run: it inherited the label from one of our images. Only a
            # stopped one (an interrupted build's intermediate container) is garbage.
            if item.get("State") == "running":
                continue
        elif not force and owner_alive(labels):
            report.skipped_live.append(item["Id"][:12])
            continue
        try:
            api.remove_container(item["Id"], force=True, v=True)
            report.containers.append(item["Id"][:12])
        except docker.errors.APIError:
            pass
    rootfs = api.images(filters={"label": f"{LABEL_KIND}={KIND_ROOTFS}"})
    for item in rootfs:  # intermediate imports of an interrupted `factory images build`
        for tag in item.get("RepoTags") or []:
            if runtime.remove_image(tag):
                report.images.append(tag)
    for item in api.images(filters={"dangling": True, "label": f"{LABEL_MANAGED}=1"}):
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
    return report


def engine_summary(runtime: DockerRuntime) -> dict[str, Any]:
    info = runtime.api.info()
    return {k: info.get(k) for k in ("ServerVersion", "NCPU", "MemTotal", "Driver")}


__all__ = [
    "ContainerSpec",
    "DockerRuntime",
    "ExecResult",
    "GcReport",
    "Sandbox",
    "collect_garbage",
]
