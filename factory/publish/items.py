"""What an import reader yields: one task to rebuild, with the hash the export recorded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


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
