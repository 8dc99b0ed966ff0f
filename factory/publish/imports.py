"""`factory import`: tasks from outside into a folder of Harbor task directories, whatever they
come as, told apart by their files unless ``--format`` says (the importers below do the work):

* an export of ``factory export`` (``jsonl``, ``harbor`` registry, ``hf`` parquet), rebuilt and
  checked against the content hashes it records (:mod:`factory.publish.api`);
* public task directories (``harbor``, ``terminal-bench-1``), made runnable offline
  (:mod:`factory.importers.layouts`); one bad task never stops the batch;
* ``bfcl``: BFCL's multi-turn base entries, from a ``bfcl_eval`` wheel or folder
  (:mod:`factory.importers.bfcl_tasks`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from factory.errors import FactoryError


class ImportFormat(str, Enum):
    """``factory import --format``: what the sources are."""

    JSONL = "jsonl"
    HARBOR = "harbor"
    """A Harbor registry export, or Harbor task directories."""
    HF = "hf"
    TB1 = "terminal-bench-1"
    BFCL = "bfcl"


_EXPORTS = {ImportFormat.JSONL, ImportFormat.HARBOR, ImportFormat.HF}


@dataclass
class Imported:
    """One task (or one source that failed as a whole) of an import."""

    source: str
    format: str
    id: str | None = None
    dest: str | None = None
    status: str = "imported"
    """imported, unchanged (already there, same hash), replaced (--force), skipped (a BFCL
    entry that cannot become a task) or failed (a task directory that does not import)."""
    notes: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class ImportRun:
    out: Path
    tasks: list[Imported] = field(default_factory=list)
    report: Path | None = None
    """BFCL: the report of every entry and its skip reason."""

    @property
    def failed(self) -> list[Imported]:
        return [t for t in self.tasks if t.status == "failed"]


def is_export(src: Path) -> bool:
    from factory.publish.api import detect_format
    from factory.publish.errors import UnknownFormatError

    try:
        detect_format(src)
    except UnknownFormatError:
        return False
    return True


def import_sources(
    sources: list[Path],
    out: Path,
    *,
    fmt: ImportFormat | None = None,
    dataset: str | None = None,
    force: bool = False,
    ids: list[str] | None = None,
    limit: int | None = None,
    on_task: Callable[[Imported], None] = lambda _t: None,
) -> ImportRun:
    """Import every source into ``out``; ``on_task`` sees each task as it lands."""
    from factory.importers.layouts import Layout

    run = ImportRun(out)

    def add(item: Imported) -> None:
        run.tasks.append(item)
        on_task(item)

    if fmt is ImportFormat.BFCL or (fmt is None and sources and sources[0].suffix == ".whl"):
        run.report = _bfcl(sources, out, ids, limit, add)
        return run
    if ids or limit is not None:
        raise FactoryError("--ids and --limit select BFCL entries: use them with --format bfcl")
    if not sources:
        raise FactoryError("name what to import: an export, task directories or folders of them")
    for src in sources:
        export = fmt in _EXPORTS and (fmt is not ImportFormat.HARBOR or is_export(src))
        if export or (fmt is None and is_export(src)):
            _export(src, out, fmt, dataset, force, add)
        else:
            layout = {ImportFormat.HARBOR: Layout.HARBOR, ImportFormat.TB1: Layout.TB1}.get(fmt)
            _task_dirs(src, out, layout, add)
    return run


def _export(src, out, fmt, dataset, force, add) -> None:
    from factory.publish.api import detect_format, import_export

    kind = fmt.value if fmt else detect_format(src)[0]

    def landed(task) -> None:
        add(Imported(str(src), kind, task.id, str(task.dest), task.status))

    import_export(src, out, fmt=kind, dataset=dataset, force=force, on_task=landed)


def _task_dirs(src: Path, out: Path, layout, add) -> None:
    from factory.importers.layouts import Layout, import_task
    from factory.tasks.model import discover_task_dirs

    for task_dir in discover_task_dirs([src]):
        result = import_task(task_dir, out, layout=layout)
        item = Imported(
            str(task_dir),
            (result.layout or layout or Layout.HARBOR).value,
            notes=result.notes,
        )
        if result.error:
            item.status, item.error = "failed", result.error
        else:
            item.id, item.dest = result.dest.name if result.dest else None, str(result.dest)
        add(item)


def _bfcl(sources, out, ids, limit, add) -> Path:
    from factory.importers.bfcl_tasks import REPORT_NAME, import_bfcl

    if len(sources) > 1:
        raise FactoryError("--format bfcl reads one bfcl_eval wheel or folder")
    wanted = [i for item in ids or [] for i in item.split(",") if i]

    def landed(result) -> None:
        item = Imported("bfcl:" + result.entry_id, ImportFormat.BFCL.value, result.task_id)
        item.notes = list(result.notes)
        if result.skipped:
            item.status, item.error = "skipped", result.skipped
        else:
            item.dest = str(result.dest)
        add(item)

    import_bfcl(
        out, source=sources[0] if sources else None, ids=wanted, limit=limit, on_result=landed
    )
    return out / REPORT_NAME
