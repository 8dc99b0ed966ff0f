"""What travels between the driver and a node: a task directory (a tar, or a path on a shared
filesystem) and, on the way back, the folder of logs the node wrote."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from factory.runtime import tar_directory

MAX_PAYLOAD_BYTES = 512 * 1024 * 1024
"""A task directory larger than this is refused (use --ray-shared-fs)."""
MAX_LOG_BYTES = 64 * 1024 * 1024
"""Logs larger than this stay on the node (the report says so)."""


@dataclass(frozen=True)
class TaskPayload:
    """A task directory on its way to a node."""

    name: str
    """The directory's name (a task's id may come from it)."""
    tar: bytes | None = None
    """The directory as a tar (entries under ``name/``)."""
    path: str | None = None
    """Or: its absolute path, valid on every node (shared filesystem)."""

    @classmethod
    def pack(cls, task_dir: Path, *, shared_fs: bool = False) -> TaskPayload:
        task_dir = Path(task_dir)
        if shared_fs:
            return cls(task_dir.name, path=str(task_dir.resolve()))
        data = tar_directory(task_dir, task_dir.name)
        if len(data) > MAX_PAYLOAD_BYTES:
            from factory.errors import FactoryError

            raise FactoryError(
                f"{task_dir}: {len(data) >> 20} MiB is too large to send to a node; put the "
                "tasks on a filesystem every node mounts and pass --ray-shared-fs"
            )
        return cls(task_dir.name, tar=data)

    def materialize(self, scratch: Path) -> Path:
        """The task directory on this node (unpacked under ``scratch``, or the shared path)."""
        if self.tar is None:
            assert self.path is not None
            return Path(self.path)
        _extract(self.tar, scratch)
        return scratch / self.name


def _extract(data: bytes, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
        if hasattr(tarfile, "tar_filter"):
            # 'tar' keeps modes (executable bits feed the content hash) and symlinks, but
            # refuses absolute paths and entries outside dest.
            archive.extractall(dest, filter="tar")
        else:  # pragma: no cover - Python without extraction filters
            archive.extractall(dest)  # noqa: S202 - our own driver made this tar


def pack_logs(folder: Path) -> bytes:
    """The logs a node wrote for one unit of work (empty when none or too large)."""
    if not folder.is_dir():
        return b""
    data = tar_directory(folder, "logs")
    return data if len(data) <= MAX_LOG_BYTES else b""


def unpack_logs(data: bytes, dest: Path) -> None:
    """Put a node's logs at ``dest`` (replacing what an earlier attempt left there)."""
    if not data:
        return
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)
    scratch = dest.parent / f".{dest.name}.incoming"
    shutil.rmtree(scratch, ignore_errors=True)
    _extract(data, scratch)
    dest.parent.mkdir(parents=True, exist_ok=True)
    (scratch / "logs").rename(dest)
    shutil.rmtree(scratch, ignore_errors=True)


def relocate(model_json: str, old_prefix: str, new_prefix: str) -> str:
    """Rewrite the paths under ``old_prefix`` (a node's scratch folder) in a model's JSON."""
    old = json.dumps(old_prefix)[1:-1]
    new = json.dumps(new_prefix)[1:-1]
    return model_json.replace(old, new)
