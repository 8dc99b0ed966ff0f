"""Validation outcomes, their data, and the pure rules that turn phase results into a verdict."""

from __future__ import annotations

import json
import math
import re
from enum import Enum

from pydantic import BaseModel, Field


class Outcome(str, Enum):
    """What validation concluded about a task."""

    VALID = "valid"
    """nop scored 0 and the oracle scored 1, on every repeat."""
    INVALID_TASK = "invalid_task"
    """The task directory could not be parsed."""
    NO_SOLUTION = "no_solution"
    """A partial certification of a task without a reference solution (a corpus that ships
    none): the image builds, the tests score 0 on the untouched environment on every repeat,
    and they run and fail for the reason stated. Never valid: nothing has shown the tests can
    pass (``factory solve`` looks for a solution that does)."""
    BUILD_FAILED = "build_failed"
    """The environment image could not be built."""
    PASSES_WITHOUT_SOLUTION = "passes_without_solution"
    """The tests reward the untouched environment: they do not test the task."""
    FAILS_WITH_SOLUTION = "fails_with_solution"
    """The reference solution does not satisfy the tests."""
    FLAKY = "flaky"
    """Repeats of the same phase disagreed."""
    TIMEOUT = "timeout"
    """The solution, the tests or the build ran past their time limit."""
    INFRA_ERROR = "infra_error"
    """The harness or the engine failed (container died, engine error)."""
    UNAVAILABLE_OFFLINE = "unavailable_offline"
    """The task needs what nothing reachable here provides (a toolchain version, a package the
    stand-in's Debian release lacks, a Gradle distribution, crates); the reason names it."""
    UNHEALTHY = "unhealthy"
    """The environment's healthcheck never passed (its app or tool server did not come up)."""
    INVALID_REWARD = "invalid_reward"
    """The verifier wrote a reward that is not a number in [0, 1]."""
    CHEAT_PASSED = "cheat_passed"
    """A solution that does not solve the task (a trivial agent or a tampering attack) scored
    (``factory validate --probes``; generation's certification has the same outcome)."""


class PhaseKind(str, Enum):
    NOP = "nop"
    """Tests on the untouched environment: must score 0."""
    ORACLE = "oracle"
    """Reference solution, then tests: must score 1."""


class PhaseResult(BaseModel):
    """One container phase (a fresh container each)."""

    kind: PhaseKind
    repeat: int
    reward: float | None = None
    """The reward the tests wrote; None when none could be read."""
    reward_source: str | None = None
    """'reward.txt' or 'reward.json'."""
    reward_error: str | None = None
    """Why no reward could be read (missing file, not a number, ...)."""
    reward_invalid: bool = False
    """True when a reward file exists but holds no number in [0, 1] (outcome invalid_reward)."""
    isolation: str | None = None
    """What the harness undid before the verifier ran (frozen processes, restored files)."""
    metrics: dict[str, float] = Field(default_factory=dict)
    """All numeric metrics of reward.json."""
    solve_exit_code: int | None = None
    test_exit_code: int | None = None
    timed_out: str | None = None
    """'solve' or 'test' when that step hit its limit."""
    timeout_sec: float | None = None
    infra_error: str | None = None
    """Engine/harness failure, if any."""
    unhealthy: str | None = None
    """Why the environment's healthcheck never passed, if it did not."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds: start, solve, upload, test, collect, total."""
    log_dir: str | None = None
    output_tail: str = ""
    """Last lines of the test (or failing step's) output."""
    solve_output_tail: str = ""
    """Last lines of solve.sh's output (oracle phases)."""

    @property
    def harness_sec(self) -> float:
        """Time spent outside the task's own scripts."""
        total = self.timings.get("total", 0.0)
        return max(0.0, total - self.timings.get("solve", 0.0) - self.timings.get("test", 0.0))


class ProbeRecord(BaseModel):
    """One probe's result as stored in reports (see :mod:`factory.validate.probes`)."""

    name: str
    kind: str
    """'cheat', 'mutation' (counted in verifier strength) or 'independent' (reported only)."""
    reward: float | None
    rejected: bool
    """True when the tests gave this wrong solution no reward."""
    detail: str = ""


