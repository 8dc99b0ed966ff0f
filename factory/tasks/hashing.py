"""Content hashes of directories: the key for image caching and for resuming validation."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from factory.errors import UnsafeTaskFileError
from factory.inputs import special_file_kind

_SKIP_DIRS = {"__pycache__", ".git", ".pytest_cache"}


def iter_files(root: Path) -> Iterable[Path]:
    """Regular files and symlinks under ``root``, sorted, skipping caches and VCS folders."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath) / name


def hash_tree(root: Path, *, extra: Iterable[str] = ()) -> str:
    """sha256 over relative paths, executable bits, link targets and file contents.

    ``extra`` strings (e.g. a rewritten Dockerfile or a base image id) are mixed in, so that
    anything else the result depends on also changes the hash.
    """
    digest = hashlib.sha256()
    for item in extra:
        digest.update(b"extra\0" + item.encode() + b"\0")
    if root.exists():
        for path in iter_files(root):
            rel = path.relative_to(root).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                digest.update(b"link\0" + rel.encode() + b"\0" + os.readlink(path).encode() + b"\0")
                continue
            kind = special_file_kind(mode)
            if kind:  # never open it: opening a FIFO blocks until someone writes to it
                raise UnsafeTaskFileError(path, f"{kind}; only regular files can be hashed")
            mode = b"x" if os.access(path, os.X_OK) else b"-"
            size = str(path.stat().st_size).encode()
            digest.update(b"file\0" + rel.encode() + b"\0" + mode + b"\0" + size + b"\0")
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
    return digest.hexdigest()
