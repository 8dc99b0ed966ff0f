"""``factory solve``: find a reference solution for a task that has none.

For each task: the partial certification first (:mod:`factory.validate.checker`: the image
builds, the tests score 0 on the untouched environment; anything else means there is nothing
to solve, and says why); then up to ``attempts`` agent episodes in fresh containers of the
task's image (:mod:`factory.agent.harness`, the same harness as ``factory eval``), each with its
own sampling seed. When an episode passes the task's verifier its commands become a candidate
``solution/solve.sh`` (:mod:`factory.solve.candidate`), staged in a copy of the task and put
through the normal certification (nop and oracle on every repeat, the cheat probes). Only a
candidate that certifies valid is installed into the task, atomically; otherwise the next
attempt runs.

The report (``OUT/solve.json``) is rewritten after every attempt, so Ctrl-C loses at most the
attempt in flight; the episode's container is removed on every way out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, Field

from factory import __version__
from factory.agent.actions import ActionFormat
from factory.agent.endpoint import episode_seed
from factory.agent.harness import Episode, HarnessConfig, ReplyPolicy, ScriptedPolicy, drive_episode
from factory.errors import FactoryError, TaskFormatError
from factory.executor import Executor
from factory.fsutil import ensure_output_dir, write_text_atomic
from factory.solve.candidate import (
    NotScriptableError,
    Provenance,
    episode_commands,
    install_solution,
    solve_script,
    stage_candidate,
)
from factory.tasks.model import load_task
from factory.validate.outcome import Outcome, TaskValidation, outcome_counts
from factory.validate.validator import Validator

REPORT_NAME = "solve.json"


class SolveOutcome(str, Enum):
    """What ``factory solve`` concluded about a task."""

    SOLVED = "solved"
    """An episode passed the verifier and its commands, as solution/solve.sh, certified valid;
    the script is installed in the task."""
    UNSOLVED = "unsolved"
    """No attempt passed the task's verifier."""
    NOT_CERTIFIED = "not_certified"
    """Attempts passed the verifier but no candidate certified (its replay failed, was flaky,
    or a cheat probe scored): nothing installed."""
    NOT_ATTEMPTED = "not_attempted"
    """The task cannot be attempted: it already has a solution, does not load, or its
    partial certification failed (the image does not build, the tests pass untouched...)."""
    INFRA_ERROR = "infra_error"
    """Every attempt was lost to the engine or the policy's endpoint."""
    INTERRUPTED = "interrupted"
    """The run was stopped (Ctrl-C) before the task's search ended; nothing installed."""


class AttemptRecord(BaseModel):
    """One episode of ``factory solve``."""

    attempt: int
    """1-based."""
    seed: int
    """The policy's sampling seed."""
    reward: float | None
    """The verifier's reward (None: lost to infrastructure)."""
    turns: int
    """Policy turns that ran commands."""
    policy_replies: int
    """Replies the policy gave (calls to the model, for an endpoint)."""
    commands: list[str] = Field(default_factory=list)
    """The shell commands the episode ran, in order."""
    infra_error: str | None = None
    policy_error: str | None = None
    """The policy's command stopped or outlived the environment (reward 0)."""
    seconds: float = 0.0
    log_dir: str = ""
    """Its transcript.jsonl and verifier logs."""
    candidate: str | None = None
    """The staged task copy whose solution/solve.sh is this attempt's candidate."""
    certification: TaskValidation | None = None
    """The candidate's certification verdict."""
    note: str | None = None
    """Why a passing attempt gave no candidate (it used a non-bash tool)."""


class SolveResult(BaseModel):
    """``factory solve``'s verdict on one task."""

    task: str
    """The task directory as given."""
    id: str
    outcome: SolveOutcome
    reason: str
    """One line: what happened and what to do next."""
    preflight: TaskValidation | None = None
    """The partial certification (outcome no_solution when the task can be attempted)."""
    attempts: list[AttemptRecord] = Field(default_factory=list)
    solution: str | None = None
    """The installed solution/solve.sh (outcome solved)."""
    provenance: Provenance | None = None
    content_hash: str | None = None
    """The content hash of the task as certified (with its new solution)."""


