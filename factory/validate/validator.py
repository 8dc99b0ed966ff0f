"""Fail-to-pass certification of task directories.

For each task: build the image; run the tests on the untouched environment (nop, must score 0)
and after the reference solution (oracle, must score 1), each in a fresh container, ``repeats``
times; disagreement between repeats is flakiness. The report is rewritten after every task, so
an interrupted run loses nothing, and a rerun skips tasks already certified with the same
content hash.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

from pydantic import ValidationError

from factory import __version__
from factory.errors import (
    BaseImageMissingError,
    CancelledError,
    ExecTimeoutError,
    FactoryError,
    ImageBuildError,
    TaskFormatError,
    UnavailableOfflineError,
)
from factory.fsutil import write_text_atomic
from factory.images.task_image import TaskImageBuilder
from factory.runtime import ContainerSpec, DockerRuntime
from factory.tasks.model import Task, load_task
from factory.validate.outcome import (
    Outcome,
    PhaseKind,
    PhaseResult,
    TaskValidation,
    ValidationReport,
    classify,
)
from factory.validate.phases import container_spec, run_phase
from factory.validate.probes import cheat_scripts, run_probes

REPORT_NAME = "validation.json"


def _close_unused(future: Future) -> None:
    """Remove a container started ahead of time that no phase needed."""
    if not future.cancelled() and future.exception() is None:
        future.result().close()


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


class Validator:
    """Certify tasks; thread-safe across ``jobs`` workers."""

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
        on_task_done: Callable[[TaskValidation], None] | None = None,
        on_task_start: Callable[[Path], None] | None = None,
    ) -> None:
        if repeats < 1:
            raise FactoryError("--repeats must be at least 1")
        if jobs < 1:
            raise FactoryError("--jobs must be at least 1")
        self.runtime = runtime
        self.out_dir = out_dir
        self.repeats = repeats
        self.jobs = jobs
        self.force = force
        self.prestart = prestart
        self.probes = probes
        self.on_task_done = on_task_done or (lambda _t: None)
        self.on_task_start = on_task_start or (lambda _p: None)
        self.images = TaskImageBuilder(runtime)
        self._unreachable: dict[str, list[str]] = {}  # image -> hosts its build could not reach
        self._starter = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="prestart")
        self.report_path = out_dir / REPORT_NAME
        self._lock = threading.Lock()
        self._ids: set[str] = set()
        self._cancel = threading.Event()
        previous = None if force else load_report(self.report_path)
        self._certified = {
            (t.path, t.content_hash): t
            for t in (previous.tasks if previous else [])
            if t.outcome is Outcome.VALID and t.content_hash
        }
        self.report = ValidationReport(
            run_id=runtime.run_id, factory_version=__version__, repeats=repeats, jobs=jobs
        )

    # --- public ---------------------------------------------------------------------
    def run(self, task_dirs: list[Path]) -> ValidationReport:
        """Validate every directory; returns the report (also written to ``out_dir``)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="validate")
        futures: list[Future] = [pool.submit(self._validate_and_record, d) for d in task_dirs]
        try:
            pending = set(futures)
            while pending:
                # Short waits: SIGINT may land on any thread, and Python raises KeyboardInterrupt
                # only when the main thread wakes, so a wait without a timeout can sit on a
                # Ctrl-C until a task finishes (a minute or more).
                _, pending = wait(pending, timeout=SIGNAL_POLL_SEC)
        except BaseException:
            self._cancel.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            with self._lock:
                write_report(self.report, self.report_path)
        pool.shutdown(wait=True)
        self._starter.shutdown(wait=True)
        for future in futures:
            future.result()  # surface programming errors
        return self.report

    def validate(self, task_dir: Path) -> TaskValidation:
        """Certify one task directory (in the calling thread)."""
        started = time.monotonic()
        try:
            task = load_task(task_dir, tb1_cache=self.out_dir / "converted")
        except TaskFormatError as exc:
            return self._verdict_without_task(task_dir, Outcome.INVALID_TASK, str(exc), started)
        task_id = self._unique_id(task.id)
        key = (str(task.display_path), task.content_hash)
        if key in self._certified:
            earlier = self._certified[key].model_copy(update={"resumed": True})
            earlier.notes = [*earlier.notes, "skipped: already certified with this content hash"]
            return earlier
        verdict = TaskValidation(
            id=task_id,
            path=str(task.display_path),
            outcome=Outcome.INFRA_ERROR,
            reason="",
            content_hash=task.content_hash,
            notes=list(task.notes),
        )
        logs = self.out_dir / "logs" / task_id
        logs.mkdir(parents=True, exist_ok=True)
        if not task.has_solution:
            verdict.outcome = Outcome.INVALID_TASK
            verdict.reason = (
                f"{task.paths.solve_script}: file is missing; certification needs a reference "
                "solution to show the tests can pass"
            )
            verdict.timings["total"] = time.monotonic() - started
            return verdict
        image = self._build(task, verdict, logs)
        if image is not None:
            phases = self._run_phases(task, image, logs, verdict)
            verdict.phases = phases
            verdict.outcome, verdict.reason = classify(phases)
            if verdict.outcome is Outcome.FAILS_WITH_SOLUTION and self._unreachable:
                hosts = ", ".join(self._unreachable.get(image, [])[:3])
                if hosts:
                    verdict.reason += (
                        f"; note: the image build could not reach {hosts} (no internet here), "
                        "so the environment may lack what it downloads (see build.log)"
                    )
            if verdict.outcome is Outcome.VALID and self.probes:
                self._probe(task, image, logs, verdict)
            if verdict.outcome is Outcome.INFRA_ERROR and self._cancel.is_set():
                verdict.reason = "interrupted before the task finished"
            self._sum_timings(verdict)
        verdict.timings["total"] = time.monotonic() - started
        return verdict

    # --- internals ------------------------------------------------------------------
    def _validate_and_record(self, task_dir: Path) -> TaskValidation | None:
        if self._cancel.is_set():
            return None
        self.on_task_start(task_dir)
        try:
            verdict = self.validate(task_dir)
        except CancelledError:
            return None
        except FactoryError as exc:  # an unexpected but user-facing failure: keep going
            verdict = self._verdict_without_task(
                task_dir, Outcome.INFRA_ERROR, str(exc), time.monotonic()
            )
        if self._cancel.is_set() and verdict.outcome is Outcome.INFRA_ERROR:
            return None  # interrupted half-way: not a verdict, the rerun will redo it
        with self._lock:
            self.report.tasks.append(verdict)
            write_report(self.report, self.report_path)
        self.on_task_done(verdict)
        return verdict

    def _unique_id(self, task_id: str) -> str:
        with self._lock:
            candidate, n = task_id, 2
            while candidate in self._ids:
                candidate, n = f"{task_id}-{n}", n + 1
            self._ids.add(candidate)
            return candidate

    def _verdict_without_task(
        self, task_dir: Path, outcome: Outcome, reason: str, started: float
    ) -> TaskValidation:
        return TaskValidation(
            id=self._unique_id(task_dir.name or "task"),
            path=str(task_dir),
            outcome=outcome,
            reason=reason,
            timings={"total": time.monotonic() - started},
        )

    def _build(self, task: Task, verdict: TaskValidation, logs: Path) -> str | None:
        build_log = logs / "build.log"
        verdict.logs["build"] = str(build_log)
        try:
            image = self.images.ensure(task, log_path=build_log)
        except ExecTimeoutError as exc:
            verdict.outcome = Outcome.TIMEOUT
            verdict.reason = f"{exc}; raise environment.build_timeout_sec in task.toml"
        except BaseImageMissingError as exc:
            verdict.outcome, verdict.reason = Outcome.BUILD_FAILED, str(exc)
        except UnavailableOfflineError as exc:
            verdict.outcome, verdict.reason = Outcome.UNAVAILABLE_OFFLINE, str(exc)
        except ImageBuildError as exc:
            verdict.outcome = Outcome.BUILD_FAILED
            last = _build_output_tail(exc.log_tail)
            verdict.reason = f"docker build: {exc}" + (f" (output: {last})" if last else "")
        except TaskFormatError as exc:
            verdict.outcome, verdict.reason = Outcome.INVALID_TASK, str(exc)
        else:
            verdict.image = image.ref
            verdict.notes.extend(image.notes)
            if image.unreachable:
                self._unreachable[image.ref] = image.unreachable
                verdict.notes.append(f"build: could not reach {', '.join(image.unreachable)}")
            verdict.timings["build"] = image.seconds
            if not build_log.exists():
                build_log.write_text(f"# cached image {image.ref} (environment unchanged)\n")
            return image.ref
        return None

    def _run_phases(
        self, task: Task, image: str, logs: Path, verdict: TaskValidation
    ) -> list[PhaseResult]:
        """nop and oracle, ``repeats`` times, each in a fresh container. The next phase's
        container is started while the current phase runs, which hides the engine's start-up
        time (most of a phase's harness cost)."""
        plan = [(kind, r) for r in range(1, self.repeats + 1) for kind in PhaseKind]
        spec = container_spec(task, image)
        phases: list[PhaseResult] = []
        upcoming: Future | None = self._start_ahead(spec)
        try:
            for index, (kind, repeat) in enumerate(plan):
                if self._cancel.is_set():
                    raise CancelledError("interrupted")
                current, upcoming = upcoming, None
                if index + 1 < len(plan):
                    upcoming = self._start_ahead(spec)
                name = f"{kind.value}-{repeat}"
                result = run_phase(
                    self.runtime, task, image, kind, repeat, logs / name, container=current
                )
                if result.infra_error and not self._cancel.is_set():
                    # One retry: engine hiccups should not condemn a task.
                    retry = run_phase(
                        self.runtime, task, image, kind, repeat, logs / f"{name}-retry"
                    )
                    if not retry.infra_error:
                        verdict.notes.append(
                            f"{name}: retried after infra error: {result.infra_error}"
                        )
                        result = retry
                verdict.logs[name] = result.log_dir or ""
                phases.append(result)
                if result.timed_out or result.infra_error:
                    break  # the verdict is settled; do not burn more time
        finally:
            if upcoming is not None:
                upcoming.add_done_callback(_close_unused)
        return phases

    def _probe(self, task: Task, image: str, logs: Path, verdict: TaskValidation) -> None:
        """``--probes``: every cheat probe (trivial agents, each tampering attack) must score 0."""
        mark = time.monotonic()
        results = run_probes(
            self.runtime, task, image, cheat_scripts((), attacks="each"), "cheat", logs
        )
        verdict.timings["probes"] = time.monotonic() - mark
        verdict.probes = [r.record() for r in results]
        for result in results:
            verdict.logs[f"cheat-{result.name}"] = result.log_dir
        broken = [r for r in results if r.reward is None]
        passed = [r for r in results if r.reward is not None and not r.rejected]
        if broken:
            verdict.outcome = Outcome.INFRA_ERROR
            verdict.reason = f"cheat probe '{broken[0].name}': {broken[0].detail}"
        elif passed:
            names = ", ".join(f"'{r.name}' ({r.reward:g})" for r in passed)
            verdict.outcome = Outcome.CHEAT_PASSED
            verdict.reason = (
                f"a solution that does not solve the task scores: {names}; see "
                f"{passed[0].log_dir} (the tests must check the outcome, not trust the "
                "agent's code or files)"
            )

    def _start_ahead(self, spec: ContainerSpec) -> Future | None:
        return self._starter.submit(self.runtime.start, spec) if self.prestart else None

    @staticmethod
    def _sum_timings(verdict: TaskValidation) -> None:
        for kind in PhaseKind:
            verdict.timings[kind.value] = sum(
                p.timings.get("total", 0.0) for p in verdict.phases if p.kind is kind
            )
        verdict.timings["harness"] = sum(p.harness_sec for p in verdict.phases)


#: How often a waiting main thread wakes up to notice Ctrl-C (see Validator.run).
SIGNAL_POLL_SEC = 0.25

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BUILDER_CHATTER = re.compile(r"^(Step \d+/\d+ :|---> |Removing intermediate container|ERROR: )")


def _build_output_tail(log_tail: str, lines: int = 2) -> str:
    """The last lines the failing build step printed (without the builder's own chatter)."""
    kept = []
    for line in _ANSI.sub("", log_tail).splitlines():
        line = line.strip()
        if line and not _BUILDER_CHATTER.match(line):
            kept.append(line)
    return " | ".join(kept[-lines:])[-240:]
