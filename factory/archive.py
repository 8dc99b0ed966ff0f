"""Tar archives going to and coming from the engine: uploads of tests and solutions, and
downloads of what a container wrote (build contexts are packed by :mod:`factory.runtime.builds`,
with the same refusals).

Going in, only regular files, folders and links are packed (a FIFO or device node is refused
with the file named: reading a FIFO blocks forever). Coming out, the archive is read as a
stream with a cap per file, a cap in total and a deadline, so a 2 GB file in /logs/verifier
costs neither 2 GB of memory nor an unbounded wait; what was cut is recorded.
"""

from __future__ import annotations

import io
import os
import tarfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from factory.errors import UnsafeTaskFileError
from factory.inputs import special_file_kind

DOCKERFILE_NAME = ".factory.Dockerfile"
"""The name the Dockerfile factory builds gets inside the build context."""
DEFAULT_FILE_CAP = 1 << 20
"""Bytes kept of one downloaded file."""
DEFAULT_TOTAL_CAP = 16 << 20
"""Bytes kept of one download in all."""
SMALL_FILE = 4096
"""Files up to this size are kept even past the total cap (reward files are this small)."""
MAX_MEMBERS = 10_000
"""Archive entries read from one download before it is cut."""


def refuse_special(path: Path) -> None:
    """Raise when ``path`` is neither a regular file, a folder nor a link (a FIFO, a device)."""
    kind = special_file_kind(os.lstat(path).st_mode)
    if kind:
        raise UnsafeTaskFileError(path, f"{kind}; only regular files, folders and links are copied")


def tar_directory(local_dir: Path, arcname: str) -> bytes:
    """A tar of ``local_dir`` whose entries live under ``arcname/``, owned by root. Links are
    packed as links (never followed)."""
    return tar_paths([(local_dir, arcname)])


def tar_paths(items: list[tuple[Path, str]]) -> bytes:
    """One tar of several local files or folders, each ``(path, arcname)`` packed as
    :func:`tar_directory` packs one, in order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path, name in (pair for local, arcname in items for pair in _walk(local, arcname)):
            refuse_special(path)
            info = archive.gettarinfo(str(path), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if info.isreg():
                with open(path, "rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
    return buffer.getvalue()


def _walk(root: Path, arcname: str) -> Iterator[tuple[Path, str]]:
    yield root, arcname
    if root.is_symlink() or not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        here = Path(dirpath)
        rel = here.relative_to(root)
        for name in sorted(dirnames) + sorted(filenames):
            yield here / name, str(Path(arcname) / rel / name)


class DownloadedFiles(dict):
    """Relative name -> content of what a download kept; ``truncated`` says what was cut."""

    def __init__(self) -> None:
        super().__init__()
        self.truncated: list[str] = []


class _ForwardReader(io.RawIOBase):
    """A file object over an iterator of byte chunks (the engine's archive stream) that can
    seek forward: what is skipped (the rest of a file past its cap) is dropped chunk by chunk,
    never copied. Past ``deadline`` it reads as the end of the stream."""

    def __init__(self, chunks: Iterable[bytes], deadline: float) -> None:
        self._chunks = iter(chunks)
        self._pending = memoryview(b"")
        self._pos = 0
        self.deadline = deadline
        self.expired = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def _fill(self) -> bool:
        while not len(self._pending):
            if time.monotonic() > self.deadline:
                self.expired = True
                return False
            try:
                self._pending = memoryview(next(self._chunks))
            except StopIteration:
                return False
        return True

    def readinto(self, buffer) -> int:
        if not self._fill():
            return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        self._pos += size
        return size

    def read(self, size: int = -1) -> bytes:
        """Exactly ``size`` bytes unless the stream ends first (tarfile wants whole blocks)."""
        parts: list[bytes] = []
        left = size if size >= 0 else 1 << 62
        while left > 0 and self._fill():
            step = min(left, len(self._pending))
            parts.append(bytes(self._pending[:step]))
            self._pending = self._pending[step:]
            self._pos += step
            left -= step
        return b"".join(parts)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self._pos + offset
        if whence not in (io.SEEK_SET, io.SEEK_CUR) or target < self._pos:
            raise OSError("the archive stream only seeks forward")
        while self._pos < target and self._fill():
            step = min(target - self._pos, len(self._pending))
            self._pending = self._pending[step:]
            self._pos += step
        return self._pos


def extract_capped(
    chunks: Iterable[bytes],
    *,
    file_cap: int = DEFAULT_FILE_CAP,
    total_cap: int = DEFAULT_TOTAL_CAP,
    timeout_sec: float = 60.0,
) -> DownloadedFiles:
    """Regular files of a tar stream whose top folder is stripped, at most ``file_cap`` bytes
    each and ``total_cap`` in all (small files always), read within ``timeout_sec``."""
    files = DownloadedFiles()
    reader = _ForwardReader(chunks, time.monotonic() + timeout_sec)
    kept = 0
    try:
        # Not stream mode ("r|"): that skips by reading; this reader skips by dropping chunks.
        with tarfile.open(fileobj=reader, mode="r:") as archive:
            for count, member in enumerate(archive):
                if count >= MAX_MEMBERS:
                    files.truncated.append(f"more than {MAX_MEMBERS} entries: the rest skipped")
                    break
                if not member.isfile():
                    continue
                name = member.name.split("/", 1)[1] if "/" in member.name else member.name
                room = file_cap if member.size <= SMALL_FILE else min(file_cap, total_cap - kept)
                if room <= 0:
                    files.truncated.append(f"{name}: skipped ({member.size} bytes, total cap)")
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                files[name] = handle.read(room)
                kept += len(files[name])
                if member.size > room:
                    files.truncated.append(f"{name}: kept the first {room} of {member.size} bytes")
    except (tarfile.TarError, OSError) as exc:
        files.truncated.append(f"archive cut short ({exc})")
    if reader.expired:
        files.truncated.append(f"download stopped at its {timeout_sec:g}s deadline")
    return files