class SolveReport(BaseModel):
    """``OUT/solve.json``."""

    run_id: str
    factory_version: str
    model: str
    endpoint: str
    attempts: int
    """Attempts allowed per task."""
    max_turns: int
    tokens_used: int = 0
    """Prompt and completion tokens the endpoint reported (0 for a scripted policy)."""
    tasks: list[SolveResult] = Field(default_factory=list)
    summary: dict[str, int] = Field(default_factory=dict)

    def refresh_summary(self) -> None:
        self.summary = outcome_counts(SolveOutcome, [task.outcome for task in self.tasks])


@dataclass
class Solver:
    """The policy that attempts tasks: a fresh :class:`ReplyPolicy` per episode, from its
    sampling seed, and the harness its episodes run under."""

    make_policy: Callable[[int], ReplyPolicy]
    harness: HarnessConfig
    model: str
    endpoint: str
    seed: int = 0
    """Base seed: attempt ``i`` of task ``t`` samples with ``episode_seed(t, i, seed)``."""
    tokens: Callable[[], int] = lambda: 0
    """Tokens the endpoint has used so far (0 when unknown)."""

    @classmethod
    def endpoint_policy(
        cls,
        *,
        base_url: str,
        model: str,
        harness: HarnessConfig,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.7,
        max_tokens: int = 512,
        seed: int = 0,
        cache_dir: Path | None = None,
    ) -> Solver:
        """A model behind an OpenAI-compatible endpoint (through :mod:`factory.llm`, the
        policy of ``factory eval --base-url``); replies cached under ``cache_dir``."""
        from factory.agent.endpoint import EndpointPolicy
        from factory.agent.policy import PolicyChoice

        choice = PolicyChoice(model=model, base_url=base_url, api_key_env=api_key_env, jobs=1)
        client = choice.client(cache_dir)  # type: ignore[arg-type]  # None: no cache

        def make(episode: int) -> ReplyPolicy:
            return EndpointPolicy(
                client, temperature=temperature, max_tokens=max_tokens, seed=episode
            )

        return cls(make, harness, model, base_url, seed, tokens=lambda: client.tokens_used)

    @classmethod
    def scripted(cls, commands: list[str], harness: HarnessConfig) -> Solver:
        """The same commands every attempt (tests, smoke runs)."""
        return cls(lambda _seed: ScriptedPolicy(commands), harness, "scripted", "scripted")


Say = Callable[[str], None]


def solve_tasks(
    task_dirs: list[Path],
    solver: Solver,
    executor: Executor,
    out: Path,
    *,
    attempts: int = 3,
    repeats: int = 2,
    probes: bool = True,
    say: Say = lambda _m: None,
) -> SolveReport:
    """Attempt every task in turn (see the module docstring); the report is also written to
    ``OUT/solve.json`` after every attempt and on every way out."""
    if attempts < 1:
        raise FactoryError("--attempts must be at least 1")
    ensure_output_dir(out)
    report = SolveReport(
        run_id=executor.run_id,
        factory_version=__version__,
        model=solver.model,
        endpoint=solver.endpoint,
        attempts=attempts,
        max_turns=solver.harness.max_turns,
    )
    path = out / REPORT_NAME

    def save() -> None:
        report.tokens_used = solver.tokens()
        report.refresh_summary()
        write_text_atomic(path, report.model_dump_json(indent=2))

    try:
        for task_dir in task_dirs:
            result = SolveResult(
                task=str(task_dir), id=task_dir.name, outcome=SolveOutcome.UNSOLVED, reason=""
            )
            report.tasks.append(result)
            try:
                _solve_one(
                    task_dir, result, solver, executor, out, attempts, repeats, probes, say, save
                )
            except BaseException:
                if not result.reason:
                    result.outcome = SolveOutcome.INTERRUPTED
                    result.reason = (
                        f"stopped after {len(result.attempts)} attempt(s); nothing installed"
                    )
                raise
            save()
            say(f"{result.id}: {result.outcome.value}: {result.reason}")
    finally:
        save()
    return report


