"""``factory export`` and ``factory import``: dispatch to the formats, detection, integrity."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from factory import __version__
from factory.fsutil import staged_directory
from factory.publish.errors import (
    ExportFileError,
    IntegrityError,
    OutputExistsError,
    PublishError,
    UnknownFormatError,
)
from factory.publish.items import ImportItem
from factory.publish.models import FORMATS, MANIFEST_NAME, ExportManifest, dataset_hash
from factory.publish.source import Source, load_source
from factory.tasks.hashing import hash_tree


@dataclass
class ExportResult:
    out: Path
    manifest: ExportManifest
    warnings: list[str] = field(default_factory=list)


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise UnknownFormatError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return fmt


def _check_out(src: Path, out: Path, force: bool) -> None:
    src_r, out_r = src.resolve(), out.resolve()
    if out_r == src_r or src_r.is_relative_to(out_r):
        raise PublishError(f"{out}: the output would replace its own source {src}; pick another")
    if out.exists() and not out.is_dir():
        raise PublishError(f"{out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not force:
        raise OutputExistsError(out)


def export_suite(
    src: Path,
    fmt: str,
    out: Path,
    *,
    name: str | None = None,
    version: str = "1.0",
    description: str | None = None,
    license: str = "apache-2.0",
    git_url: str | None = None,
    git_commit: str | None = None,
    rows_per_shard: int = 1000,
    force: bool = False,
) -> ExportResult:
    """Export the tasks of a suite (or a folder of tasks) to ``out`` in format ``fmt``."""
    _check_format(fmt)
    source = load_source(src)
    _check_out(src, out, force)
    name = name or source.name
    description = description if description is not None else _description(source)
    with staged_directory(out) as staging:
        if fmt == "jsonl":
            from factory.publish.jsonl import export_jsonl

            index = export_jsonl(source, staging)
        elif fmt == "harbor":
            from factory.publish.harbor import export_harbor

            index = export_harbor(
                source,
                staging,
                name=name,
                version=version,
                description=description,
                git_url=git_url,
                git_commit=git_commit,
            )
        else:
            from factory.publish.hf import export_hf

            index = export_hf(
                source,
                staging,
                name=name,
                version=version,
                description=description,
                license=license,
                rows_per_shard=rows_per_shard,
            )
        manifest = ExportManifest(
            format=fmt,  # type: ignore[arg-type]
            factory_version=__version__,
            name=name,
            version=version,
            description=description,
            suite=source.manifest.suite if source.manifest else None,
            seed=source.manifest.seed if source.manifest else None,
            task_count=len(source.tasks),
            content_hash=dataset_hash(t.meta.content_hash for t in source.tasks),
            index=index,
        )
        (staging / MANIFEST_NAME).write_text(manifest.model_dump_json(indent=2) + "\n")
    return ExportResult(out=out, manifest=manifest, warnings=source.warnings)


def _description(source: Source) -> str:
    if source.manifest is not None:
        return (
            f"{len(source.tasks)} verified tasks of suite '{source.manifest.suite}' "
            f"(seed {source.manifest.seed}), made by factory"
        )
    return f"{len(source.tasks)} Harbor tasks from {source.name}"


# --- import -----------------------------------------------------------------------------


@dataclass
class ImportedTask:
    id: str
    dest: Path
    status: str
    """'imported', 'unchanged' (already there, same hash) or 'replaced' (--force)."""


@dataclass
class ImportResult:
    format: str
    source: Path
    tasks: list[ImportedTask]
    manifest: ExportManifest | None = None


def read_manifest(path: Path) -> ExportManifest:
    try:
        return ExportManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ExportFileError(path, f"cannot read file ({exc})") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(p) for p in error.get("loc", ()))
        raise ExportFileError(path, error.get("msg", str(exc)), loc or None) from None


def detect_format(src: Path) -> tuple[str, Path, ExportManifest | None]:
    """(format, the file or folder to read, the export manifest if any) of an import source."""
    if not src.exists():
        raise UnknownFormatError(f"{src}: no such file or folder")
    if src.is_dir():
        manifest_path = src / MANIFEST_NAME
        if manifest_path.is_file():
            manifest = read_manifest(manifest_path)
            return manifest.format, _entry_point(src, manifest.format), manifest
        for fmt in FORMATS:
            try:
                return fmt, _entry_point(src, fmt), None
            except UnknownFormatError:
                continue
        raise UnknownFormatError(
            f"{src}: not an export (no {MANIFEST_NAME}, tasks.jsonl, registry.json or parquet "
            "files)"
        )
    suffix = src.name.lower()
    if suffix.endswith(".jsonl"):
        return "jsonl", src, _sibling_manifest(src)
    if suffix.endswith(".parquet"):
        return "hf", src, None
    if suffix.endswith(".json"):
        return "harbor", src, _sibling_manifest(src)
    raise UnknownFormatError(f"{src}: not a .jsonl index, a registry .json or a .parquet file")


def _entry_point(folder: Path, fmt: str) -> Path:
    if fmt == "jsonl":
        from factory.publish.jsonl import INDEX

        path = folder / INDEX
    elif fmt == "harbor":
        from factory.publish.harbor import REGISTRY

        path = folder / REGISTRY
    else:
        from factory.publish.hf import parquet_files

        return folder if parquet_files(folder) else _missing(folder, "parquet files")
    return path if path.is_file() else _missing(folder, path.name)


def _missing(folder: Path, what: str) -> Path:
    raise UnknownFormatError(f"{folder}: no {what} here")


def _sibling_manifest(path: Path) -> ExportManifest | None:
    candidate = path.parent / MANIFEST_NAME
    return read_manifest(candidate) if candidate.is_file() else None


def import_export(
    src: Path,
    out: Path,
    *,
    fmt: str | None = None,
    dataset: str | None = None,
    force: bool = False,
    on_task=None,
) -> ImportResult:
    """Rebuild the task directories of an export under ``out/<id>/``, checking each against
    the content hash the export recorded."""
    detected, entry, manifest = detect_format(src)
    if fmt is not None and _check_format(fmt) != detected:
        raise UnknownFormatError(f"{src}: this is a {detected} export, not {fmt}")
    items = _items(detected, entry, dataset)
    out.mkdir(parents=True, exist_ok=True)
    result = ImportResult(format=detected, source=src, tasks=[], manifest=manifest)
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ExportFileError(item.where, f"task '{item.id}' appears twice", item.field)
        seen.add(item.id)
        imported = _import_one(item, out, force)
        result.tasks.append(imported)
        if on_task is not None:
            on_task(imported)
    if manifest is not None and len(result.tasks) != manifest.task_count:
        raise ExportFileError(
            src / MANIFEST_NAME if src.is_dir() else src,
            f"lists {manifest.task_count} tasks, the export holds {len(result.tasks)}",
            "task_count",
        )
    return result


def _items(fmt: str, entry: Path, dataset: str | None) -> Iterable[ImportItem]:
    if fmt == "jsonl":
        from factory.publish.jsonl import import_items

        return import_items(entry)
    if fmt == "harbor":
        from factory.publish.harbor import import_items

        return import_items(entry, dataset)
    from factory.publish.hf import import_items, parquet_files

    return import_items(parquet_files(entry))


def _import_one(item: ImportItem, out: Path, force: bool) -> ImportedTask:
    dest = out / item.id
    status = "imported"
    if dest.exists():
        if item.content_hash is not None and hash_tree(dest) == item.content_hash:
            return ImportedTask(item.id, dest, "unchanged")
        if not force:
            raise OutputExistsError(dest)
        status = "replaced"
    with staged_directory(dest) as staging:
        staging.rmdir()  # the formats create the folder themselves
        item.materialize(staging)
        if item.content_hash is not None:
            actual = hash_tree(staging)
            if actual != item.content_hash:
                raise IntegrityError(
                    item.where,
                    f"task '{item.id}' rebuilds to content hash {actual[:12]}, the export "
                    f"records {item.content_hash[:12]}",
                    item.field,
                )
    return ImportedTask(item.id, dest, status)
