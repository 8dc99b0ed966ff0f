"""A real Ray cluster on this machine, for tests and benchmarks: a head and worker nodes started
with ``ray start`` as subprocesses (loopback, free ports, a temp dir of their own).

Each ``ray start`` runs in a new session, so every process it leaves behind (GCS, raylet,
agents, workers) shares its process group; :meth:`LocalRayCluster.stop` ends exactly those
groups (SIGTERM, then SIGKILL). It never runs ``ray stop``, which would end every Ray process
of the user on the machine, other runs' clusters included.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from factory.distributed import SLOT_RESOURCE


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ray_executable() -> str:
    """The ``ray`` script next to this Python (the venv's), else the one on PATH."""
    here = Path(sys.executable).parent / "ray"
    return str(here) if here.exists() else (shutil.which("ray") or "ray")


def process_stats() -> Iterator[list[str]]:
    """The fields of each process's ``/proc/<pid>/stat`` after its command name: state, parent,
    process group, ... (utime and stime at 11 and 12); a process that ends meanwhile is
    passed over."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        yield text[text.rfind(")") + 2 :].split()


def _group_alive(pgid: int) -> bool:
    """Any live (not zombie) process in process group ``pgid``?"""
    return any(
        len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z"
        for fields in process_stats()
    )


@dataclass
class LocalRayCluster:
    """``with LocalRayCluster(workers=1, slots=1) as c: ... c.address ...``"""

    workers: int = 1
    """Worker nodes besides the head."""
    slots: int = 1
    """docker_slots per node."""
    head_slots: int | None = None
    """docker_slots of the head (default: ``slots``; 0: the head runs no task)."""
    cpus: int = 1
    object_store_mb: int = 100
    address: str = ""
    temp_dir: Path | None = None
    groups: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def __enter__(self) -> LocalRayCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- start ---------------------------------------------------------------------
    def _ports(self) -> list[str]:
        return [
            f"--node-manager-port={free_port()}",
            f"--object-manager-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
        ]

    def _node_args(self, slots: int) -> list[str]:
        return [
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={self.cpus}",
            f"--resources={json.dumps({SLOT_RESOURCE: slots})}",
            f"--object-store-memory={self.object_store_mb * 1024 * 1024}",
            f"--temp-dir={self.temp_dir}",
            "--disable-usage-stats",
            *self._ports(),
        ]

    def _ray_start(self, args: list[str]) -> None:
        # A loopback cluster: no token authentication (a `ray start --head` turns it on when
        # ~/.ray/auth_token exists, and then the nodes and drivers that join need the token).
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
        env.pop("RAY_ADDRESS", None)
        proc = subprocess.Popen(
            [ray_executable(), "start", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.groups.append(proc.pid)
        out, _ = proc.communicate(timeout=120)
        self.log.append(out)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start failed ({proc.returncode}):\n{out[-3000:]}")

    def start(self) -> None:
        # Short: Ray's unix socket paths must stay under ~107 characters.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="fray-", dir="/tmp"))
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        head = self.slots if self.head_slots is None else self.head_slots
        self._ray_start(
            [
                "--head",
                f"--port={port}",
                "--include-dashboard=false",
                f"--dashboard-port={free_port()}",
                *self._node_args(head),
            ]
        )
        for _ in range(self.workers):
            self._ray_start([f"--address={self.address}", *self._node_args(self.slots)])
        self.wait_for_nodes(1 + self.workers)

    def wait_for_nodes(self, count: int, timeout: float = 60.0) -> None:
        """Block until ``count`` nodes are alive (a worker registers a moment after start)."""
        code = (
            "import ray,sys,logging; ray.init(address=sys.argv[1], logging_level=logging.ERROR);"
            "print(sum(1 for n in ray.nodes() if n['Alive']))"
        )
        deadline = time.monotonic() + timeout
        while True:
            done = subprocess.run(
                [sys.executable, "-c", code, self.address],
                capture_output=True,
                text=True,
                timeout=60,
                env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
                | {"RAY_AUTH_MODE": "disabled"},
            )
            alive = int(done.stdout.strip() or 0) if done.returncode == 0 else 0
            if alive >= count:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{alive} of {count} Ray nodes came up: {done.stderr[-2000:]}")
            time.sleep(1)

    # --- stop ----------------------------------------------------------------------
    def stop(self, grace: float = 10.0) -> None:
        """End every process the ``ray start`` calls left (their process groups only)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pgid in self.groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, sig)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(_group_alive(g) for g in self.groups):
                time.sleep(0.2)
            if not any(_group_alive(g) for g in self.groups):
                break
        self.groups.clear()
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None

    def alive(self) -> bool:
        return any(_group_alive(g) for g in self.groups)