def _solve_one(
    task_dir: Path,
    result: SolveResult,
    solver: Solver,
    executor: Executor,
    out: Path,
    attempts: int,
    repeats: int,
    probes: bool,
    say: Say,
    save: Callable[[], None],
) -> None:
    try:
        task = load_task(task_dir)
    except TaskFormatError as exc:
        result.outcome, result.reason = SolveOutcome.NOT_ATTEMPTED, str(exc)
        return
    result.id = task.id.replace("/", "__")
    if task.has_solution:
        result.outcome = SolveOutcome.NOT_ATTEMPTED
        result.reason = (
            f"{task.paths.solve_script} exists: the task has a reference solution "
            "(`factory validate` certifies it; remove it to look for another)"
        )
        return
    say(f"{result.id}: partial certification (build, nop x{repeats})")
    preflight = _validator(executor, out / "preflight" / result.id, repeats).validate(task_dir)
    result.preflight = preflight
    if preflight.outcome is not Outcome.NO_SOLUTION or not preflight.image:
        result.outcome = SolveOutcome.NOT_ATTEMPTED
        result.reason = f"partial certification: {preflight.outcome.value}: {preflight.reason}"
        return
    runtime = executor.runtime
    passed = 0
    for number in range(1, attempts + 1):
        seed = episode_seed(task.id, number - 1, solver.seed)
        log_dir = out / "attempts" / result.id / f"attempt-{number}"
        log_dir.mkdir(parents=True, exist_ok=True)
        say(f"{result.id}: attempt {number}/{attempts} (seed {seed}, up to "
            f"{solver.harness.max_turns} turns)")  # fmt: skip
        episode = Episode(runtime, task, preflight.image, solver.harness, log_dir)
        ended = drive_episode(episode, solver.make_policy(seed))
        record = AttemptRecord(
            attempt=number,
            seed=seed,
            reward=ended.reward,
            turns=ended.turns,
            policy_replies=sum(1 for m in ended.transcript if m.get("role") == "assistant"),
            commands=[command for turn in episode.turns for command in turn.commands],
            infra_error=ended.infra_error,
            policy_error=ended.policy_error,
            seconds=round(ended.seconds, 3),
            log_dir=str(log_dir),
        )
        result.attempts.append(record)
        save()
        say(f"{result.id}: attempt {number}: " + _describe(record))
        if not ended.success:
            continue
        passed += 1
        provenance = Provenance(
            model=solver.model,
            endpoint=solver.endpoint,
            seed=seed,
            attempt=number,
            date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            factory_version=__version__,
            reward=ended.reward or 0.0,
        )
        try:
            commands = episode_commands(ended.transcript, solver.harness.action_format)
        except NotScriptableError as exc:
            record.note = str(exc)
            save()
            continue
        script = solve_script(commands, provenance)
        where = out / "candidates" / result.id / f"attempt-{number}"
        staged = stage_candidate(task.root, script, where)
        record.candidate = str(staged)
        say(f"{result.id}: attempt {number} passed the verifier; certifying its "
            f"{len(commands)} commands as solution/solve.sh ({repeats} repeats"
            f"{', probes' if probes else ''})")  # fmt: skip
        verdict = _validator(
            executor, out / "certify" / result.id / f"attempt-{number}", repeats, probes
        ).validate(staged)
        record.certification = verdict
        save()
        if verdict.outcome is Outcome.VALID:
            result.solution = str(install_solution(task.root, script))
            result.provenance = provenance
            result.content_hash = verdict.content_hash
            result.outcome = SolveOutcome.SOLVED
            result.reason = (
                f"attempt {number} of {attempts} passed the verifier and its {len(commands)} "
                f"commands certified valid ({verdict.reason}); installed {result.solution}"
            )
            return
        say(f"{result.id}: candidate of attempt {number} did not certify: "
            f"{verdict.outcome.value}: {verdict.reason}")  # fmt: skip
    result.outcome, result.reason = _verdict(
        result.attempts, passed, attempts, solver.harness.max_turns
    )


