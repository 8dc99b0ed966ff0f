"""The ``jsonl`` format: ``tasks.jsonl`` (one :class:`TaskRecord` per line) and the task
directories under ``tasks/<id>/``, copied byte for byte (modes and links kept)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from factory.publish.errors import ExportFileError
from factory.publish.items import ImportItem, task_folder_item
from factory.publish.models import TaskRecord
from factory.publish.source import Source
from factory.publish.tree import copy_task_dir, safe_relpath

INDEX = "tasks.jsonl"
TASKS_DIR = "tasks"


def export_jsonl(source: Source, out: Path) -> list[str]:
    lines = []
    for task in source.tasks:
        rel = f"{TASKS_DIR}/{task.id}"
        copy_task_dir(task.dir, out / rel)
        record = TaskRecord(**task.meta.model_dump(), path=rel)
        lines.append(record.model_dump_json())
    (out / INDEX).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return [INDEX]


def read_index(index: Path) -> list[TaskRecord]:
    """The records of a ``tasks.jsonl``; errors name the line and the field."""
    try:
        text = index.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExportFileError(index, f"cannot read file ({exc})") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(TaskRecord.model_validate_json(line))
        except ValidationError as exc:
            error = exc.errors()[0]
            loc = ".".join(str(p) for p in error.get("loc", ()))
            field = f"line {number}" + (f": {loc}" if loc else "")
            raise ExportFileError(index, error.get("msg", str(exc)), field) from None
    return records


def import_items(index: Path) -> Iterator[ImportItem]:
    base = index.parent
    for number, record in enumerate(read_index(index), start=1):
        field = f"line {number}: path"
        yield task_folder_item(
            base,
            safe_relpath(record.path, index, field),
            record.path,
            id=record.id,
            content_hash=record.content_hash,
            where=index,
            field=f"line {number}",
            error_field=field,
        )
