"""Fail-to-pass certification of task directories: the run's bookkeeping.

Each task is parsed here (a Terminal-Bench 1 directory is converted), given a unique id, and
skipped when an earlier report certified it with the same content hash; the check itself
(build, nop and oracle phases, see :mod:`factory.validate.checker`) runs on the executor, on
this machine or on a Ray node alike. The report is rewritten as tasks finish, so an interrupted
run loses nothing, and a rerun skips tasks already certified with the same content hash.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from factory import __version__
from factory.errors import CancelledError, FactoryError, TaskFormatError
from factory.executor import Done, Executor, LocalExecutor, Work
from factory.fsutil import ensure_output_dir, write_text_atomic
from factory.importers.layouts import load_any_task
from factory.runtime import DockerRuntime
from factory.tasks.model import Task
from factory.validate.checker import check_work
from factory.validate.outcome import Outcome, TaskValidation, ValidationReport

REPORT_NAME = "validation.json"

#: How often a waiting main thread wakes up to notice Ctrl-C (see Validator.run).
SIGNAL_POLL_SEC = 0.25

R = TypeVar("R")
T = TypeVar("T")


def load_report(path: Path) -> ValidationReport | None:
    """An earlier report in ``path`` (None when absent or unreadable: the run starts afresh)."""
    try:
        return ValidationReport.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def write_report(report: ValidationReport, path: Path) -> None:
    """Atomically replace ``path`` with ``report``."""
    report.refresh_summary()
    write_text_atomic(path, report.model_dump_json(indent=2))


def map_interruptibly(
    fn: Callable[[T], R], items: list[T], workers: int, *, on_interrupt: Callable[[], None]
) -> list[R]:
    """``fn`` over ``items`` in ``workers`` threads, the results in order. The main thread waits
    in short slices: SIGINT may land on any thread, and Python raises KeyboardInterrupt only
    when the main thread wakes, so a wait without a timeout can sit on a Ctrl-C until a task
    finishes (a minute or more). Interrupted: ``on_interrupt()``, queued items are dropped."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="work")
    futures: list[Future] = [pool.submit(fn, item) for item in items]
    try:
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=SIGNAL_POLL_SEC)
    except BaseException:
        on_interrupt()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return [future.result() for future in futures]  # surfaces programming errors


class CostBound:
    """Lets an O(run size) write happen only while it costs at most a tenth of the time: after
    a write that took t, the next one waits 9t. A report rewritten after every task is O(n)
    each time, which a cluster reaches quickly (10,000 tasks: 0.6 s a rewrite)."""

    def __init__(self) -> None:
        self._next = 0.0

    def __call__(self, write: Callable[[], None]) -> None:
        if time.monotonic() < self._next:
            return
        started = time.monotonic()
        write()
        self._next = time.monotonic() + 9 * (time.monotonic() - started)