def _validator(executor: Executor, out: Path, repeats: int, probes: bool = False) -> Validator:
    """A validator on the run's executor (closing it leaves the executor open); ``force``:
    a staged candidate is always checked afresh."""
    return Validator(executor.runtime, out, repeats=repeats, probes=probes, force=True,
                     executor=executor)  # fmt: skip


def _describe(record: AttemptRecord) -> str:
    if record.infra_error:
        return f"lost to infrastructure: {record.infra_error}"
    said = f"reward {record.reward:g} after {record.turns} turns, {record.policy_replies} " \
        f"policy replies ({record.seconds:.1f}s)"  # fmt: skip
    if record.policy_error:
        said += f"; {record.policy_error}"
    return said


def _verdict(
    records: list[AttemptRecord], passed: int, attempts: int, max_turns: int
) -> tuple[SolveOutcome, str]:
    """The outcome of a task whose attempts all ran without a certified candidate."""
    lost = [r for r in records if r.infra_error]
    if passed:
        notes = [_why_not(r) for r in records if r.reward is not None and r.reward >= 1]
        return SolveOutcome.NOT_CERTIFIED, (
            f"{passed} of {attempts} attempts passed the verifier but no candidate certified "
            f"(first: {notes[0]}); nothing installed"
        )
    if lost and len(lost) == len(records):
        return SolveOutcome.INFRA_ERROR, (
            f"all {attempts} attempts were lost to infrastructure (last: {lost[-1].infra_error})"
        )
    rewards = ",".join("none" if r.reward is None else f"{r.reward:g}" for r in records)
    return SolveOutcome.UNSOLVED, (
        f"no attempt passed the verifier (rewards {rewards} in {len(records)} attempts of up "
        f"to {max_turns} turns); raise --attempts or --max-turns, or use a stronger model"
    )


def _why_not(record: AttemptRecord) -> str:
    """Why a passing attempt's candidate was not installed."""
    if record.note:
        return record.note
    verdict = record.certification
    return f"{verdict.outcome.value}: {verdict.reason}" if verdict else "not certified"


def run_solve(
    task_dirs: list[Path],
    executor: Executor,
    out: Path,
    *,
    base_url: str | None,
    model: str | None,
    api_key_env: str = "OPENAI_API_KEY",
    attempts: int = 3,
    max_turns: int = 20,
    command_timeout: float = 60.0,
    temperature: float = 0.7,
    max_tokens: int | None = None,
    seed: int = 0,
    action_format: ActionFormat | None = None,
    repeats: int = 2,
    probes: bool = True,
    say: Say = lambda _m: None,
) -> SolveReport:
    """``factory solve``: the tasks under ``task_dirs`` attempted by ``model`` at ``base_url``
    (replies cached in ``OUT/llm-cache``), on ``executor``; it acts with native tool calls
    unless ``action_format`` says fenced, and answers in up to ``max_tokens`` (512) a reply."""
    from factory.tasks.model import discover_task_dirs

    if not base_url or not model:
        raise FactoryError(
            "factory solve needs the agent's endpoint: --base-url URL (OpenAI-compatible, "
            "e.g. http://127.0.0.1:8000/v1) and --model NAME"
        )
    harness = HarnessConfig(
        max_turns=max_turns,
        command_timeout_sec=command_timeout,
        action_format=action_format or ActionFormat.TOOLS,
    )
    solver = Solver.endpoint_policy(
        base_url=base_url,
        model=model,
        harness=harness,
        api_key_env=api_key_env,
        temperature=temperature,
        max_tokens=max_tokens or 512,
        seed=seed,
        cache_dir=out / "llm-cache",
    )
    dirs = discover_task_dirs(task_dirs)
    if not dirs:
        raise FactoryError(f"no task directories under {', '.join(map(str, task_dirs))}")
    return solve_tasks(
        dirs, solver, executor, out, attempts=attempts, repeats=repeats, probes=probes, say=say
    )
