"""Verifier flake rate: the nop and oracle phases rerun under perturbation.

A sound verifier gives the untouched environment 0 and the reference solution 1 whatever the
time zone, the hash seed or the load on the machine. Each flake run is one nop and one oracle
phase, each in a fresh container, under one perturbation (cycled in this order):

* ``tz`` — ``TZ=Pacific/Kiritimati`` (UTC+14: "today" is another date than in UTC);
* ``seed`` — another ``PYTHONHASHSEED`` (set iteration order, ``hash()``), and ``RANDOM``-ish
  seeds tests might read (``FACTORY_SEED``);
* ``load`` — CPU hogs (``yes > /dev/null``, one per CPU of the container) started before the
  solution and the tests, so timing-sensitive tests run slow;
* ``all`` — all three at once, with another zone (``America/St_Johns``, UTC-3:30) and seed.

The flake rate is the share of phases whose reward differs from the expected one (nop: 0,
oracle: 1); a phase that times out counts as differing, one lost to an infrastructure error
(the engine failed) is left out and reported.
"""

from __future__ import annotations

import math
import random
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from factory.errors import FactoryError
from factory.runtime import DockerRuntime
from factory.tasks.config import FactoryProvenance
from factory.tasks.model import Task, load_task_config, save_task_config
from factory.validate.outcome import Outcome, PhaseKind, PhaseResult, ValidationReport
from factory.validate.phases import container_spec, run_phase

PERTURBATIONS = ("tz", "seed", "load", "all")
_ZONES = {"tz": "Pacific/Kiritimati", "all": "America/St_Johns"}
_HOG = (
    "n={n}; while [ $n -gt 0 ]; do n=$((n-1)); "
    "( (command -v yes >/dev/null && exec yes >/dev/null) || while :; do :; done ) "
    "</dev/null >/dev/null 2>&1 & done"
)


@dataclass
class Perturbation:
    name: str
    env: dict[str, str] = field(default_factory=dict)
    load: int = 0
    """CPU hog processes started in the container before the phase."""


def perturbation(index: int, cpus: float = 1.0, seed: int = 0) -> Perturbation:
    """The perturbation of flake run ``index`` (0-based), cycling through PERTURBATIONS."""
    name = PERTURBATIONS[index % len(PERTURBATIONS)]
    rng = random.Random(f"{seed}:{index}")
    env: dict[str, str] = {}
    if name in ("tz", "all"):
        env["TZ"] = _ZONES[name]
    if name in ("seed", "all"):
        value = str(rng.randint(1, 4_294_967_295))
        env["PYTHONHASHSEED"] = value
        env["FACTORY_SEED"] = value
    hogs = max(1, math.ceil(cpus)) if name in ("load", "all") else 0
    return Perturbation(name, env, hogs)


@dataclass
class FlakePhase:
    run: int
    perturbation: str
    kind: str
    reward: float | None
    expected: float
    flaky: bool | None
    """None when the phase was lost to an infrastructure error (not counted)."""
    detail: str = ""


@dataclass
class FlakeResult:
    task_dir: Path
    phases: list[FlakePhase] = field(default_factory=list)

    @property
    def scored(self) -> list[FlakePhase]:
        return [p for p in self.phases if p.flaky is not None]

    @property
    def flake_rate(self) -> float | None:
        scored = self.scored
        return sum(p.flaky for p in scored) / len(scored) if scored else None

    @property
    def infra_errors(self) -> int:
        return sum(p.flaky is None for p in self.phases)

    def by_perturbation(self) -> dict[str, tuple[int, int]]:
        """perturbation -> (flaky phases, scored phases)."""
        out: dict[str, tuple[int, int]] = {}
        for phase in self.scored:
            flaky, total = out.get(phase.perturbation, (0, 0))
            out[phase.perturbation] = (flaky + bool(phase.flaky), total + 1)
        return out


def judge(kind: PhaseKind, phase: PhaseResult) -> FlakePhase:
    """Compare one phase's reward with what a sound verifier gives."""
    expected = 1.0 if kind is PhaseKind.ORACLE else 0.0
    if phase.infra_error or phase.unhealthy:
        return FlakePhase(0, "", kind.value, None, expected, None, phase.infra_error or "")
    if phase.timed_out:
        return FlakePhase(0, "", kind.value, None, expected, True, f"{phase.timed_out} timed out")
    reward = phase.reward or 0.0
    flaky = reward < 1.0 if kind is PhaseKind.ORACLE else reward > 0.0
    return FlakePhase(0, "", kind.value, reward, expected, flaky, phase.reward_error or "")


