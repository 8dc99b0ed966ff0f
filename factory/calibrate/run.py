"""The calibration job: measure, stamp, retire, regenerate, rebuild the manifest.

1. Every task in ``SUITE/tasks`` (or ``SUITE``) gets a pass rate: from the journal when it
   holds one for this model, k and content, otherwise from k fresh episodes.
2. The rate and its verdict against the band are stamped into the task's
   ``[metadata.factory]`` (``pass_rate``, ``calibration_k``, ``calibration_model``,
   ``calibration_verdict``); too-easy tasks (and too-hard ones with ``retire_too_hard``)
   move to ``SUITE/retired/``.
3. With ``regenerate`` (generated suites only): leaves with fewer in-band tasks than their
   quota get new candidates (:mod:`factory.calibrate.regenerate`), which are certified, then
   calibrated and judged in turn; ``rounds`` times at most.
4. ``suite.json`` is rebuilt from the candidates' records (coverage shows the retired ones).
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.agent.passk import Metric, OverTasks, Trials, over_tasks, pass_at_k, pass_hat_k
from factory.agent.policy import PolicyChoice
from factory.agent.runners import EpisodeRunner, Job
from factory.calibrate.band import IN_BAND, TOO_EASY, TOO_HARD, Band, retires
from factory.calibrate.journal import (
    RETIREMENT_FILE,
    CalibrationRecord,
    Journal,
    calibration_hash,
    record_from_rewards,
)
from factory.calibrate.suite import SuiteFolder, SuiteTask
from factory.errors import FactoryError
from factory.executor import Executor, LocalExecutor
from factory.generate.backends import LlmOptions
from factory.generate.results import ACCEPTED, CandidateResult
from factory.runtime import DockerRuntime

KEPT, RETIRED, ERROR = "kept", "retired", "error"


@dataclass
class TaskOutcome:
    key: str
    leaf: str
    difficulty: str
    pass_rate: float | None = None
    episodes: int = 0
    successes: int = 0
    pass_at_k: float | None = None
    """pass@k of the task (:mod:`factory.agent.passk`); None with fewer than k scored episodes."""
    pass_hat_k: float | None = None
    """pass^k (all k succeed); None with fewer than k scored episodes."""
    verdict: str | None = None
    action: str = ERROR
    """kept, retired or error (no pass rate: image build failed, every episode lost)."""
    new: bool = False
    """Made by --regenerate in this run."""
    cached: bool = False
    """The rate came from the journal."""
    error: str | None = None


@dataclass
class CalibrationSummary:
    suite: Path
    model: str
    k: int
    band: Band
    retire_too_hard: bool
    tasks: list[TaskOutcome] = field(default_factory=list)
    regenerated: list[CandidateResult] = field(default_factory=list)
    flake: list = field(default_factory=list)
    seconds: float = 0.0
    retired_before: int = 0
    """Tasks earlier runs (e.g. an interrupted one) retired: in no histogram of this run."""

    @property
    def before(self) -> list[float]:
        """Pass rates of the suite's tasks as they were (regenerated ones left out)."""
        return [t.pass_rate for t in self.tasks if not t.new and t.pass_rate is not None]

    @property
    def after(self) -> list[float]:
        """Pass rates of the tasks the suite holds now."""
        return [t.pass_rate for t in self.tasks if t.action == KEPT and t.pass_rate is not None]

    @property
    def retired(self) -> list[TaskOutcome]:
        return [t for t in self.tasks if t.action == RETIRED]

    def over_tasks(self, metric: Metric) -> OverTasks:
        """pass@k or pass^k over the tasks measured in this run (regenerated ones too; tasks
        with fewer than k scored episodes left out and counted)."""
        trials = [Trials(t.episodes, t.successes) for t in self.tasks if t.pass_rate is not None]
        return over_tasks(metric, trials, self.k)

    def to_json(self) -> dict:
        return {
            "suite": str(self.suite),
            "model": self.model,
            "k": self.k,
            "band": [self.band.low, self.band.high],
            "retire_too_hard": self.retire_too_hard,
            "seconds": round(self.seconds, 1),
            "retired_before": self.retired_before,
            "before": self.before,
            "after": self.after,
            Metric.PASS_AT.key(self.k): self.over_tasks(Metric.PASS_AT).value,
            Metric.PASS_HAT.key(self.k): self.over_tasks(Metric.PASS_HAT).value,
            "tasks_short_of_k": self.over_tasks(Metric.PASS_AT).short,
            "tasks": [t.__dict__ for t in self.tasks],
            "regenerated": [
                {"id": r.id, "status": r.status, "outcome": r.outcome, "difficulty": r.difficulty}
                for r in self.regenerated
            ],
            "flake": [
                {"task": f.task_dir.name, "flake_rate": f.flake_rate, "phases": len(f.scored)}
                for f in self.flake
            ],
        }


