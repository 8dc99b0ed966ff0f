"""The ``hf`` format: a Hugging Face ``datasets`` dataset.

::

    data/train-00000-of-0000N.parquet   one row per task (schema: :func:`schema`)
    README.md                           dataset card: YAML header (license, configs/data_files,
                                        split size) and a description with task counts

Each row holds the task's metadata columns, ``instruction``, ``task_toml`` and ``files``: every
entry of the task directory as {path, kind, mode, content (bytes), link_target}.
:func:`rebuild_task` turns one row (from pyarrow or from ``datasets``) back into a task
directory; :func:`load_tasks` does it for every row of a parquet file or folder.

pyarrow is imported on use (the ``publish`` extra), so ``import factory`` stays light.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from factory import __version__
from factory.fsutil import staged_directory
from factory.publish.errors import ExportFileError, IntegrityError, MissingDependencyError
from factory.publish.items import ImportItem
from factory.publish.models import HfRow
from factory.publish.source import Source, metadata_json
from factory.publish.tree import read_tree, write_tree
from factory.tasks.hashing import hash_tree

DATA_DIR = "data"
SPLIT = "train"
CARD = "README.md"
BATCH_ROWS = 16


def _pa():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("pyarrow", "publish") from None
    return pa, pq


def schema():
    """The parquet schema (explicit, so an all-empty column keeps its type)."""
    pa, _ = _pa()
    string, f64, i64 = pa.string(), pa.float64(), pa.int64()
    file_entry = pa.struct(
        [
            ("path", string),
            ("kind", string),
            ("mode", pa.int32()),
            ("content", pa.binary()),
            ("link_target", string),
        ]
    )
    return pa.schema(
        [
            ("id", string),
            ("name", string),
            ("instruction", string),
            ("task_toml", string),
            ("files", pa.list_(file_entry)),
            ("content_hash", string),
            ("difficulty", string),
            ("category", string),
            ("taxonomy_path", string),
            ("generator", string),
            ("family", string),
            ("seed", i64),
            ("source", string),
            ("verifier_strength", f64),
            ("pass_rate", f64),
            ("validation_outcome", string),
            ("validation_reason", string),
            ("tags", pa.list_(string)),
            ("file_count", i64),
            ("total_bytes", i64),
            ("metadata_json", string),
        ]
    )


def shard_names(count: int, rows_per_shard: int) -> list[str]:
    shards = max(1, math.ceil(count / rows_per_shard))
    return [f"{DATA_DIR}/{SPLIT}-{i:05d}-of-{shards:05d}.parquet" for i in range(shards)]


def export_hf(
    source: Source,
    out: Path,
    *,
    name: str,
    version: str,
    description: str,
    license: str,
    rows_per_shard: int = 1000,
) -> list[str]:
    pa, pq = _pa()
    table_schema = schema()
    names = shard_names(len(source.tasks), rows_per_shard)
    (out / DATA_DIR).mkdir(parents=True, exist_ok=True)
    arrow_bytes = 0
    for shard, rel in enumerate(names):
        chunk = source.tasks[shard * rows_per_shard : (shard + 1) * rows_per_shard]
        with pq.ParquetWriter(out / rel, table_schema, compression="zstd") as writer:
            if not chunk:
                writer.write_table(table_schema.empty_table())
            for start in range(0, len(chunk), BATCH_ROWS):
                rows = [_row(task) for task in chunk[start : start + BATCH_ROWS]]
                table = pa.Table.from_pylist(rows, schema=table_schema)
                arrow_bytes += table.nbytes
                writer.write_table(table)
    sizes = SplitSizes(
        num_examples=len(source.tasks),
        num_bytes=arrow_bytes,
        download_size=sum((out / rel).stat().st_size for rel in names),
    )
    (out / CARD).write_text(
        render_card(
            source,
            name=name,
            version=version,
            description=description,
            license=license,
            sizes=sizes,
        ),
        encoding="utf-8",
    )
    return names


def _row(task) -> dict[str, Any]:
    row = HfRow(
        **task.meta.model_dump(),
        instruction=task.task.instruction,
        task_toml=task.task_toml,
        files=read_tree(task.dir),
        metadata_json=metadata_json(task),
    )
    data = row.model_dump()
    data["files"] = [entry.model_dump() for entry in row.files]
    return data


# --- dataset card -------------------------------------------------------------------------


def _size_category(count: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if count < limit:
            return label
    return "100K<n<1M"


class SplitSizes(BaseModel):
    """The split's size as the card's ``dataset_info`` records it."""

    num_examples: int
    num_bytes: int
    """Arrow (in-memory) size of the rows."""
    download_size: int
    """Bytes of the parquet files."""


def render_card(
    source: Source,
    *,
    name: str,
    version: str,
    description: str,
    license: str,
    sizes: SplitSizes,
) -> str:
    count = len(source.tasks)
    header = {
        "license": license,
        "pretty_name": name,
        "size_categories": [_size_category(count)],
        "tags": ["harbor", "agents", "reinforcement-learning", "factory"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": SPLIT, "path": f"{DATA_DIR}/{SPLIT}-*.parquet"}],
            }
        ],
        "dataset_info": {
            "splits": [
                {"name": SPLIT, "num_bytes": sizes.num_bytes, "num_examples": sizes.num_examples}
            ],
            "download_size": sizes.download_size,
            "dataset_size": sizes.num_bytes,
        },
    }
    lines = [
        "---",
        yaml.safe_dump(header, sort_keys=False).rstrip(),
        "---",
        "",
        f"# {name}",
        "",
        description or f"{count} verified Harbor tasks for training LLM agents.",
        "",
        f"- version: {version}",
        f"- tasks: {count}",
        f"- made by: factory {__version__}",
    ]
    if source.manifest is not None:
        lines.append(f"- suite: {source.manifest.suite} (seed {source.manifest.seed})")
    for title, key in (
        ("category", "category"),
        ("difficulty", "difficulty"),
        ("taxonomy leaf", "taxonomy_path"),
    ):
        counts = Counter(getattr(t.meta, key) or "(none)" for t in source.tasks)
        if not counts:
            continue
        lines += ["", f"## Tasks per {title}", "", f"| {title} | tasks |", "| --- | ---: |"]
        lines += [f"| {k} | {v} |" for k, v in sorted(counts.items())]
    lines += [
        "",
        "## Columns",
        "",
        "One row per task. `files` holds every entry of the Harbor task directory "
        "(`path`, `kind` file/symlink/dir, `mode` permission bits, `content` bytes, "
        "`link_target`); `instruction` and `task_toml` repeat the two main files as text. "
        "`content_hash` is factory's sha256 over the directory (paths, executable bits, link "
        "targets, contents). The other columns come from task.toml's `[metadata]` and the "
        "suite's journal; `metadata_json` holds the whole `[metadata]` table.",
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        'ds = load_dataset("parquet", data_files="data/*.parquet", split="train")',
        "",
        "# rebuild the Harbor task directories (pip install factory-envs[publish])",
        "from factory.publish.hf import rebuild_task",
        "for row in ds:",
        '    rebuild_task(row, "tasks/")',
        "```",
        "",
        "or, without `datasets`: `factory import . --out tasks/`.",
        "",
    ]
    return "\n".join(lines)


# --- reading back -------------------------------------------------------------------------


def parquet_files(src: Path) -> list[Path]:
    """The parquet files of an hf export: ``src`` itself, or ``src/data/*.parquet``, or
    ``src/*.parquet``."""
    if src.is_file():
        return [src]
    for folder in (src / DATA_DIR, src):
        files = sorted(folder.glob("*.parquet"))
        if files:
            return files
    return []


def iter_rows(path: Path) -> Iterator[tuple[int, HfRow]]:
    """(row number, row) of one parquet file; malformed rows raise ExportFileError."""
    _, pq = _pa()
    try:
        reader = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise ExportFileError(path, f"not a parquet file ({exc})") from None
    missing = {"id", "files", "content_hash"} - set(reader.schema_arrow.names)
    if missing:
        raise ExportFileError(path, f"column(s) {', '.join(sorted(missing))} missing")
    number = 0
    for batch in reader.iter_batches(batch_size=BATCH_ROWS):
        for data in batch.to_pylist():
            yield number, validate_row(data, path, number)
            number += 1


def validate_row(data: Mapping[str, Any] | HfRow, where: Path | str, number: int = 0) -> HfRow:
    if isinstance(data, HfRow):
        return data
    try:
        return HfRow.model_validate(dict(data))
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(p) for p in error.get("loc", ()))
        raise ExportFileError(where, error.get("msg", str(exc)), f"row {number}: {loc}") from None


def rebuild_task(row: Mapping[str, Any] | HfRow, out: Path | str, *, check: bool = True) -> Path:
    """Write one row's task directory to ``out/<id>`` (replacing it) and return that path.

    ``row`` is a dict from pyarrow or from ``datasets`` (``ds[i]``). With ``check`` the
    rebuilt directory must hash to the row's ``content_hash``.
    """
    out = Path(out)
    parsed = validate_row(row, f"row {row.get('id', '?') if isinstance(row, Mapping) else '?'}")
    dest = out / parsed.id
    with staged_directory(dest) as staging:
        write_tree(parsed.files, staging, where=f"row {parsed.id}")
        if check:
            actual = hash_tree(staging)
            if actual != parsed.content_hash:
                raise IntegrityError(
                    f"row {parsed.id}",
                    f"rebuilt directory hashes to {actual[:12]}, the row records "
                    f"{parsed.content_hash[:12]}",
                    "content_hash",
                )
    return dest


def load_tasks(src: Path | str, out: Path | str) -> list[Path]:
    """Rebuild every task of a parquet file (or an hf export folder) under ``out``."""
    files = parquet_files(Path(src))
    if not files:
        raise ExportFileError(src, "no parquet files here")
    return [rebuild_task(row, out) for path in files for _, row in iter_rows(path)]


def import_items(files: list[Path]) -> Iterator[ImportItem]:
    for path in files:
        for number, row in iter_rows(path):
            yield ImportItem(
                id=row.id,
                content_hash=row.content_hash,
                where=path,
                field=f"row {number}",
                materialize=lambda dest, row=row, path=path, number=number: write_tree(
                    row.files, dest, where=f"{path} row {number}"
                ),
            )
