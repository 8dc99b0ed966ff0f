"""The tasks an export takes: a generated suite (suite.json, tasks/, results/) or a plain
folder of Harbor task directories (with an optional validation.json beside them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from factory.generate.results import CandidateResult, SuiteManifest, SuiteTask
from factory.publish.errors import ExportFileError, PublishError
from factory.publish.models import TaskMetadata
from factory.publish.tree import tree_stats
from factory.tasks.hashing import hash_tree
from factory.tasks.model import Task, discover_task_dirs, load_harbor_task
from factory.validate.outcome import ValidationReport


@dataclass
class SourceTask:
    """One task to export: where it lies, its parsed files and its metadata."""

    dir: Path
    task: Task
    meta: TaskMetadata
    task_toml: str

    @property
    def id(self) -> str:
        return self.meta.id


@dataclass
class Source:
    root: Path
    name: str
    tasks: list[SourceTask]
    manifest: SuiteManifest | None = None
    warnings: list[str] = field(default_factory=list)


def load_source(root: Path) -> Source:
    """The tasks under ``root``: a suite folder, a folder of task dirs, or one task dir."""
    if not root.exists():
        raise PublishError(f"{root}: no such suite or folder")
    if (root / "suite.json").is_file():
        return _load_suite(root)
    dirs = [d for d in discover_task_dirs([root]) if (d / "task.toml").is_file()]
    if not dirs:
        raise PublishError(
            f"{root}: neither a suite (no suite.json) nor a folder of Harbor task directories"
        )
    validations = _validations(root)
    source = Source(root=root, name=root.resolve().name, tasks=[])
    for directory in dirs:
        verdict = validations.get(directory.name)
        source.tasks.append(
            _source_task(
                directory,
                outcome=verdict[0] if verdict else None,
                reason=verdict[1] if verdict else None,
            )
        )
    _check_unique(source)
    return source


def _load_suite(root: Path) -> Source:
    from factory.generate.pipeline import load_suite_manifest

    manifest = load_suite_manifest(root)
    journal = read_journal(root)
    source = Source(root=root, name=manifest.suite, tasks=[], manifest=manifest)
    for index, entry in enumerate(manifest.tasks):
        directory = root / entry.path
        if not directory.is_dir():
            raise ExportFileError(
                root / "suite.json", f"'{entry.path}' is not a directory", f"tasks[{index}].path"
            )
        result = journal.get(entry.id)
        task = _source_task(
            directory,
            outcome=result.outcome if result else "valid",
            reason=result.reason if result else None,
            suite_task=entry,
        )
        if entry.content_hash and entry.content_hash != task.meta.content_hash:
            source.warnings.append(
                f"{entry.path}: changed since generation (content hash "
                f"{entry.content_hash[:12]} in suite.json, {task.meta.content_hash[:12]} now); "
                "exporting it as it is now"
            )
        source.tasks.append(task)
    _check_unique(source)
    return source


def read_journal(root: Path) -> dict[str, CandidateResult]:
    results: dict[str, CandidateResult] = {}
    for path in sorted((root / "results").glob("*.json")):
        try:
            result = CandidateResult.model_validate_json(path.read_text(encoding="utf-8"))
        except (ValidationError, ValueError, OSError):
            continue  # a torn journal entry: generation redoes it; nothing to export from it
        results[result.id] = result
    return results


def _validations(root: Path) -> dict[str, tuple[str, str]]:
    """Outcomes of a ``factory validate`` report beside (or inside) the folder, by dir name."""
    found: dict[str, tuple[str, str]] = {}
    for path in (root / "validation.json", root / "validation" / "validation.json"):
        if not path.is_file():
            continue
        try:
            report = ValidationReport.model_validate_json(path.read_text(encoding="utf-8"))
        except (ValidationError, ValueError) as exc:
            raise ExportFileError(
                path, f"not a validation report ({str(exc).splitlines()[0]})"
            ) from None
        for verdict in report.tasks:
            found[Path(verdict.path).name] = (verdict.outcome.value, verdict.reason)
    return found


def _source_task(
    directory: Path,
    *,
    outcome: str | None,
    reason: str | None,
    suite_task: SuiteTask | None = None,
) -> SourceTask:
    task = load_harbor_task(directory)
    config = task.config
    provenance = config.provenance
    metadata = config.metadata
    files, size = tree_stats(directory)
    tags = metadata.get("tags")
    meta = TaskMetadata(
        id=directory.name,
        name=config.task.name if config.task else None,
        content_hash=hash_tree(directory),
        difficulty=config.difficulty,
        category=_str(metadata.get("category")),
        taxonomy_path=provenance.taxonomy_path
        or (suite_task.taxonomy_path if suite_task else None),
        generator=provenance.generator or (suite_task.generator if suite_task else None),
        family=suite_task.family if suite_task else provenance.generator,
        seed=provenance.seed
        if provenance.seed is not None
        else (suite_task.seed if suite_task else None),
        source=provenance.source,
        verifier_strength=(
            provenance.verifier_strength
            if provenance.verifier_strength is not None
            else (suite_task.verifier_strength if suite_task else None)
        ),
        pass_rate=pass_rate_of(metadata),
        validation_outcome=outcome,
        validation_reason=reason,
        tags=[str(t) for t in tags] if isinstance(tags, list) else [],
        file_count=files,
        total_bytes=size,
    )
    return SourceTask(
        dir=directory,
        task=task,
        meta=meta,
        task_toml=task.paths.config.read_text(encoding="utf-8"),
    )


def pass_rate_of(metadata: dict[str, Any]) -> float | None:
    """The policy pass rate calibration stores: ``[metadata.factory].pass_rate`` (or a plain
    ``[metadata].pass_rate``)."""
    factory_meta = metadata.get("factory")
    for value in (
        factory_meta.get("pass_rate") if isinstance(factory_meta, dict) else None,
        metadata.get("pass_rate"),
    ):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def metadata_json(task: SourceTask) -> str:
    return json.dumps(task.task.config.metadata, sort_keys=True, default=str)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _check_unique(source: Source) -> None:
    seen: dict[str, Path] = {}
    for task in source.tasks:
        if task.id in seen:
            raise PublishError(
                f"two tasks share the directory name '{task.id}' ({seen[task.id]} and "
                f"{task.dir}); ids in an export must be unique"
            )
        seen[task.id] = task.dir
