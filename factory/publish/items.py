"""What an import reader yields: one task to rebuild, with the hash the export recorded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from factory.publish.errors import ExportFileError
from factory.publish.tree import copy_task_dir


@dataclass
class ImportItem:
    id: str
    content_hash: str | None
    """The hash the export recorded (None: the source recorded none, nothing to check)."""
    where: Path
    """The file that describes this task (for error messages)."""
    field: str
    """Where in that file (e.g. 'line 3', 'tasks[2]', 'row 7')."""
    materialize: Callable[[Path], None]
    """Writes the task's files into an empty (missing) folder."""


def task_folder_item(
    base: Path,
    rel: PurePosixPath,
    named: str,
    *,
    id: str,
    content_hash: str | None,
    where: Path,
    field: str,
    error_field: str,
    hint: str = "",
) -> ImportItem:
    """The task in folder ``base/rel`` of an export (``named`` as ``where`` writes it, at
    ``error_field``), copied as it is; a folder that is missing, a link or outside ``base`` is
    an ExportFileError (``hint`` ends the message about a missing one)."""
    src = base / rel
    if not src.is_dir() or src.is_symlink():
        raise ExportFileError(where, f"'{named}' is not a directory here{hint}", error_field)
    if not src.resolve().is_relative_to(base.resolve()):
        raise ExportFileError(where, f"'{named}' leads outside the export", error_field)
    return ImportItem(
        id=id,
        content_hash=content_hash,
        where=where,
        field=field,
        materialize=lambda dest: copy_task_dir(src, dest),
    )