def _done(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def measure_flake(
    runtime: DockerRuntime, task: Task, image: str, runs: int, log_root: Path, *, seed: int = 0
) -> FlakeResult:
    """``runs`` perturbed nop + oracle pairs of ``task`` (on its built ``image``)."""
    result = FlakeResult(task.root)
    cpus = task.config.environment.effective_cpus
    for index in range(runs):
        shake = perturbation(index, cpus, seed)
        for kind in (PhaseKind.NOP, PhaseKind.ORACLE):
            spec = container_spec(task, image)
            spec.env = {**spec.env, **shake.env}
            log_dir = log_root / f"flake-{index + 1}-{shake.name}-{kind.value}"
            box = None
            try:
                box = runtime.start(spec)
                if shake.load:
                    box.exec(
                        ["sh", "-c", _HOG.format(n=shake.load)],
                        timeout_sec=30,
                        what="CPU load",
                    )
            except FactoryError as exc:
                if box is not None:
                    box.close()
                phase = PhaseResult(kind=kind, repeat=index + 1, infra_error=str(exc))
            else:
                phase = run_phase(
                    runtime, task, image, kind, index + 1, log_dir, container=_done(box)
                )
            verdict = judge(kind, phase)
            verdict.run, verdict.perturbation = index + 1, shake.name
            result.phases.append(verdict)
    return result


def stamp_flake_rate(task_dir: Path, result: FlakeResult) -> bool:
    """Write ``flake_rate`` and ``flake_runs`` into the task's [metadata.factory]. False when
    nothing was scored (every phase lost to the engine)."""
    rate = result.flake_rate
    if rate is None:
        return False
    path = task_dir / "task.toml"
    config = load_task_config(path)
    provenance: FactoryProvenance = config.provenance.model_copy(
        update={"flake_rate": round(rate, 4), "flake_runs": len(result.scored)}
    )
    config.set_provenance(provenance)
    save_task_config(path, config)
    return True


def flake_checks(
    runtime: DockerRuntime,
    targets: list[tuple[Path, str]],
    runs: int,
    log_root: Path,
    *,
    jobs: int = 1,
    stamp: bool = True,
    on_done=None,
) -> list[FlakeResult]:
    """Measure the flake rate of each (task directory, built image), ``jobs`` at a time, and
    (``stamp``) store it in the task's ``task.toml``. Tasks converted on the fly (Terminal-Bench
    1 layout) are measured but not stamped (their task.toml is generated)."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    from factory.fsutil import write_text_atomic
    from factory.importers.layouts import load_any_task

    def one(target: tuple[Path, str]) -> FlakeResult:
        task_dir, image = target
        task = load_any_task(task_dir, tb1_cache=log_root / "converted")
        result = measure_flake(runtime, task, image, runs, log_root / task_dir.name)
        if stamp and task.source_layout == "harbor":
            stamp_flake_rate(task_dir, result)
        if on_done is not None:
            on_done(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="flake") as pool:
        results = list(pool.map(one, targets))
    summary = [
        {
            "task": str(r.task_dir),
            "flake_rate": r.flake_rate,
            "scored_phases": len(r.scored),
            "infra_errors": r.infra_errors,
            "by_perturbation": {
                k: {"flaky": f, "phases": n} for k, (f, n) in r.by_perturbation().items()
            },
            "phases": [p.__dict__ for p in r.phases],
        }
        for r in results
    ]
    write_text_atomic(log_root / "flake.json", json.dumps(summary, indent=2))
    return results


def flake_valid_tasks(
    runtime: DockerRuntime,
    report: ValidationReport,
    runs: int,
    log_root: Path,
    *,
    jobs: int = 1,
    on_start=None,
    on_done=None,
) -> list[FlakeResult]:
    """`factory validate --flake-runs`: :func:`flake_checks` of the report's valid tasks (on
    the images validation built); ``on_start(tasks)`` before, ``on_done`` after each."""
    targets = [
        (Path(t.path), t.image) for t in report.tasks if t.outcome is Outcome.VALID and t.image
    ]
    if not targets or runs < 1:
        return []
    if on_start is not None:
        on_start(len(targets))
    return flake_checks(runtime, targets, runs, log_root, jobs=jobs, on_done=on_done)