class TaskValidation(BaseModel):
    """The verdict on one task, as stored in validation.json."""

    id: str
    path: str
    outcome: Outcome
    reason: str
    """One line a task author can act on."""
    content_hash: str | None = None
    image: str | None = None
    base_image: str | None = None
    """The local image the task's Dockerfile builds on (its final stage's ``FROM``); None for
    a prebuilt image or one built from ``scratch``."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds: build, nop (all repeats), oracle (all repeats), harness, total."""
    logs: dict[str, str] = Field(default_factory=dict)
    """Phase name -> log folder (build -> build log file)."""
    phases: list[PhaseResult] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """What was rewritten (aliases, imports) or skipped (resume)."""
    probes: list[ProbeRecord] = Field(default_factory=list)
    """Cheat probes run by ``factory validate --probes`` (empty otherwise)."""
    resumed: bool = False
    """True when this entry was carried over from an earlier run (same content hash)."""


class ValidationReport(BaseModel):
    """``validation.json``."""

    run_id: str
    factory_version: str
    repeats: int
    jobs: int
    tasks: list[TaskValidation] = Field(default_factory=list)
    summary: dict[str, int] = Field(default_factory=dict)

    def refresh_summary(self) -> None:
        self.summary = outcome_counts(Outcome, [task.outcome for task in self.tasks])


def outcome_counts(kinds: type[Enum], outcomes: list[Enum]) -> dict[str, int]:
    """A report's summary: how many of each kind (in the enum's order, the kinds with none left
    out) and the ``total``."""
    counts = {kind.value: 0 for kind in kinds}
    for outcome in outcomes:
        counts[outcome.value] += 1
    return {k: v for k, v in counts.items() if v} | {"total": len(outcomes)}


# --- reward protocol ----------------------------------------------------------------------


def parse_reward(
    files: dict[str, bytes],
) -> tuple[float | None, str | None, dict[str, float], str | None]:
    """Read Harbor's reward files from the contents of /logs/verifier.

    Returns (reward, source, metrics, error). ``reward.txt`` holds one number; ``reward.json`` an
    object of numeric metrics whose ``reward`` key (or only key) is the reward. reward.txt wins
    when both exist. A reward outside [0, 1] is no reward (an error naming the value).
    """
    reward, source, metrics, error = _read_reward(files)
    if reward is not None and not 0.0 <= reward <= 1.0:
        return None, source, metrics, f"{source} holds the reward {reward:g}, outside [0, 1]"
    return reward, source, metrics, error


def reward_is_invalid(source: str | None, error: str | None) -> bool:
    """True when a reward file was there but held no usable reward (outcome invalid_reward)."""
    return source is not None and error is not None


def _read_reward(
    files: dict[str, bytes],
) -> tuple[float | None, str | None, dict[str, float], str | None]:
    if "reward.txt" in files:
        text = files["reward.txt"].decode("utf-8", errors="replace").strip()
        try:
            value = float(text.split()[0]) if text else math.nan
        except ValueError:
            return None, "reward.txt", {}, f"reward.txt holds {text[:40]!r}, not a number"
        if not math.isfinite(value):
            return None, "reward.txt", {}, f"reward.txt holds {text[:40]!r}, not a finite number"
        return value, "reward.txt", {"reward": value}, None
    if "reward.json" in files:
        try:
            data = json.loads(files["reward.json"].decode("utf-8", errors="replace"))
        except json.JSONDecodeError as exc:
            return None, "reward.json", {}, f"reward.json is not valid JSON ({exc.msg})"
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return float(data), "reward.json", {"reward": float(data)}, None
        if not isinstance(data, dict):
            return None, "reward.json", {}, "reward.json must hold an object of numeric metrics"
        metrics = {
            str(k): float(v)
            for k, v in data.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        }
        if "reward" in metrics:
            return metrics["reward"], "reward.json", metrics, None
        if len(metrics) == 1:
            return next(iter(metrics.values())), "reward.json", metrics, None
        return (
            None,
            "reward.json",
            metrics,
            ("reward.json has no 'reward' key and more than one metric; add 'reward'"),
        )
    return None, None, {}, "the tests wrote neither /logs/verifier/reward.txt nor reward.json"


# --- verdict ----------------------------------------------------------------------------


def _fmt(values: list[float | None]) -> str:
    return ",".join("none" if v is None else f"{v:g}" for v in values)


def _tail(text: str, lines: int = 3) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[-300:]


_PYTEST_VERDICT = re.compile(r"^(FAILED|ERROR) |\b\d+ (failed|errors?)\b|Error:|assert", re.I)


