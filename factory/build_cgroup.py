"""A cgroup that holds one image build: the limits the legacy builder cannot set itself.

The legacy builder (Docker 20.10, no buildx) runs each ``RUN`` step in a container, and its
build API takes memory, swap and CPU limits per step but no process limit. It does take a
``cgroupparent``: every step container is created *under* that cgroup, so a ``pids.max`` and a
memory limit written there hold for the whole build. This module creates such a cgroup (v1 or
v2, cgroupfs driver), tells afterwards whether the build hit one of its limits, and removes it.

It works only where factory shares the engine's cgroup filesystem and may write to it (a local
engine, running as root); :func:`create_build_cgroup` returns the reason when it cannot, and the
caller records that the limit was not enforced.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from factory.processes import pid_alive

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP = "factory-builds"
"""The folder (in every hierarchy) that holds factory's build cgroups."""


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None


def _event_count(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def cgroup_version(root: Path = CGROUP_ROOT) -> int | None:
    """2 for a unified hierarchy, 1 for v1 controllers with pids and memory, else None."""
    if (root / "cgroup.controllers").is_file():
        return 2
    if (root / "pids").is_dir() and (root / "memory").is_dir():
        return 1
    return None


@dataclass
class BuildCgroup:
    """One build's cgroup; ``parent`` is what the build API's ``cgroupparent`` gets."""

    name: str
    version: int
    memory_bytes: int
    pids_max: int
    root: Path = CGROUP_ROOT

    @property
    def parent(self) -> str:
        return f"/{GROUP}/{self.name}"

    def _dir(self, controller: str) -> Path:
        base = self.root if self.version == 2 else self.root / controller
        return base / GROUP / self.name

    def pids_exhausted(self) -> bool:
        """Whether the build's processes reached ``pids_max`` (a fork failed or would have)."""
        directory = self._dir("pids")
        if _event_count(directory / "pids.events", "max") > 0:
            return True
        peak = _read_int(directory / "pids.peak")
        if peak is None:
            peak = _read_int(directory / "pids.current") or 0
        return peak >= self.pids_max

    def memory_exhausted(self) -> bool:
        """Whether the build's memory use reached its limit (a step was OOM-killed, or the
        kernel had to reclaim at the limit)."""
        directory = self._dir("memory")
        if self.version == 2:
            return _event_count(directory / "memory.events", "oom_kill") > 0 or (
                _event_count(directory / "memory.events", "max") > 0
            )
        if _event_count(directory / "memory.oom_control", "oom_kill") > 0:
            return True
        peak = _read_int(directory / "memory.max_usage_in_bytes") or 0
        return peak >= self.memory_bytes * 0.98

    def remove(self, wait_sec: float = 2.0) -> None:
        """Remove the cgroup from every hierarchy (runc creates it in all of them). A cgroup
        whose step container is still being removed is retried for ``wait_sec``."""
        deadline = time.monotonic() + wait_sec
        while True:
            left = [p for p in _build_dirs(self.root, self.name) if not _rmdir_tree(p)]
            if not left or time.monotonic() >= deadline:
                return
            time.sleep(0.1)


def _build_dirs(root: Path, name: str) -> list[Path]:
    if (root / "cgroup.controllers").is_file():
        candidates = [root / GROUP / name]
    else:
        candidates = [h / GROUP / name for h in _hierarchies(root)]
    return [p for p in candidates if p.is_dir()]


def _hierarchies(root: Path) -> list[Path]:
    try:
        return [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def _rmdir_tree(path: Path) -> bool:
    """rmdir a cgroup and the (empty) cgroups below it, deepest first."""
    try:
        children = [p for p in path.iterdir() if p.is_dir()]
    except OSError:
        return not path.exists()
    for child in children:
        _rmdir_tree(child)
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def create_build_cgroup(
    *, memory_mb: int, pids_max: int, root: Path = CGROUP_ROOT
) -> tuple[BuildCgroup | None, str | None]:
    """A fresh build cgroup with the limits set, or (None, why not)."""
    if os.geteuid() != 0:
        return None, "factory does not run as root, so it cannot create the build's cgroup"
    version = cgroup_version(root)
    if version is None:
        return None, f"no cgroup v1 pids/memory controllers or cgroup v2 at {root}"
    cgroup = BuildCgroup(
        f"{os.getpid()}-{uuid.uuid4().hex[:10]}", version, memory_mb << 20, pids_max, root
    )
    try:
        if version == 2:
            for directory in (root, root / GROUP):
                directory.mkdir(exist_ok=True)
                with contextlib.suppress(OSError):
                    _write(directory / "cgroup.subtree_control", "+pids +memory")
            cgroup._dir("pids").mkdir()
            _write(cgroup._dir("pids") / "pids.max", str(pids_max))
            _write(cgroup._dir("memory") / "memory.max", str(cgroup.memory_bytes))
            with contextlib.suppress(OSError):
                _write(cgroup._dir("memory") / "memory.swap.max", "0")
        else:
            cgroup._dir("pids").mkdir(parents=True)
            _write(cgroup._dir("pids") / "pids.max", str(pids_max))
            cgroup._dir("memory").mkdir(parents=True)
            _write(cgroup._dir("memory") / "memory.limit_in_bytes", str(cgroup.memory_bytes))
            with contextlib.suppress(OSError):  # absent without swap accounting
                _write(
                    cgroup._dir("memory") / "memory.memsw.limit_in_bytes", str(cgroup.memory_bytes)
                )
    except OSError as exc:
        cgroup.remove(wait_sec=0)
        return None, f"cannot set up the build's cgroup ({exc.strerror}: {exc.filename})"
    return cgroup, None


def remove_stale_build_cgroups(root: Path = CGROUP_ROOT) -> int:
    """Remove build cgroups whose factory process is gone (what a killed run left behind)."""
    removed = 0
    parents = (
        [root / GROUP]
        if (root / "cgroup.controllers").is_file()
        else [h / GROUP for h in _hierarchies(root)]
    )
    for parent in parents:
        try:
            names = [p.name for p in parent.iterdir() if p.is_dir()]
        except OSError:
            continue
        for name in names:
            pid = name.split("-", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)) and _rmdir_tree(parent / name):
                removed += 1
    return removed
