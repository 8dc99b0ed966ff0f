"""Fail-to-pass checking of one task where an engine is: build its image, then run the tests on
the untouched environment (nop, must score 0) and after the reference solution (oracle, must
score 1), each in a fresh container, ``repeats`` times.

:func:`check_task` is a unit of work (:class:`factory.executor.Work`): it runs on this machine
or on a remote node alike, and knows nothing of reports, resuming or ids (the
:class:`~factory.validate.validator.Validator` does that where the run is driven).
"""

from __future__ import annotations

import re
import time
from concurrent.futures import Future
from pathlib import Path

from factory.errors import (
    BaseImageMissingError,
    CancelledError,
    ExecTimeoutError,
    ImageBuildError,
    TaskFormatError,
    UnavailableOfflineError,
)
from factory.executor import Site, Work
from factory.tasks.model import Task, load_task
from factory.tasks.offline import undeclared_network_fetches
from factory.validate.outcome import Outcome, PhaseKind, PhaseResult, TaskValidation, classify
from factory.validate.phases import container_spec, run_phase
from factory.validate.probes import cheat_scripts, run_probes
from factory.validate.separate import separate_verifier_problem


def check_work(repeats: int, prestart: bool = True, probes: bool = False) -> Work[TaskValidation]:
    """The unit of work that checks one task (for :meth:`Executor.run`)."""
    kwargs = {"repeats": repeats, "prestart": prestart, "probes": probes}
    return Work(check_task, TaskValidation, kwargs)


def _undeclared_network_hint(task: Task) -> str:
    """Why a task that fetches at test time fails here although Harbor would pass it."""
    if undeclared_network_fetches(task.config.environment, task.paths.test_script) is None:
        return ""
    return (
        "; note: the tests fetch packages at test time and the task declares no network, so "
        "factory ran them offline (Harbor's default is online): `factory import` installs "
        "them at build time, or declare environment.network_mode"
    )


def check_task(
    site: Site,
    task_dir: Path,
    logs: Path,
    *,
    repeats: int = 2,
    prestart: bool = True,
    probes: bool = False,
) -> TaskValidation:
    """Certify the Harbor task in ``task_dir``; its logs go to ``logs``. With ``probes``, a
    valid task then faces every cheat probe (trivial agents, each tampering attack)."""
    started = time.monotonic()
    try:
        task = load_task(task_dir)
    except TaskFormatError as exc:
        return TaskValidation(
            id=task_dir.name,
            path=str(task_dir),
            outcome=Outcome.INVALID_TASK,
            reason=str(exc),
            timings={"total": time.monotonic() - started},
        )
    verdict = TaskValidation(
        id=task.id,
        path=str(task.root),
        outcome=Outcome.INFRA_ERROR,
        reason="",
        content_hash=task.content_hash,
    )
    problem = separate_verifier_problem(task)
    if problem is not None:
        verdict.outcome, verdict.reason = Outcome.INVALID_TASK, problem
    else:
        image = _build(site, task, verdict, logs)
        if image is not None:
            # Without a reference solution only the nop phases can run: a partial certification
            # (no_solution, never valid) that says what they showed.
            kinds = list(PhaseKind) if task.has_solution else [PhaseKind.NOP]
            verdict.phases = _run_phases(site, task, image, logs, verdict, repeats, prestart, kinds)
            verdict.outcome, verdict.reason = classify(verdict.phases)
            hosts = ", ".join(site.unreachable.get(image, [])[:3])
            failing = verdict.outcome in (Outcome.FAILS_WITH_SOLUTION, Outcome.NO_SOLUTION)
            if failing and hosts:
                verdict.reason += (
                    f"; note: the image build could not reach {hosts} (no internet here), "
                    "so the environment may lack what it downloads (see build.log)"
                )
            if failing:
                verdict.reason += _undeclared_network_hint(task)
            if verdict.outcome is Outcome.VALID and probes:
                _probe(site, task, image, logs, verdict)
            if verdict.outcome is Outcome.INFRA_ERROR and site.cancelled.is_set():
                verdict.reason = "interrupted before the task finished"
            _sum_timings(verdict)
    verdict.timings["total"] = time.monotonic() - started
    return verdict


def _build(site: Site, task: Task, verdict: TaskValidation, logs: Path) -> str | None:
    build_log = logs / "build.log"
    verdict.logs["build"] = str(build_log)
    try:
        image = site.images.ensure(task, log_path=build_log)
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
        verdict.base_image = image.base
        verdict.notes.extend(image.notes)
        if image.unreachable:
            site.unreachable[image.ref] = image.unreachable
            verdict.notes.append(f"build: could not reach {', '.join(image.unreachable)}")
        verdict.timings["build"] = image.seconds
        if not build_log.exists():
            build_log.write_text(f"# cached image {image.ref} (environment unchanged)\n")
        return image.ref
    return None


def _run_phases(
    site: Site,
    task: Task,
    image: str,
    logs: Path,
    verdict: TaskValidation,
    repeats: int,
    prestart: bool,
    kinds: list[PhaseKind],
) -> list[PhaseResult]:
    """``kinds`` (nop and oracle), ``repeats`` times, each in a fresh container. The next phase's
    container is started while the current phase runs, which hides the engine's start-up
    time (most of a phase's harness cost)."""
    plan = [(kind, r) for r in range(1, repeats + 1) for kind in kinds]
    spec = container_spec(task, image)
    ahead = (lambda: site.start_ahead(spec)) if prestart else (lambda: None)
    phases: list[PhaseResult] = []
    upcoming: Future | None = ahead()
    try:
        for index, (kind, repeat) in enumerate(plan):
            if site.cancelled.is_set():
                raise CancelledError("interrupted")
            current, upcoming = upcoming, None
            if index + 1 < len(plan):
                upcoming = ahead()
            name = f"{kind.value}-{repeat}"
            result = run_phase(
                site.runtime, task, image, kind, repeat, logs / name, container=current
            )
            if result.infra_error and not site.cancelled.is_set():
                # One retry: engine hiccups should not condemn a task.
                retry = run_phase(site.runtime, task, image, kind, repeat, logs / f"{name}-retry")
                if not retry.infra_error:
                    verdict.notes.append(f"{name}: retried after infra error: {result.infra_error}")
                    result = retry
            verdict.logs[name] = result.log_dir or ""
            phases.append(result)
            if result.timed_out or result.infra_error:
                break  # the verdict is settled; do not burn more time
    finally:
        if upcoming is not None:
            site.discard(upcoming)
    return phases


def _probe(site: Site, task: Task, image: str, logs: Path, verdict: TaskValidation) -> None:
    """``--probes``: every cheat probe (trivial agents, each tampering attack) must score 0."""
    mark = time.monotonic()
    results = run_probes(
        site.runtime, task, image, cheat_scripts((), attacks="each"), "cheat", logs
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


def _sum_timings(verdict: TaskValidation) -> None:
    for kind in PhaseKind:
        verdict.timings[kind.value] = sum(
            p.timings.get("total", 0.0) for p in verdict.phases if p.kind is kind
        )
    verdict.timings["harness"] = sum(p.harness_sec for p in verdict.phases)


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
