"""Certify one candidate task directory: leak checks, fail-to-pass validation, cheat probes (the
generic ones and the task's own, e.g. forging a web app's database) and mutation probes. Dedup
is the suite's business (it needs the other tasks).

:func:`certify` is called where the run is driven; the certification itself
(:func:`certify_here`) is a unit of work that runs on the validator's executor, on this machine
or on a Ray node alike.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from factory.errors import CancelledError, FactoryError
from factory.executor import Site, Work
from factory.generate.results import ProbeRecord, QualityOutcome
from factory.quality.leaks import find_leaks, scan_image
from factory.tasks.model import load_task
from factory.validate.checker import check_task
from factory.validate.outcome import Outcome, TaskValidation
from factory.validate.probes import (
    INDEPENDENT,
    TAMPER,
    cheat_scripts,
    name_the_attack,
    run_probes,
    verifier_strength,
)
from factory.validate.validator import Validator


@dataclass
class Certificate:
    outcome: str
    """'valid', a validation outcome or a QualityOutcome."""
    reason: str
    validation: TaskValidation | None = None
    probes: list[ProbeRecord] = field(default_factory=list)
    verifier_strength: float | None = None
    log_tail: str = ""
    """What a repair prompt should see: the end of the failing phase's output."""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.outcome == Outcome.VALID.value


def certify(
    task_dir: Path,
    validator: Validator,
    *,
    secrets: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
    mutations: dict[str, str] | None = None,
    cheats: dict[str, str] | None = None,
    independent: dict[str, str] | None = None,
    forbidden_strings: tuple[str, ...] = (),
    min_verifier_strength: float = 1.0,
) -> Certificate:
    """Certify the candidate in ``task_dir`` on ``validator``'s executor; its logs go to the
    validator's ``logs/<directory name>``. A unit lost on the way (a node failed) is an
    infra_error certificate."""
    task_id = validator.claim_id(task_dir.name)
    checks = Checks(
        secrets=tuple(secrets),
        outputs=tuple(outputs),
        mutations=dict(mutations or {}),
        cheats=dict(cheats or {}),
        forbidden_strings=tuple(forbidden_strings),
        independent=dict(independent or {}),
        min_verifier_strength=min_verifier_strength,
    )
    kwargs = {"repeats": validator.repeats, "prestart": validator.prestart, "checks": checks}
    work = Work(certify_here, Certificate, kwargs)
    try:
        done = validator.dispatch(work, task_dir, task_id)
    except CancelledError:
        raise
    except FactoryError as exc:
        return Certificate(Outcome.INFRA_ERROR.value, str(exc))
    cert = done.result
    if cert.validation is not None:
        notes = [*cert.validation.notes, *([done.where] if done.where else [])]
        cert.validation = cert.validation.model_copy(
            update={"id": task_id, "path": str(task_dir), "notes": notes}
        )
    return cert


@dataclass(frozen=True)
class Checks:
    """What a candidate is checked for besides fail-to-pass (see :func:`certify`)."""

    secrets: tuple[str, ...] = ()
    """Strings (the answer) that must appear in no file the agent sees."""
    outputs: tuple[str, ...] = ()
    """Files the solution writes: the cheat probes create them empty."""
    mutations: dict[str, str] = field(default_factory=dict)
    """Near-miss wrong solutions the tests must reject (name -> script)."""
    cheats: dict[str, str] = field(default_factory=dict)
    """The task's own cheat probes (name -> script), run besides the generic ones; one that
    scores fails the task."""
    forbidden_strings: tuple[str, ...] = ()
    """Strings that must not be in the built image in plain text."""
    independent: dict[str, str] = field(default_factory=dict)
    """Wrong solutions the family did not write (:mod:`factory.validate.independent`): run and
    reported with kind ``independent``, never counted in verifier strength. Whether they are
    wrong depends on the tests grading the outputs' content, which only the family knows: as
    verdicts they called sound tasks of 14 of 37 families weak (tests that grade modes, tool
    state or a rebuilt binary rightly accept an output whose text changed)."""
    min_verifier_strength: float = 1.0


def certify_here(
    site: Site, task_dir: Path, logs: Path, *, repeats: int, prestart: bool, checks: Checks
) -> Certificate:
    """The certification itself, where the engine is (a unit of work)."""
    started = time.monotonic()
    leaks = find_leaks(task_dir, checks.secrets)
    if leaks:
        return Certificate(QualityOutcome.LEAK.value, "; ".join(leaks))
    verdict = check_task(site, task_dir, logs, repeats=repeats, prestart=prestart)
    timings = {"validate": time.monotonic() - started}
    if verdict.outcome is not Outcome.VALID:
        tail = next((p.output_tail for p in reversed(verdict.phases) if p.output_tail), "")
        return Certificate(
            verdict.outcome.value, verdict.reason, verdict, log_tail=tail, timings=timings
        )
    task = load_task(task_dir)
    mark = time.monotonic()
    found = scan_image(
        site.runtime,
        task,
        verdict.image or "",
        checks.forbidden_strings,
        base=verdict.base_image,
    )
    if found:
        return Certificate(
            QualityOutcome.LEAK.value,
            f"the image holds a forbidden string in plain text: {', '.join(found[:3])}",
            verdict,
            timings=timings,
        )
    probes = {**cheat_scripts(checks.outputs), **checks.cheats}
    results = run_probes(site.runtime, task, verdict.image or "", probes, "cheat", logs)
    results += run_probes(
        site.runtime, task, verdict.image or "", checks.mutations, "mutation", logs
    )
    results += run_probes(
        site.runtime, task, verdict.image or "", checks.independent, INDEPENDENT, logs
    )
    if any(r.name == TAMPER and not r.rejected for r in results):
        results += name_the_attack(site.runtime, task, verdict.image or "", logs)
    timings["probes"] = time.monotonic() - mark
    records = [r.record() for r in results]
    strength = verifier_strength(results)
    broken = [r for r in results if r.reward is None]
    if broken:
        return Certificate(
            Outcome.INFRA_ERROR.value,
            f"probe {broken[0].kind} '{broken[0].name}': {broken[0].detail}",
            verdict,
            records,
            strength,
            timings=timings,
        )
    scored = [r for r in results if r.kind == "cheat" and not r.rejected]
    if scored:
        names = ", ".join(f"'{r.name}' ({r.reward:g})" for r in scored)
        return Certificate(
            QualityOutcome.CHEAT_PASSED.value,
            f"a cheating agent scores: {names}; the tests must check the outcome, in a "
            "record the agent cannot write",
            verdict,
            records,
            strength,
            timings=timings,
        )
    if strength is not None and strength < checks.min_verifier_strength:
        passed = ", ".join(r.name for r in results if r.kind == "mutation" and not r.rejected)
        return Certificate(
            QualityOutcome.WEAK_VERIFIER.value,
            f"verifier strength {strength:.2f} < {checks.min_verifier_strength:.2f}: the "
            f"tests accept the wrong solution(s) {passed}",
            verdict,
            records,
            strength,
            timings=timings,
        )
    return Certificate(
        Outcome.VALID.value, verdict.reason, verdict, records, strength, timings=timings
    )
