"""Certify one candidate task directory: leak checks, fail-to-pass validation, cheat and
mutation probes. Dedup is the suite's business (it needs the other tasks)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from factory.generate.results import ProbeRecord, QualityOutcome
from factory.quality.leaks import find_leaks, scan_image
from factory.validate.outcome import Outcome, TaskValidation
from factory.validate.probes import (
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
    forbidden_strings: tuple[str, ...] = (),
    min_verifier_strength: float = 1.0,
) -> Certificate:
    started = time.monotonic()
    leaks = find_leaks(task_dir, secrets)
    if leaks:
        return Certificate(QualityOutcome.LEAK.value, "; ".join(leaks))
    verdict = validator.validate(task_dir)
    timings = {"validate": time.monotonic() - started}
    if verdict.outcome is not Outcome.VALID:
        tail = next((p.output_tail for p in reversed(verdict.phases) if p.output_tail), "")
        return Certificate(
            verdict.outcome.value, verdict.reason, verdict, log_tail=tail, timings=timings
        )
    from factory.tasks.model import load_task

    task = load_task(task_dir)
    probe_root = Path(verdict.logs.get("nop-1", str(task_dir))).parent
    mark = time.monotonic()
    found = scan_image(validator.runtime, task, verdict.image or "", forbidden_strings)
    if found:
        return Certificate(
            QualityOutcome.LEAK.value,
            f"the image holds a forbidden string in plain text: {', '.join(found[:3])}",
            verdict,
            timings=timings,
        )
    results = run_probes(
        validator.runtime, task, verdict.image or "", cheat_scripts(outputs), "cheat", probe_root
    )
    results += run_probes(
        validator.runtime, task, verdict.image or "", mutations or {}, "mutation", probe_root
    )
    if any(r.name == TAMPER and not r.rejected for r in results):
        results += name_the_attack(validator.runtime, task, verdict.image or "", probe_root)
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
    cheats = [r for r in results if r.kind == "cheat" and not r.rejected]
    if cheats:
        names = ", ".join(f"'{r.name}' ({r.reward:g})" for r in cheats)
        return Certificate(
            QualityOutcome.CHEAT_PASSED.value,
            f"a trivial agent scores: {names}; the tests must check the outcome",
            verdict,
            records,
            strength,
            timings=timings,
        )
    if strength is not None and strength < min_verifier_strength:
        passed = ", ".join(r.name for r in results if r.kind == "mutation" and not r.rejected)
        return Certificate(
            QualityOutcome.WEAK_VERIFIER.value,
            f"verifier strength {strength:.2f} < {min_verifier_strength:.2f}: the "
            f"tests accept the wrong solution(s) {passed}",
            verdict,
            records,
            strength,
            timings=timings,
        )
    return Certificate(
        Outcome.VALID.value, verdict.reason, verdict, records, strength, timings=timings
    )