def failure_summary(output: str, limit: int = 300) -> str:
    """What a failing verifier said, in one line: pytest's ``FAILED``/``ERROR`` lines and its
    final count when present, else the last lines it printed."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    picked = [line for line in lines if _PYTEST_VERDICT.search(line)]
    text = " | ".join(picked[-4:]) if picked else _tail(output)
    return text[:limit] if text else "(no output)"


def _partial_reason(nop: list[PhaseResult]) -> str:
    """The reason of a no_solution verdict: what the nop runs showed, and the verifier's own
    account of why it failed."""
    if not nop:
        return "no reference solution (solution/solve.sh is missing) and no nop run"
    first = nop[0]
    if first.reward is None:
        scored = f"wrote no reward ({first.reward_error}), which counts as 0"
    else:
        scored = f"scored {first.reward:g}"
    return (
        "partial certification, no reference solution (solution/solve.sh is missing): the "
        f"image builds and on the untouched environment the tests {scored} in {len(nop)} of "
        f"{len(nop)} runs (test.sh exit {first.test_exit_code}); they fail with: "
        f"{failure_summary(first.output_tail)}. Nothing shows they can pass: `factory solve` "
        "looks for a solution"
    )


def classify(phases: list[PhaseResult]) -> tuple[Outcome, str]:
    """Turn the phases of one task into an outcome and a one-line reason.

    Precedence: infra_error > unhealthy > invalid_reward > timeout > flaky >
    passes_without_solution > fails_with_solution. Without oracle phases (a task without a
    reference solution) what the nop phases showed is a no_solution verdict.
    A nop phase without a readable reward counts as 0 (the tests failed before writing one).
    """
    for phase in phases:
        if phase.infra_error:
            return (
                Outcome.INFRA_ERROR,
                f"{phase.kind.value} run {phase.repeat}: {phase.infra_error}",
            )
    for phase in phases:
        if phase.unhealthy:
            return Outcome.UNHEALTHY, (
                f"{phase.kind.value} run {phase.repeat}: {phase.unhealthy}; check the "
                "entrypoint that starts the service and environment.healthcheck in task.toml"
            )
    for phase in phases:
        if phase.reward_invalid:
            return Outcome.INVALID_REWARD, (
                f"{phase.kind.value} run {phase.repeat}: {phase.reward_error}; the verifier "
                "must write one number in [0, 1] to /logs/verifier/reward.txt (or reward.json)"
            )
    for phase in phases:
        if phase.timed_out:
            step = "solution/solve.sh" if phase.timed_out == "solve" else "tests/test.sh"
            limit = "agent.timeout_sec" if phase.timed_out == "solve" else "verifier.timeout_sec"
            return Outcome.TIMEOUT, (
                f"{step} ran past {phase.timeout_sec:g}s in the {phase.kind.value} run and was "
                f"killed; make it faster or raise {limit} in task.toml"
            )
    nop = [p for p in phases if p.kind is PhaseKind.NOP]
    oracle = [p for p in phases if p.kind is PhaseKind.ORACLE]
    nop_rewards = [p.reward if p.reward is not None else 0.0 for p in nop]
    oracle_rewards = [p.reward for p in oracle]
    if len(set(nop_rewards)) > 1:
        return Outcome.FLAKY, (
            f"without the solution the tests scored {_fmt(nop_rewards)} across {len(nop)} "
            "identical runs; make them deterministic"
        )
    if len(set(oracle_rewards)) > 1:
        return Outcome.FLAKY, (
            f"with the solution the tests scored {_fmt(oracle_rewards)} across {len(oracle)} "
            "identical runs; make the solution and tests deterministic"
        )
    if nop and nop_rewards[0] > 0:
        return Outcome.PASSES_WITHOUT_SOLUTION, (
            f"the tests score {nop_rewards[0]:g} on the untouched environment (must be 0): they "
            "do not check the task's outcome"
            + (f"; test output: {_tail(nop[0].output_tail)}" if nop[0].output_tail.strip() else "")
        )
    if oracle:
        first = oracle[0]
        if first.reward is None:
            return Outcome.FAILS_WITH_SOLUTION, (
                f"after the solution, {first.reward_error} (test.sh exit {first.test_exit_code}"
                f"; solve.sh exit {first.solve_exit_code}): {_tail(first.output_tail)}"
            )
        if first.reward < 1:
            said = []
            if first.solve_exit_code and first.solve_output_tail.strip():
                said.append(f"solve.sh output: {_tail(first.solve_output_tail, 2)}")
            if first.output_tail.strip():
                said.append(f"test output: {_tail(first.output_tail)}")
            return Outcome.FAILS_WITH_SOLUTION, (
                f"the reference solution scores {first.reward:g} (must be 1; solve.sh exit "
                f"{first.solve_exit_code})" + "".join(f"; {part}" for part in said)
            )
    if not oracle:
        return Outcome.NO_SOLUTION, _partial_reason(nop)
    return Outcome.VALID, (
        f"nop scored 0 and the oracle 1 in {len(oracle)} of {len(oracle)} repeats"
    )