def _task_rates(record: CalibrationRecord, k: int) -> tuple[float | None, float | None]:
    """(pass@k, pass^k) of a task's record; (None, None) with fewer than k scored episodes."""
    if record.episodes < k:
        return None, None
    return (
        pass_at_k(record.episodes, record.successes, k),
        pass_hat_k(record.episodes, record.successes, k),
    )


class Events:
    """Progress hooks (the CLI shows them with rich); all optional."""

    def say(self, message: str) -> None: ...

    def measuring(self, tasks: int, cached: int, episodes: int) -> None: ...

    def task_done(self, outcome: TaskOutcome) -> None: ...

    def candidate_done(self, result: CandidateResult) -> None: ...


def fresh_dir(path: Path) -> Path:
    """An empty transcript folder (a killed run's partial episodes are dropped)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


class Calibrator:
    """The calibration job; episodes (and regenerated candidates) on ``executor`` (by default
    this machine's engine, ``jobs`` at a time)."""

    def __init__(
        self,
        suite: Path,
        runner: EpisodeRunner,
        runtime: DockerRuntime,
        *,
        k: int,
        band: Band,
        retire_too_hard: bool = False,
        regenerate: bool = False,
        rounds: int = 1,
        jobs: int = 2,
        backends: Callable | None = None,
        repair_rounds: int = 0,
        flake_runs: int = 0,
        events: Events | None = None,
        executor: Executor | None = None,
    ) -> None:
        if k < 1:
            raise FactoryError("--k must be at least 1")
        self.folder = SuiteFolder(suite)
        if regenerate and not self.folder.generated:
            raise FactoryError(
                f"{suite}: --regenerate needs a generated suite (suite.json, taxonomy.yaml), "
                "not a plain folder of tasks"
            )
        self.suite = suite
        self.runner = runner
        self.runtime = runtime
        self._owns_executor = executor is None
        self.executor = executor or LocalExecutor(runtime, jobs)
        self.site = self.executor.episode_site()
        self.k = k
        self.band = band
        self.retire_too_hard = retire_too_hard
        self.regenerate = regenerate
        self.rounds = rounds
        self.jobs = jobs
        self.backends = backends
        self.repair_rounds = repair_rounds
        self.flake_runs = flake_runs
        self.events = events or Events()
        self.journal = Journal(suite)
        self.images: dict[str, str] = {}
        self.generator = None

    # --- the job ----------------------------------------------------------------------
    def run(self) -> CalibrationSummary:
        started = time.monotonic()
        summary = CalibrationSummary(
            self.suite, self.runner.model_name, self.k, self.band, self.retire_too_hard
        )
        summary.retired_before = sum(
            1 for _ in self.folder.retired_dir.glob(f"*/{RETIREMENT_FILE}")
        )
        if self.folder.generated:
            self.generator = self._generator()
            self.folder.on_record = self._sync_record
        try:
            summary.tasks += self._calibrate(self.folder.tasks(), new=False)
            for _round in range(self.rounds if self.regenerate else 0):
                thin = self._thin_leaves(summary.tasks)
                if not thin:
                    break
                for item in thin:
                    self.events.say(
                        f"leaf {item.leaf.path}: {item.need} in-band task(s) missing; asking "
                        f"for {item.direction} ones ({item.difficulty.value})"
                    )
                from factory.calibrate.regenerate import regenerate

                made = regenerate(
                    self.generator, thin, jobs=self.jobs, on_result=self.events.candidate_done
                )
                summary.regenerated += made
                fresh = [
                    self.folder.load(self.suite / r.path) for r in made if r.status == ACCEPTED
                ]
                if not fresh:
                    break
                summary.tasks += self._calibrate(fresh, new=True)
            if self.flake_runs:
                summary.flake = self._flake([t for t in summary.tasks if t.action == KEPT])
        finally:
            if self.generator is not None:
                self.generator.write_manifest()
            self.site.close()
            if self._owns_executor:
                self.executor.close()
        summary.seconds = time.monotonic() - started
        self.journal.root.mkdir(parents=True, exist_ok=True)
        (self.journal.root / "summary.json").write_text(json.dumps(summary.to_json(), indent=2))
        return summary

    # --- measuring --------------------------------------------------------------------
    def _calibrate(self, entries: list[SuiteTask], *, new: bool) -> list[TaskOutcome]:
        model = self.runner.model_name
        policy = getattr(self.runner, "fingerprint", "")
        outcomes: dict[str, TaskOutcome] = {}
        by_key = {e.key: e for e in entries}
        hashes = {e.key: calibration_hash(e.path) for e in entries}
        todo: list[SuiteTask] = []
        for entry in entries:
            record = self.journal.fresh(entry.key, model, self.k, hashes[entry.key], policy)
            if record is None:
                todo.append(entry)
                continue
            outcomes[entry.key] = self._judge(entry, record, new=new, cached=True)
        self.events.measuring(len(entries), len(entries) - len(todo), len(todo) * self.k)
        jobs = []
        for entry, image in zip(todo, self._build(todo), strict=True):
            if isinstance(image, str):
                jobs.append(Job(entry.key, entry.task, image))
            else:
                outcome = TaskOutcome(entry.key, entry.leaf, entry.difficulty, new=new)
                outcome.error = f"image: {image}"
                outcomes[entry.key] = outcome
                self.events.task_done(outcome)

        def done(job: Job, results, seconds: float) -> None:
            rewards = [r.reward for r in results]
            record = record_from_rewards(
                job.key, model, self.k, hashes[job.key], rewards, seconds, policy
            )
            if record.pass_rate is not None:
                self.journal.put(record)  # an all-infra task is retried by the next run
            outcomes[job.key] = self._judge(by_key[job.key], record, new=new, cached=False)

        if jobs:
            log_dir = lambda key: fresh_dir(self.journal.episode_dir(key))  # noqa: E731
            self.runner.run(self.site, jobs, self.k, log_dir, done)
        return [outcomes[e.key] for e in entries if e.key in outcomes]

    def _build(self, entries: list[SuiteTask]) -> list[str | Exception]:
        images = self.site.images([entry.task for entry in entries])
        for entry, image in zip(entries, images, strict=True):
            if isinstance(image, str):
                self.images[entry.key] = image
        return list(images)

    def _judge(
        self, entry: SuiteTask, record: CalibrationRecord, *, new: bool, cached: bool
    ) -> TaskOutcome:
        outcome = TaskOutcome(
            entry.key,
            entry.leaf,
            entry.difficulty,
            record.pass_rate,
            record.episodes,
            record.successes,
            *_task_rates(record, self.k),
            new=new,
            cached=cached,
            error=record.error,
        )
        if record.pass_rate is None:
            self.events.task_done(outcome)
            return outcome
        outcome.verdict = self.band.verdict(record.pass_rate)
        self.folder.stamp(
            entry,
            pass_rate=record.pass_rate,
            episodes=record.episodes,
            model=record.model,
            verdict=outcome.verdict,
        )
        outcome.action = KEPT
        if retires(outcome.verdict, retire_too_hard=self.retire_too_hard):
            reason = (
                f"calibration: pass rate {record.pass_rate:.2f} over {record.episodes} "
                f"episodes of {record.model} is "
                + (
                    f"above the band {self.band}"
                    if outcome.verdict == TOO_EASY
                    else f"below the band {self.band}"
                )
            )
            self.folder.retire(
                entry,
                reason,
                {
                    "verdict": outcome.verdict,
                    "pass_rate": record.pass_rate,
                    "episodes": record.episodes,
                    "model": record.model,
                    "band": [self.band.low, self.band.high],
                    "leaf": entry.leaf,
                },
            )
            outcome.action = RETIRED
        self.events.task_done(outcome)
        return outcome

    # --- regeneration -----------------------------------------------------------------
    def _generator(self):
        from factory.generate.pipeline import SuiteGenerator, load_suite_manifest
        from factory.generate.taxonomy import load_taxonomy

        path = self.suite / "taxonomy.yaml"
        taxonomy = load_taxonomy(path)
        taxonomy.seed = load_suite_manifest(self.suite).seed  # `generate --seed` overrides it
        generator = SuiteGenerator(
            taxonomy,
            path.read_text(encoding="utf-8"),
            self.suite,
            self.runtime,
            self.backends or (lambda _leaf: None),
            jobs=self.jobs,
            repair_rounds=self.repair_rounds,
            executor=self.executor,
        )
        generator._prepare()  # load the candidates' records (states, dedup index)
        return generator

    def _sync_record(self, result: CandidateResult) -> None:
        """A record calibration rewrote (stamp, retirement): the manifest is built from these."""
        state = self.generator.states.get(result.taxonomy_path)
        if state is not None:
            state.results[result.attempt] = result

    def _thin_leaves(self, outcomes: list[TaskOutcome]):
        from factory.calibrate.regenerate import cite, thin_leaves

        in_band = Counter(o.leaf for o in outcomes if o.action == KEPT and o.verdict == IN_BAND)
        verdicts: dict[str, Counter] = {}
        seen = set()
        for outcome in outcomes:
            if outcome.verdict:
                verdicts.setdefault(outcome.leaf, Counter())[outcome.verdict] += 1
                seen.add(outcome.key)
        for note in sorted(self.folder.retired_dir.glob(f"*/{RETIREMENT_FILE}")):
            if note.parent.name in seen:
                continue
            try:
                data = json.loads(note.read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if data.get("leaf") and data.get("verdict") in (TOO_EASY, TOO_HARD):
                verdicts.setdefault(data["leaf"], Counter())[data["verdict"]] += 1
        thin = thin_leaves(list(self.generator.taxonomy.leaves()), in_band, verdicts)
        rates = {o.key: o.pass_rate for o in outcomes if o.pass_rate is not None}
        for item in thin:
            episodes = [
                (o.key, rates[o.key], record)
                for o in outcomes
                if o.leaf == item.leaf.path and o.key in rates
                for record in self.journal.transcripts(o.key)
            ]
            item.failed, item.solved = cite(episodes, solved=1 if item.direction == "harder" else 0)
        return thin

    # --- flake ------------------------------------------------------------------------
    def _flake(self, kept: list[TaskOutcome]):
        from factory.quality.flake import flake_checks
        from factory.tasks.model import load_task_config

        waiting = []
        for outcome in kept:
            path = self.folder.tasks_dir / outcome.key
            if not path.is_dir() or load_task_config(path / "task.toml").provenance.flake_runs:
                continue  # gone, or measured before
            waiting.append(self.folder.load(path))
        missing = [e for e in waiting if e.key not in self.images]
        self._build(missing)
        targets = [(e.path, self.images[e.key]) for e in waiting if e.key in self.images]
        if not targets:
            return []
        self.events.say(f"flake runs: {len(targets)} tasks x {self.flake_runs} perturbed runs")
        return flake_checks(
            self.runtime,
            targets,
            self.flake_runs,
            self.journal.root / "flake",
            jobs=self.jobs,
        )


@dataclass
class CalibrationPlan:
    """`factory calibrate` as one job: the policy and the generators are set up (and the
    settings checked) before any engine is touched; :meth:`run` measures on an executor."""

    suite: Path
    runner: EpisodeRunner
    options: dict[str, Any]
    """The :class:`Calibrator`'s options (k, band, retire_too_hard, regenerate, ...)."""
    backends: Callable | None = None

    @classmethod
    def load(
        cls,
        suite: Path,
        policy: PolicyChoice,
        *,
        llm: LlmOptions,
        say: Callable[[str], None] = print,
        **options: Any,
    ) -> CalibrationPlan:
        """``llm``: the generators' endpoint for the llm leaves of ``regenerate``;
        ``options``: the :class:`Calibrator`'s."""
        settings = policy.settings()
        backends = None
        if options.get("regenerate") and (suite / "taxonomy.yaml").is_file():
            from dataclasses import replace

            from factory.generate.backends import backend_factory
            from factory.generate.taxonomy import load_taxonomy

            llm = replace(llm, cache_dir=llm.cache_dir or suite / "llm-cache")
            backends = backend_factory(load_taxonomy(suite / "taxonomy.yaml"), None, llm)
        runner = policy.runner(settings, cache_dir=suite / "calibration" / "llm-cache", say=say)
        return cls(suite, runner, options, backends)

    def run(self, executor: Executor, events: Events | None = None) -> CalibrationSummary:
        try:
            calibrator = Calibrator(
                self.suite, self.runner, executor.runtime, jobs=executor.slots,
                backends=self.backends, events=events, executor=executor, **self.options,
            )  # fmt: skip
            return calibrator.run()
        finally:
            self.runner.close()
