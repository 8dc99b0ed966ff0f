"""Pydantic models of every file the export formats write (and the import reads back).

Common to all formats:

* ``factory-export.json`` (:class:`ExportManifest`): which format, which suite, how many tasks,
  and the dataset's content hash, so ``factory import`` knows what it is reading.
* :class:`TaskMetadata`: one task's metadata; a line of ``tasks.jsonl`` is a
  :class:`TaskRecord` (the metadata plus where the task directory lies in the export), a row
  of the parquet files is an :class:`HfRow` (the metadata plus every file of the task).

``content_hash`` is always :func:`factory.tasks.hashing.hash_tree` of the task directory (hex
sha256 over relative paths, executable bits, link targets and contents): no git involved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from factory.publish.formats import ExportFormat

FORMATS = tuple(f.value for f in ExportFormat)
Format = Literal["jsonl", "harbor", "hf"]
MANIFEST_NAME = "factory-export.json"
FORMAT_VERSION = 1

_HEX64 = r"^[0-9a-f]{64}$"
_DIGEST = r"^sha256:[0-9a-f]{64}$"


def dataset_hash(task_hashes: Iterable[str]) -> str:
    """The content hash of a set of tasks: sha256 over their sorted hashes joined by ','
    (the same construction as Harbor's dataset manifests use over task digests)."""
    return hashlib.sha256(",".join(sorted(task_hashes)).encode()).hexdigest()


class _Model(BaseModel):
    # Files written by a later factory may carry more fields: they are ignored, not fatal.
    model_config = ConfigDict(extra="ignore")


class ExportManifest(_Model):
    """``factory-export.json`` at the root of every export."""

    format: Format
    format_version: int = FORMAT_VERSION
    factory_version: str
    name: str
    """Dataset name (default: the suite's name, or the source folder's name)."""
    version: str
    description: str = ""
    suite: str | None = None
    """The suite's name when the source was a generated suite."""
    seed: int | None = None
    task_count: int = Field(ge=0)
    content_hash: str = Field(pattern=_HEX64)
    """:func:`dataset_hash` of the tasks' content hashes."""
    index: list[str] = Field(default_factory=list)
    """The format's own index files, relative to the export (tasks.jsonl, registry.json,
    data/train-*.parquet)."""


class TaskMetadata(_Model):
    """What every format records about one task besides its files."""

    id: str = Field(min_length=1)
    """The task's directory name (unique within an export)."""
    name: str | None = None
    """``[task].name`` from task.toml, e.g. 'quickstart/data-sql-000'."""
    content_hash: str = Field(pattern=_HEX64)
    difficulty: str | None = None
    category: str | None = None
    taxonomy_path: str | None = None
    """The taxonomy leaf that asked for the task (generated tasks)."""
    generator: str | None = None
    family: str | None = None
    seed: int | None = None
    source: str | None = None
    """``[metadata.factory].source``: 'generator:<family>', 'hand-written', 'import:...'."""
    verifier_strength: float | None = None
    pass_rate: float | None = None
    """Policy pass rate, when calibration stored one in the task's metadata."""
    validation_outcome: str | None = None
    """'valid' for accepted suite tasks; the outcome of a validation.json next to a plain
    folder of tasks; None when nothing recorded one."""
    validation_reason: str | None = None
    tags: list[str] = Field(default_factory=list)
    file_count: int = Field(default=0, ge=0)
    total_bytes: int = Field(default=0, ge=0)

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if "/" in value or "\\" in value or value in (".", "..") or value.startswith("."):
            raise ValueError(f"'{value}' is not a plain directory name")
        return value


class TaskRecord(TaskMetadata):
    """One line of ``tasks.jsonl``."""

    path: str = Field(min_length=1)
    """The task directory, relative to the export root (``tasks/<id>``)."""


# --- hf ---------------------------------------------------------------------------------


class FileEntry(_Model):
    """One entry of a task directory: a file, a symbolic link, or a directory (kept so that
    empty directories and directory modes survive)."""

    path: str = Field(min_length=1)
    """POSIX path relative to the task directory."""
    kind: Literal["file", "symlink", "dir"] = "file"
    mode: int = Field(default=0o644, ge=0, le=0o777)
    """Permission bits (setuid/setgid/sticky are never written back)."""
    content: bytes = b""
    link_target: str | None = None


class HfRow(TaskMetadata):
    """One row of the parquet files (one task)."""

    instruction: str
    task_toml: str
    files: list[FileEntry]
    metadata_json: str = "{}"
    """task.toml's whole ``[metadata]`` table as JSON (what the columns do not cover)."""


# --- harbor -----------------------------------------------------------------------------


ORG_NAME = r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$"
"""Harbor's pattern for package names ('org/name')."""


class HarborRegistryTask(_Model):
    """A task of a Harbor registry dataset (Harbor's ``RegistryTaskId``), plus ``digest``
    (Harbor's package digest, see :mod:`harbor_digest`) and ``content_hash`` (factory's);
    Harbor's registry model ignores both."""

    name: str = Field(min_length=1)
    git_url: str | None = None
    git_commit_id: str | None = None
    path: str = Field(min_length=1)
    """Without git_url: a local path (we write it relative to registry.json's folder; Harbor
    resolves a relative local path against its working directory). With git_url: the path
    inside that repository."""
    digest: str | None = Field(default=None, pattern=_DIGEST)
    """``sha256:<hex>`` as ``harbor publish`` computes it; None where not reproducible."""
    content_hash: str | None = Field(default=None, pattern=_HEX64)


class HarborMetric(_Model):
    type: str
    kwargs: dict = Field(default_factory=dict)


class HarborDatasetSpec(_Model):
    """One dataset of Harbor's ``registry.json`` (a JSON list of these): Harbor's
    ``DatasetSpec`` plus ``digest`` and ``content_hash`` (ignored by Harbor)."""

    name: str = Field(min_length=1)
    version: str = Field(min_length=1)
    description: str = ""
    tasks: list[HarborRegistryTask]
    metrics: list[HarborMetric] = Field(default_factory=list)
    digest: str | None = Field(default=None, pattern=_DIGEST)
    """Harbor's dataset content hash over the task digests (when every task has one)."""
    content_hash: str | None = Field(default=None, pattern=_HEX64)


class HarborDatasetInfo(_Model):
    """``[dataset]`` of Harbor's ``dataset.toml``."""

    name: str = Field(pattern=ORG_NAME)
    version: str | None = Field(default=None, min_length=1)
    description: str = ""


class HarborTaskRef(_Model):
    """One ``[[tasks]]`` entry of ``dataset.toml``: a task package pinned by its digest."""

    name: str = Field(pattern=ORG_NAME)
    digest: str = Field(pattern=_DIGEST)


class HarborDatasetManifest(_Model):
    """Harbor's ``dataset.toml`` (the package registry's dataset manifest, what
    ``harbor dataset init`` writes and ``harbor publish`` reads)."""

    schema_version: str = "1.0"
    dataset: HarborDatasetInfo
    tasks: list[HarborTaskRef] = Field(default_factory=list)
