"""The ``harbor`` format: a Harbor registry-style dataset folder.

::

    registry.json     a JSON list with one dataset: name, version, description, tasks
                      [{name, git_url, git_commit_id, path, content_hash}], metrics
    tasks/<id>/       the task directories

This is the shape of Harbor's ``registry.json`` (``DatasetSpec`` / ``RegistryTaskId``):
without ``git_url`` a task is a local path, which Harbor resolves against its working
directory, so run Harbor from the export folder (``harbor run --registry-path registry.json
-d NAME@VERSION``) or pass ``--git-url``/``--git-commit`` once the folder is pushed to a
repository (paths are then relative to the repository root, i.e. this folder).
``content_hash`` (per task and per dataset) is factory's git-free digest; Harbor ignores it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from factory.publish.errors import ExportFileError, PublishError
from factory.publish.items import ImportItem
from factory.publish.models import HarborDatasetSpec, HarborRegistryTask, dataset_hash
from factory.publish.source import Source
from factory.publish.tree import copy_task_dir, safe_relpath

REGISTRY = "registry.json"
TASKS_DIR = "tasks"
_REGISTRY = TypeAdapter(list[HarborDatasetSpec])


def export_harbor(
    source: Source,
    out: Path,
    *,
    name: str,
    version: str,
    description: str,
    git_url: str | None = None,
    git_commit: str | None = None,
) -> list[str]:
    tasks = []
    for task in source.tasks:
        rel = f"{TASKS_DIR}/{task.id}"
        copy_task_dir(task.dir, out / rel)
        tasks.append(
            HarborRegistryTask(
                name=task.id,
                git_url=git_url,
                git_commit_id=git_commit if git_url else None,
                path=rel,
                content_hash=task.meta.content_hash,
            )
        )
    spec = HarborDatasetSpec(
        name=name,
        version=version,
        description=description,
        tasks=tasks,
        content_hash=dataset_hash(t.meta.content_hash for t in source.tasks),
    )
    text = json.dumps([spec.model_dump(mode="json")], indent=2) + "\n"
    (out / REGISTRY).write_text(text, encoding="utf-8")
    return [REGISTRY]


def read_registry(path: Path) -> list[HarborDatasetSpec]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ExportFileError(path, f"cannot read file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ExportFileError(path, f"invalid JSON ({exc})") from None
    if isinstance(data, dict) and "tasks" in data:
        data = [data]  # a single dataset entry, not wrapped in a list
    try:
        return _REGISTRY.validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(p) for p in error.get("loc", ()))
        raise ExportFileError(path, error.get("msg", str(exc)), loc or None) from None


def pick_dataset(path: Path, specs: list[HarborDatasetSpec], wanted: str | None) -> int:
    """Index of the dataset to import: the only one, or ``wanted`` ('name' or 'name@version')."""
    if wanted is None:
        if len(specs) == 1:
            return 0
        names = ", ".join(f"{s.name}@{s.version}" for s in specs)
        raise PublishError(
            f"{path}: holds {len(specs)} datasets ({names}); pick one with --dataset"
        )
    name, _, version = wanted.partition("@")
    for index, spec in enumerate(specs):
        if spec.name == name and (not version or spec.version == version):
            return index
    raise PublishError(f"{path}: no dataset {wanted!r}")


def import_items(path: Path, dataset: str | None = None) -> Iterator[ImportItem]:
    specs = read_registry(path)
    index = pick_dataset(path, specs, dataset)
    base = path.parent
    for number, task in enumerate(specs[index].tasks):
        field = f"[{index}].tasks[{number}]"
        rel = safe_relpath(task.path, path, f"{field}.path")
        src = base / rel
        if not src.is_dir() or src.is_symlink():
            hint = (
                f" (a task of {task.git_url}: clone that repository and import its registry.json; "
                "nothing is fetched over the network)"
                if task.git_url
                else ""
            )
            raise ExportFileError(path, f"'{task.path}' is not a directory here{hint}", field)
        if not src.resolve().is_relative_to(base.resolve()):
            raise ExportFileError(path, f"'{task.path}' leads outside the export", field)
        yield ImportItem(
            id=rel.name,
            content_hash=task.content_hash,
            where=path,
            field=field,
            materialize=lambda dest, src=src: copy_task_dir(src, dest),
        )
