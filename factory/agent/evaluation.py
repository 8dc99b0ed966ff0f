"""Evaluation: k episodes of a policy per task of a suite's split, pass@1, pass@k and pass^k per
family (held-out families by default). The summary goes to ``OUT/eval.json``, the transcripts to
``OUT/transcript.jsonl``.

* :func:`evaluate_suite` — ``factory eval``: any :class:`~factory.agent.runners.EpisodeRunner`
  (a local model through the trainer, or a model behind an endpoint), episodes' containers on
  an :class:`~factory.executor.Executor`, each task reported as soon as its episodes end.
* :func:`evaluate_endpoint` — the same for a model behind an OpenAI-compatible endpoint, from a
  client and a harness (fenced commands or native tool calls, as ``HarnessConfig`` says).
* :func:`evaluate_tasks` — the trainer's batched engine (``run(episodes, groups) -> (rollouts,
  stats)``) on tasks prepared by an episode backend (:mod:`factory.agent.backends`).

All share :func:`summarise`. Light to import (the CLI lists :class:`Split` in ``--help``);
torch-free.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from factory.agent.passk import Metric, Trials, over_tasks
from factory.errors import FactoryError

if TYPE_CHECKING:
    from factory.agent.backends import EpisodeBackend
    from factory.agent.harness import EpisodeResult, HarnessConfig
    from factory.agent.runners import EpisodeRunner, Job, PolicyConfig
    from factory.agent.suite import SuiteTask
    from factory.executor import Executor
    from factory.llm import LlmClient
    from factory.runtime import DockerRuntime


class Split(str, Enum):
    """``--split``: which of a suite's tasks are evaluated."""

    TEST = "test"
    """The held-out families (or tasks, with ``split: task``)."""
    TRAIN = "train"
    ALL = "all"


@dataclass
class SuiteSplit:
    """Which of a suite's tasks are evaluated, and how the suite is split into train and test."""

    which: Split = Split.TEST
    by: str = "family"
    """``family`` (whole families held out) or ``task``."""
    test_families: list[str] = field(default_factory=list)
    """Held-out families named outright (else ``test_fraction`` of them, drawn by ``seed``)."""
    test_fraction: float = 0.25
    seed: int = 0

    @classmethod
    def of(cls, config: PolicyConfig, which: Split | str = Split.TEST) -> SuiteSplit:
        """The split a policy's settings file (``train.yaml``) describes (the held-out draw
        seeded by ``split_seed``, else ``seed``)."""
        return cls(
            which=_split(which),
            by=config.split,
            test_families=list(config.test_families),
            test_fraction=config.test_fraction,
            seed=config.seed if config.split_seed is None else config.split_seed,
        )

    def parts(self, suite: Path) -> tuple[list[SuiteTask], list[SuiteTask]]:
        """The suite's (training, held-out) tasks."""
        from factory.agent.suite import load_suite_tasks

        return self._divide(load_suite_tasks(suite))

    def _divide(self, entries: list[SuiteTask]) -> tuple[list[SuiteTask], list[SuiteTask]]:
        from factory.agent.suite import split_suite

        return split_suite(
            entries,
            test_families=self.test_families,
            test_fraction=self.test_fraction,
            seed=self.seed,
            by=self.by,
        )

    def tasks(self, suite: Path) -> list[SuiteTask]:
        """The suite's tasks of this split. A test split that holds nothing out is an error
        that says how to get one, never a silent pass@1 of 0 over no tasks."""
        from factory.agent.suite import load_suite_tasks

        which = _split(self.which)
        entries = load_suite_tasks(suite)
        train, test = self._divide(entries)
        if which is Split.TEST and not test:
            families = sorted({e.family for e in train})
            how = (
                "the suite has one family, so a split by family holds nothing out: pass a "
                "config with `split: task` (e.g. -c examples/train.yaml, the one training used)"
                if len(families) == 1 and self.by == "family"
                else f"the split (by {self.by}, test_fraction {self.test_fraction}, "
                f"test_families {self.test_families}) holds nothing out: pass the training "
                "config"
            )
            raise FactoryError(f"{suite}: no held-out tasks to evaluate; {how}, or --split all")
        return {Split.TEST: test, Split.TRAIN: train, Split.ALL: entries}[which]