class Validator:
    """Certify tasks, ``executor.threads`` at a time (by default on this machine, ``jobs`` at
    a time); thread-safe."""

    def __init__(
        self,
        runtime: DockerRuntime,
        out_dir: Path,
        *,
        repeats: int = 2,
        jobs: int = 1,
        force: bool = False,
        prestart: bool = True,
        probes: bool = False,
        executor: Executor | None = None,
        on_task_done: Callable[[TaskValidation], None] | None = None,
        on_task_start: Callable[[Path], None] | None = None,
    ) -> None:
        if repeats < 1:
            raise FactoryError("--repeats must be at least 1")
        self._owns_executor = executor is None
        self.executor = executor or LocalExecutor(runtime, jobs)
        self.runtime = runtime
        self.out_dir = out_dir
        self.repeats = repeats
        self.jobs = self.executor.threads
        self.force = force
        self.prestart = prestart
        self.probes = probes
        self.on_task_done = on_task_done or (lambda _t: None)
        self.on_task_start = on_task_start or (lambda _p: None)
        self.report_path = out_dir / REPORT_NAME
        self._lock = threading.Lock()
        self._ids: set[str] = set()
        self._cancel = threading.Event()
        self._write = CostBound()
        previous = None if force else load_report(self.report_path)
        self._certified = {
            (t.path, t.content_hash): t
            for t in (previous.tasks if previous else [])
            if t.outcome is Outcome.VALID and t.content_hash
        }
        self.report = ValidationReport(
            run_id=self.executor.run_id,
            factory_version=__version__,
            repeats=repeats,
            jobs=self.jobs,
        )

    # --- public ---------------------------------------------------------------------
    def run(self, task_dirs: list[Path]) -> ValidationReport:
        """Validate every directory; returns the report (also written to ``out_dir``)."""
        ensure_output_dir(self.out_dir)
        try:
            map_interruptibly(
                self._validate_and_record, task_dirs, self.jobs, on_interrupt=self.cancel
            )
        finally:
            with self._lock:
                write_report(self.report, self.report_path)
            self.close()
        return self.report

    def close(self) -> None:
        """Close the executor when this validator made it (a caller's stays open)."""
        if self._owns_executor:
            self.executor.close()

    def cancel(self) -> None:
        """Stop: queued tasks are dropped, running ones stop between phases."""
        self._cancel.set()
        self.executor.cancel()

    def validate(self, task_dir: Path) -> TaskValidation:
        """Certify one task directory (in the calling thread)."""
        started = time.monotonic()
        try:
            task = load_any_task(task_dir, tb1_cache=self.out_dir / "converted")
        except TaskFormatError as exc:
            return self._verdict_without_task(task_dir, Outcome.INVALID_TASK, str(exc), started)
        task_id = self.claim_id(task.id)
        key = (str(task.display_path), task.content_hash)
        if key in self._certified:
            earlier = self._certified[key].model_copy(update={"resumed": True})
            earlier.notes = [*earlier.notes, "skipped: already certified with this content hash"]
            return earlier
        work = check_work(self.repeats, self.prestart, self.probes)
        done = self.dispatch(work, task.root, task_id)
        return self._adopt(done, task, task_id)

    def dispatch(self, work: Work[R], task_dir: Path, task_id: str) -> Done[R]:
        """Run ``work`` on the executor with its logs in ``OUT/logs/<task_id>``."""
        if self._cancel.is_set():
            raise CancelledError("interrupted")
        return self.executor.run(work, task_dir, self.out_dir / "logs" / task_id)

    def claim_id(self, task_id: str) -> str:
        """``task_id``, or ``task_id-2``, ``-3``... when the run already has it."""
        with self._lock:
            candidate, n = task_id, 2
            while candidate in self._ids:
                candidate, n = f"{task_id}-{n}", n + 1
            self._ids.add(candidate)
            return candidate

    # --- internals ------------------------------------------------------------------
    @staticmethod
    def _adopt(done: Done[TaskValidation], task: Task, task_id: str) -> TaskValidation:
        """The checker's verdict under the run's names: id, the path the user gave, this
        machine's content hash, the conversion's notes and where it ran."""
        verdict = done.result
        timings = dict(verdict.timings)
        if done.seconds is not None:  # what the trip cost on top of the unit's own time
            timings["dispatch"] = max(0.0, done.seconds - timings.get("total", 0.0))
        return verdict.model_copy(
            update={
                "id": task_id,
                "path": str(task.display_path),
                "content_hash": task.content_hash,
                "notes": [*task.notes, *verdict.notes, *([done.where] if done.where else [])],
                "timings": timings,
            }
        )

    def _validate_and_record(self, task_dir: Path) -> TaskValidation | None:
        if self._cancel.is_set():
            return None
        self.on_task_start(task_dir)
        try:
            verdict = self.validate(task_dir)
        except CancelledError:
            return None
        except FactoryError as exc:  # unexpected but user-facing (a node lost): keep going
            verdict = self._verdict_without_task(
                task_dir, Outcome.INFRA_ERROR, str(exc), time.monotonic()
            )
        if self._cancel.is_set() and verdict.outcome is Outcome.INFRA_ERROR:
            return None  # interrupted half-way: not a verdict, the rerun will redo it
        with self._lock:
            self.report.tasks.append(verdict)
            self._write(lambda: write_report(self.report, self.report_path))
        self.on_task_done(verdict)
        return verdict

    def _verdict_without_task(
        self, task_dir: Path, outcome: Outcome, reason: str, started: float
    ) -> TaskValidation:
        return TaskValidation(
            id=self.claim_id(task_dir.name or "task"),
            path=str(task_dir),
            outcome=outcome,
            reason=reason,
            timings={"total": time.monotonic() - started},
        )
