"""Output folders and atomic writes: a file or a whole directory is written next to its
destination and swapped in, so a failure (or a kill) half-way leaves the destination as it
was; an output folder that cannot be one (a file is in the way) is a one-line error."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from factory.errors import OutputPathError


def ensure_output_dir(path: Path, option: str = "--out") -> Path:
    """Create the output folder ``path`` (and its parents); OutputPathError names the option
    when a file is in the way or the folder cannot be created."""
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            what = "is a file" if part == path else f"lies under {part}, which is a file"
            raise OutputPathError(path, option, f"{what}; pass a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(path, option, f"cannot create it ({exc.strerror})") from None
    return path


def describe_os_error(exc: OSError) -> str:
    """One line for a filesystem error nobody caught earlier (disk full, permission denied,
    a file where a folder is expected)."""
    where = exc.filename or ""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return f"{where}: a file is in the way of a folder factory needs to write"
    return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)


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


def write_text_atomic(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` (temp file in the same folder, then os.replace);
    ``mode``: its permission bits (else the temp file's, 0o600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