def _split(value: Split | str) -> Split:
    try:
        return Split(value)
    except ValueError:
        raise FactoryError(f"split must be test, train or all, not {value!r}") from None


@dataclass
class TaskScore:
    """One task's episodes, as the summary counts them."""

    key: str
    family: str
    rewards: list[float | None]
    """One per episode; None: an episode lost to infrastructure."""
    policy_failures: int = 0
    """Episodes whose own commands stopped or outlived their environment (they score 0)."""

    @classmethod
    def of(cls, key: str, family: str, results: list[EpisodeResult]) -> TaskScore:
        return cls(
            key, family, [r.reward for r in results], sum(1 for r in results if r.policy_error)
        )


def summarise(scores: list[TaskScore], k: int, *, tokens_per_sec: float = 0.0) -> dict:
    """The eval summary from each task's episodes: pass@1, pass@k and pass^k (see
    :mod:`factory.agent.passk`) per family and overall, each task's pass rate (``per_task``),
    episodes lost to infrastructure (left out of the rates) and episodes the policy broke
    (scored 0) counted. A task with fewer than k scored episodes (infrastructure losses) is
    left out of pass@k and pass^k and counted in ``tasks_short_of_k``; a figure over no task
    is None (not shown)."""
    families: dict[str, list[Trials]] = defaultdict(list)
    per_task: dict[str, float] = {}
    infra = episodes = policy = 0
    for score in scores:
        episodes += len(score.rewards)
        policy += score.policy_failures
        healthy = [r for r in score.rewards if r is not None]
        infra += len(score.rewards) - len(healthy)
        if not healthy:
            continue
        correct = sum(1 for r in healthy if r >= 1)
        per_task[score.key] = correct / len(healthy)
        families[score.family].append(Trials(len(healthy), correct))
    by_family = {name: _rates(trials, k) for name, trials in sorted(families.items())}
    overall = _rates([t for trials in families.values() for t in trials], k)
    return {
        "k": k,
        "tasks": overall.pop("tasks"),
        "episodes": episodes,
        "infra_failures": infra,
        "policy_failures": policy,
        **overall,
        "families": by_family,
        "per_task": per_task,
        "tokens_per_sec": tokens_per_sec,
    }


def _rates(trials: list[Trials], k: int) -> dict:
    """pass@1 (every task with a scored episode), pass@k and pass^k (tasks with k of them)."""
    at_k = over_tasks(Metric.PASS_AT, trials, k)
    return {
        "tasks": len(trials),
        "pass_at_1": _mean([t.c / t.n for t in trials]),
        Metric.PASS_AT.key(k): at_k.value,
        Metric.PASS_HAT.key(k): over_tasks(Metric.PASS_HAT, trials, k).value,
        "tasks_short_of_k": at_k.short,
    }


