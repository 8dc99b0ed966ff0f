"""Image builds, limited like containers (memory + swap and CPU per step; processes and memory
for the whole build through a cgroup of its own), on factory's filtered network or none, with a
deadline, and cancelled at once on close (the build's socket is shut down)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import socket
import tarfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from factory.archive import DOCKERFILE_NAME, refuse_special
from factory.build_cgroup import BuildCgroup, create_build_cgroup
from factory.errors import (
    BuildLimitError,
    CancelledError,
    ExecTimeoutError,
    FactoryError,
    ImageBuildError,
)
from factory.runtime.client import docker_sdk
from factory.runtime.constants import (
    CANCEL_GRACE_SEC,
    DEFAULT_PIDS_LIMIT,
    KIND_BUILD_LEASE,
    LABEL_KIND,
    MAX_BUILD_LOG_BYTES,
    MAX_WAIT_SEC,
    POLL_SEC,
)

log = logging.getLogger(__name__)


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


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def dockerignore(context_dir: Path) -> list[str]:
    path = context_dir / ".dockerignore"
    if path.is_symlink() or not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def build_context(context_dir: Path, dockerfile_text: str, extra_files: Mapping[str, bytes]):
    """A tar build context: the folder minus .dockerignore'd paths, our Dockerfile, extras."""
    docker = docker_sdk()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        if context_dir.is_dir():
            excluded = dockerignore(context_dir)
            for rel in sorted(docker.utils.build.exclude_paths(str(context_dir), excluded)):
                refuse_special(context_dir / rel)
                archive.add(str(context_dir / rel), arcname=rel, recursive=False)
        extras = {**extra_files, DOCKERFILE_NAME: dockerfile_text.encode()}
        for name, content in extras.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(content))
    out.seek(0)
    return out


class _BuildHandle:
    """One build's own API client, and the way to stop the build at once.

    Closing a client does not unblock a thread reading its streaming response, and the engine
    keeps building as long as the connection lives. Shutting the response's socket down ends
    the read in the consuming thread and shows the engine the client is gone, which cancels
    the build (the running step's container is killed; nothing is tagged).
    """

    def __init__(self, version: str) -> None:
        docker = docker_sdk()
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


class BuildsMixin:
    """The image builds of a :class:`~factory.runtime.engine.DockerRuntime`."""

    build_network: BuildNetwork
    _lock: threading.Lock
    _closing: bool
    _builds: set[_BuildHandle]
    _driver: str | None

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
            docker = docker_sdk()
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
