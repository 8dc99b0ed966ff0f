"""A suite as the trainer and the evaluator see it: tasks with their family, split by family.

Held-out *families* (not held-out tasks of seen families) measure generalisation rather than
memorisation of a family's templates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from factory.errors import FactoryError, TaskFormatError
from factory.tasks.model import Task, discover_task_dirs, load_task


@dataclass
class SuiteTask:
    task: Task
    family: str


def family_of(task: Task) -> str:
    provenance = task.config.provenance
    return provenance.generator or str(task.config.metadata.get("category") or "unknown")


def load_suite_tasks(suite: Path) -> list[SuiteTask]:
    """Tasks of a suite folder (SUITE/tasks/*) or of any folder of task directories."""
    root = suite / "tasks" if (suite / "tasks").is_dir() else suite
    entries = []
    for path in discover_task_dirs([root]):
        try:
            task = load_task(path)
        except TaskFormatError as exc:
            raise FactoryError(f"suite {suite}: {exc}") from None
        entries.append(SuiteTask(task, family_of(task)))
    if not entries:
        raise FactoryError(f"{suite}: no tasks found (expected SUITE/tasks/<id>/ task directories)")
    return sorted(entries, key=lambda e: e.task.id)


def _rank(key: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def split_suite(
    entries: list[SuiteTask],
    *,
    test_families: list[str],
    test_fraction: float,
    seed: int,
    by: str = "family",
) -> tuple[list[SuiteTask], list[SuiteTask]]:
    """(train, test). ``by="family"``: named test families win, else a seeded share of the
    families is held out. ``by="task"``: a seeded share of the tasks (for one-family suites)."""
    if by == "task":
        ranked = sorted(entries, key=lambda e: _rank(e.task.id, seed))
        cut = round(test_fraction * len(entries))
        test_ids = {e.task.id for e in ranked[:cut]}
        train = [e for e in entries if e.task.id not in test_ids]
        if not train:
            raise FactoryError("every task is held out for testing; lower test_fraction")
        return train, [e for e in entries if e.task.id in test_ids]
    if by != "family":
        raise FactoryError(f"split must be 'family' or 'task', not {by!r}")
    families = sorted({e.family for e in entries})
    unknown = sorted(set(test_families) - set(families))
    if unknown:
        raise FactoryError(f"test_families {unknown} are not in the suite (it has {families})")
    held = set(test_families)
    if not held and test_fraction > 0 and len(families) > 1:
        ranked = sorted(families, key=lambda f: _rank(f, seed))
        held = set(ranked[: max(1, round(test_fraction * len(families)))])
    train = [e for e in entries if e.family not in held]
    test = [e for e in entries if e.family in held]
    if not train:
        raise FactoryError("every family is held out for testing; lower test_fraction")
    return train, test