def evaluate_suite(
    suite: Path,
    runner: EpisodeRunner,
    executor: Executor,
    split: SuiteSplit,
    *,
    k: int = 4,
    out: Path,
    on_start: Callable[[int], None] = lambda _tasks: None,
    on_task: Callable[[str, list[float | None]], None] = lambda _id, _rewards: None,
) -> dict:
    """Evaluate ``runner``'s policy on the split; episodes' containers on ``executor``.
    ``on_start`` gets the number of tasks, ``on_task`` each task's id and rewards."""
    from factory.agent.runners import Job

    if k < 1:
        raise FactoryError("--k must be at least 1")
    tasks = split.tasks(suite)
    on_start(len(tasks))
    keys = _unique_keys([entry.task.id for entry in tasks])
    family = {key: entry.family for key, entry in zip(keys, tasks, strict=True)}
    scores: dict[str, TaskScore] = {}
    site = executor.episode_site()
    try:
        jobs = []
        images = site.images([entry.task for entry in tasks])
        for key, entry, image in zip(keys, tasks, images, strict=True):
            if isinstance(image, FactoryError):  # no environment: every episode is lost
                scores[key] = TaskScore(key, entry.family, [None] * k)
                on_task(key, scores[key].rewards)
            else:
                jobs.append(Job(key, entry.task, image))

        def done(job: Job, results: list[EpisodeResult], _seconds: float) -> None:
            scores[job.key] = TaskScore.of(job.key, family[job.key], results)
            on_task(job.key, scores[job.key].rewards)

        if jobs:
            runner.run(site, jobs, k, lambda _key: out, done)
    except BaseException:
        executor.cancel()
        raise
    finally:
        site.close()
    stats = runner.stats
    summary = summarise(
        [scores.get(key, TaskScore(key, family[key], [])) for key in keys],
        k,
        tokens_per_sec=stats.get("generated_tokens", 0) / max(stats.get("generate_sec", 0), 1e-9),
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval.json").write_text(json.dumps(summary, indent=2))
    return summary


def evaluate_endpoint(
    suite: Path,
    client: LlmClient,
    harness: HarnessConfig,
    *,
    runtime: DockerRuntime | None = None,
    executor: Executor | None = None,
    split: SuiteSplit | Split | str = Split.TEST,
    test_families: list[str] | None = None,
    test_fraction: float = 0.25,
    split_by: str = "family",
    seed: int = 0,
    k: int = 4,
    out: Path,
    jobs: int = 2,
    temperature: float = 0.7,
    max_tokens: int = 512,
    say: Callable[[str], None] = print,
    on_start: Callable[[int], None] = lambda _tasks: None,
    on_task: Callable[[str, list[float | None]], None] = lambda _id, _rewards: None,
) -> dict:
    """pass@1 and pass@k per family of the model behind ``client`` on a split of ``suite``, its
    episodes in ``harness``'s action format (fenced commands or native tool calls); transcripts
    and ``eval.json`` go to ``out``. The containers run on ``executor``, or on ``runtime``
    (``jobs`` episodes at a time) when no executor is given. ``split`` is a
    :class:`SuiteSplit`, or which tasks to take of the split the other arguments describe."""
    from factory.agent.runners import EndpointRunner
    from factory.executor import LocalExecutor

    if executor is None and runtime is None:
        raise FactoryError("evaluate_endpoint needs a runtime or an executor for the episodes")
    if isinstance(split, SuiteSplit):
        chosen = split
    else:
        chosen = SuiteSplit(_split(split), split_by, list(test_families or []), test_fraction, seed)
    where = executor or LocalExecutor(runtime, jobs)
    runner = EndpointRunner(
        client, harness, temperature=temperature, max_tokens=max_tokens, jobs=jobs, seed=seed
    )
    say(
        f"evaluating {client.settings.model} at {client.settings.base_url} ({chosen.which.value} "
        f"split, {k} episode(s) per task, {harness.action_format.value} actions)"
    )
    try:
        return evaluate_suite(
            suite, runner, where, chosen, k=k, out=out, on_start=on_start, on_task=on_task
        )
    finally:
        runner.close()
        if executor is None:
            where.close()


def evaluate_tasks(
    engine,
    backend: EpisodeBackend,
    tasks: list[SuiteTask],
    harness: HarnessConfig,
    *,
    k: int,
    log_dir: Path,
) -> dict:
    """Run ``k`` episodes of every task (prepared by ``backend``) with a batched engine and
    summarise per family (see :func:`summarise`)."""
    episodes, owners = [], []
    for index, entry in enumerate(tasks):
        for _ in range(k):
            episodes.append(backend.episode(entry, harness, log_dir))
            owners.append(index)
    rollouts, stats = engine.run(episodes, owners) if episodes else ([], {})
    results: dict[int, list[EpisodeResult]] = defaultdict(list)
    for rollout in rollouts:
        results[rollout.group].append(rollout.episode)
    keys = _unique_keys([entry.task.id for entry in tasks])
    summary = summarise(
        [TaskScore.of(keys[i], tasks[i].family, found) for i, found in results.items()],
        k,
        tokens_per_sec=stats.get("generated_tokens", 0) / max(stats.get("generate_sec", 0), 1e-9),
    )
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "eval.json").write_text(json.dumps(summary, indent=2))
    return summary


def _unique_keys(ids: list[str]) -> list[str]:
    seen: set[str] = set()
    keys = []
    for task_id in ids:
        key, n = task_id, 2
        while key in seen:
            key, n = f"{task_id}-{n}", n + 1
        seen.add(key)
        keys.append(key)
    return keys


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
