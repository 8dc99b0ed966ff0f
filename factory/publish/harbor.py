"""The ``harbor`` format: a Harbor dataset folder.

::

    registry.json     a JSON list with one dataset: name, version, description, tasks
                      [{name, git_url, git_commit_id, path, digest, content_hash}], metrics
    dataset.toml      the same dataset as Harbor's package manifest ([dataset] name/version/
                      description, [[tasks]] name + digest), when every task can have one
    tasks/<id>/       the task directories

``registry.json`` has the shape of Harbor's ``registry.json`` (``DatasetSpec`` /
``RegistryTaskId``, checked against harbor 0.26.0's ``models/registry.py``): without
``git_url`` a task is a local path, which Harbor resolves against its working directory, so
run Harbor from the export folder (``harbor run --registry-path registry.json -d NAME@VERSION``)
or pass ``--git-url``/``--git-commit`` once the folder is pushed to a repository (paths are then
relative to the repository root, i.e. this folder). ``harbor run -p tasks`` runs the folder as a
local dataset.

Digests need no git: ``digest`` is Harbor's own package digest (:mod:`harbor_digest`),
``content_hash`` factory's :func:`hash_tree`; Harbor's registry model ignores both fields.
``dataset.toml`` needs 'org/name' names: the tasks' ``[task].name`` and a dataset name that is
``--name`` when it has that form, else '<the tasks' common org>/<name>'.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import tomli_w
from pydantic import TypeAdapter, ValidationError

from factory.publish.errors import ExportFileError, PublishError
from factory.publish.harbor_digest import try_harbor_digest
from factory.publish.items import ImportItem, task_folder_item
from factory.publish.models import (
    ORG_NAME,
    HarborDatasetInfo,
    HarborDatasetManifest,
    HarborDatasetSpec,
    HarborRegistryTask,
    HarborTaskRef,
    dataset_hash,
)
from factory.publish.source import Source
from factory.publish.tree import copy_task_dir, safe_relpath

REGISTRY = "registry.json"
DATASET_TOML = "dataset.toml"
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
        digest, why = try_harbor_digest(out / rel)
        if digest is None:
            source.warnings.append(f"{task.dir}: no Harbor digest ({why})")
        tasks.append(
            HarborRegistryTask(
                name=task.id,
                git_url=git_url,
                git_commit_id=git_commit if git_url else None,
                path=rel,
                digest=digest,
                content_hash=task.meta.content_hash,
            )
        )
    digests = [t.digest for t in tasks]
    spec = HarborDatasetSpec(
        name=name,
        version=version,
        description=description,
        tasks=tasks,
        digest=_dataset_digest(digests) if all(digests) else None,  # type: ignore[arg-type]
        content_hash=dataset_hash(t.meta.content_hash for t in source.tasks),
    )
    text = json.dumps([spec.model_dump(mode="json")], indent=2) + "\n"
    (out / REGISTRY).write_text(text, encoding="utf-8")
    index = [REGISTRY]
    manifest, why = dataset_manifest(source, tasks, name, version, description)
    if manifest is None:
        source.warnings.append(f"no {DATASET_TOML} written: {why}")
    else:
        (out / DATASET_TOML).write_text(manifest_toml(manifest), encoding="utf-8")
        index.append(DATASET_TOML)
    return index


def _dataset_digest(digests: list[str]) -> str:
    """Harbor's dataset content hash: sha256 over the sorted task digests joined by ','."""
    return f"sha256:{dataset_hash(d.removeprefix('sha256:') for d in digests)}"


def dataset_manifest(
    source: Source,
    tasks: list[HarborRegistryTask],
    name: str,
    version: str,
    description: str,
) -> tuple[HarborDatasetManifest | None, str | None]:
    """Harbor's dataset.toml for the export, or (None, why not)."""
    names = [t.meta.name for t in source.tasks]
    bad = [t.id for t, n in zip(source.tasks, names, strict=True) if not n or not _org_name(n)]
    if bad:
        return None, f"task(s) without an 'org/name' [task].name: {', '.join(bad[:5])}"
    missing = [t.name for t in tasks if t.digest is None]
    if missing:
        return None, f"no Harbor digest for {', '.join(missing[:5])}"
    dataset_name = name
    if not _org_name(name):
        orgs = {n.split("/")[0] for n in names if n}
        if len(orgs) != 1:
            return None, "pass --name as 'org/name' (the tasks have no single org)"
        dataset_name = f"{orgs.pop()}/{name}"
        if not _org_name(dataset_name):
            return None, f"'{dataset_name}' is not an 'org/name' dataset name"
    manifest = HarborDatasetManifest(
        dataset=HarborDatasetInfo(name=dataset_name, version=version, description=description),
        tasks=[
            HarborTaskRef(name=n, digest=t.digest)  # type: ignore[arg-type]
            for n, t in zip(names, tasks, strict=True)
        ],
    )
    return manifest, None


def _org_name(value: str) -> bool:
    return bool(re.match(ORG_NAME, value)) and ".." not in value


def manifest_toml(manifest: HarborDatasetManifest) -> str:
    data = manifest.model_dump(mode="json", exclude_none=True)
    return "\n".join(
        [
            tomli_w.dumps({"schema_version": data["schema_version"]}),
            tomli_w.dumps({"dataset": data["dataset"]}),
            tomli_w.dumps({"tasks": data["tasks"]}),
        ]
    )


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
        hint = (
            f" (a task of {task.git_url}: clone that repository and import its registry.json; "
            "nothing is fetched over the network)"
            if task.git_url
            else ""
        )
        yield task_folder_item(
            base,
            rel,
            task.path,
            id=rel.name,
            content_hash=task.content_hash,
            where=path,
            field=field,
            error_field=field,
            hint=hint,
        )
