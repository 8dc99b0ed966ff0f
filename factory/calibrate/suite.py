"""The suite side of calibration: which tasks, their leaves, stamping task.toml, retiring.

A *generated* suite (``suite.json``, ``results/``, ``taxonomy.yaml``) or any folder of task
directories (``SUITE/tasks/*`` or ``SUITE/*``). Retiring moves ``tasks/<id>`` to
``retired/<id>`` with a ``retirement.json``; in a generated suite the candidate's record in
``results/<id>.json`` becomes status/outcome ``retired`` with the new path, so ``suite.json``
(rebuilt from those records) lists the task no more and counts it under its leaf's outcomes,
and a later ``factory generate`` neither brings it back nor counts it towards the quota.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from factory.calibrate.journal import RETIREMENT_FILE
from factory.errors import FactoryError, TaskFormatError
from factory.fsutil import write_text_atomic
from factory.generate.results import CandidateResult
from factory.tasks.hashing import hash_tree
from factory.tasks.model import (
    Task,
    discover_task_dirs,
    load_task,
    load_task_config,
    save_task_config,
)

RETIRED = "retired"
"""Status and outcome of a retired candidate in results/<id>.json."""


@dataclass
class SuiteTask:
    key: str
    """Directory name."""
    path: Path
    task: Task
    leaf: str
    """Taxonomy leaf path ('' outside a generated suite)."""
    difficulty: str


class SuiteFolder:
    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise FactoryError(f"{root}: no such suite folder")
        self.root = root
        self.generated = (root / "suite.json").is_file()
        self.tasks_dir = root / "tasks" if (root / "tasks").is_dir() else root
        self.retired_dir = root / RETIRED
        self.on_record: Callable[[CandidateResult], None] | None = None
        """Told of every candidate record rewritten (the generator keeps them in memory)."""

    # --- reading ------------------------------------------------------------------------
    def result(self, key: str) -> CandidateResult | None:
        path = self.root / "results" / f"{key}.json"
        if not self.generated or not path.is_file():
            return None
        try:
            return CandidateResult.model_validate_json(path.read_text("utf-8"))
        except (ValidationError, ValueError, OSError):
            return None

    def tasks(self) -> list[SuiteTask]:
        out = []
        skip = {RETIRED, "rejected", "candidates", "results", "calibration", "validation"}
        for path in discover_task_dirs([self.tasks_dir]):
            if path == self.tasks_dir and not (path / "task.toml").is_file():
                continue  # an empty folder (every task retired)
            if path != self.root and path.relative_to(self.root).parts[0] in skip:
                continue
            out.append(self.load(path))
        return sorted(out, key=lambda t: t.key)

    def load(self, path: Path) -> SuiteTask:
        try:
            task = load_task(path)
        except TaskFormatError as exc:
            raise FactoryError(f"suite {self.root}: {exc}") from None
        result = self.result(path.name)
        leaf = (result.taxonomy_path if result else None) or task.config.provenance.taxonomy_path
        difficulty = task.config.difficulty or (result.difficulty if result else "") or ""
        return SuiteTask(path.name, path, task, leaf or "", difficulty)

    # --- writing ------------------------------------------------------------------------
    def stamp(
        self, entry: SuiteTask, *, pass_rate: float, episodes: int, model: str, verdict: str
    ) -> None:
        """Store the calibration in the task's [metadata.factory] (other keys untouched)."""
        path = entry.path / "task.toml"
        config = load_task_config(path)
        provenance = config.provenance.model_copy(
            update={
                "pass_rate": round(pass_rate, 4),
                "calibration_k": episodes,
                "calibration_model": model,
                "calibration_verdict": verdict,
            }
        )
        config.set_provenance(provenance)
        save_task_config(path, config)
        self._refresh_result(entry.key, entry.path)

    def retire(self, entry: SuiteTask, reason: str, details: dict) -> Path:
        """Move the task to retired/<key> with a retirement.json; never deletes a task."""
        target = self.retired_dir / entry.key
        self.retired_dir.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)  # an earlier retirement of the same key, superseded
        shutil.move(str(entry.path), str(target))
        note = {"task": entry.key, "reason": reason, "retired_at": time.time(), **details}
        write_text_atomic(target / RETIREMENT_FILE, json.dumps(note, indent=2))
        entry.path = target
        result = self.result(entry.key)
        if result is not None:
            updated = result.model_copy(
                update={
                    "status": RETIRED,
                    "outcome": RETIRED,
                    "reason": reason,
                    "path": f"{RETIRED}/{entry.key}",
                    "content_hash": hash_tree(target),
                }
            )
            self._write_result(updated)
        return target

    def _refresh_result(self, key: str, folder: Path) -> None:
        """Keep results/<key>.json's content hash in step with the stamped task.toml (the
        export compares them)."""
        result = self.result(key)
        if result is not None:
            self._write_result(result.model_copy(update={"content_hash": hash_tree(folder)}))

    def _write_result(self, result: CandidateResult) -> None:
        write_text_atomic(
            self.root / "results" / f"{result.id}.json", result.model_dump_json(indent=2)
        )
        if self.on_record is not None:
            self.on_record(result)
