"""Atomic writes: a file or a whole directory is written next to its destination and swapped
in, so a failure (or a kill) half-way leaves the destination as it was."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_directory(dest: Path, *, copy_from: Path | None = None) -> Iterator[Path]:
    """Yield an empty folder (or a copy of ``copy_from``) that replaces ``dest`` on success."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        if copy_from is not None:
            staging.rmdir()
            shutil.copytree(copy_from, staging, symlinks=True)
        yield staging
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (temp file in the same folder, then os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
