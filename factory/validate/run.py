"""`factory validate` as one job: certify task directories on an executor, then (optionally)
measure the verifier flake rate of the valid ones (see :mod:`factory.quality.flake`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from factory.executor import Executor
from factory.quality.flake import FlakeResult, flake_checks
from factory.validate.outcome import Outcome, TaskValidation, ValidationReport
from factory.validate.validator import Validator


class ValidationEvents(Protocol):
    """Progress hooks (the CLI's progress bar)."""

    def started(self, task_dir: Path) -> None: ...

    def done(self, verdict: TaskValidation) -> None: ...

    def flake_started(self, tasks: int, runs: int) -> None: ...

    def flake_done(self, result: FlakeResult) -> None: ...


@dataclass
class ValidationRun:
    report: ValidationReport
    report_path: Path
    flake: list[FlakeResult] = field(default_factory=list)
    flake_path: Path | None = None

    @property
    def all_valid(self) -> bool:
        return all(t.outcome is Outcome.VALID for t in self.report.tasks)


def validate_tasks(
    executor: Executor,
    task_dirs: list[Path],
    out: Path,
    *,
    repeats: int = 2,
    force: bool = False,
    probes: bool = False,
    flake_runs: int = 0,
    events: ValidationEvents | None = None,
) -> ValidationRun:
    """Certify ``task_dirs`` (``OUT/validation.json``, ``OUT/logs/``); with ``flake_runs``,
    rerun nop + oracle of each valid task that many times under perturbation
    (``OUT/flake/flake.json``, ``flake_rate`` in each task.toml); with ``probes``, every
    cheat probe runs on each valid task (one that scores makes it cheat_passed)."""
    validator = Validator(
        executor.runtime,
        out,
        repeats=repeats,
        force=force,
        probes=probes,
        executor=executor,
        on_task_start=events.started if events else None,
        on_task_done=events.done if events else None,
    )
    run = ValidationRun(validator.run(task_dirs), validator.report_path)
    targets = [
        (Path(t.path), t.image)
        for t in run.report.tasks
        if t.outcome is Outcome.VALID and t.image and flake_runs
    ]
    if targets:
        if events:
            events.flake_started(len(targets), flake_runs)
        run.flake_path = out / "flake" / "flake.json"
        run.flake = flake_checks(
            executor.runtime,
            targets,
            flake_runs,
            out / "flake",
            jobs=executor.slots,
            on_done=events.flake_done if events else None,
        )
    return run
