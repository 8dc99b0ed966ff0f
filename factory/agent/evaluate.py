"""``factory eval``: k episodes of a policy per task of a suite's split, pass@1 and pass@k per
family (held-out families by default). The summary goes to ``OUT/eval.json``, the transcripts to
``OUT/transcript.jsonl``."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from enum import Enum
from math import comb
from pathlib import Path
from typing import TYPE_CHECKING

from factory.errors import FactoryError

if TYPE_CHECKING:  # light to import: the CLI lists Split in --help
    from factory.agent.harness import EpisodeResult
    from factory.agent.runners import EpisodeRunner, Job, PolicyConfig
    from factory.agent.suite import SuiteTask
    from factory.executor import Executor


class Split(str, Enum):
    """``--split``: which of a suite's tasks are evaluated."""

    TEST = "test"
    """The held-out families (or tasks, with ``split: task``)."""
    TRAIN = "train"
    ALL = "all"


def pass_at_k(n: int, correct: int, k: int) -> float:
    """Unbiased estimator of pass@k from n samples with ``correct`` successes."""
    if n - correct < k:
        return 1.0
    return 1.0 - comb(n - correct, k) / comb(n, k)


def summarise(
    rewards: list[tuple[str, list[float | None]]], k: int, *, tokens_per_sec: float = 0.0
) -> dict:
    """The eval summary from (family, episode rewards) per task; a reward of None is an
    episode lost to infrastructure, left out of the rates and counted."""
    families: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"p1": [], "pk": []})
    infra = episodes = 0
    for family, task_rewards in rewards:
        episodes += len(task_rewards)
        healthy = [r for r in task_rewards if r is not None]
        infra += len(task_rewards) - len(healthy)
        if not healthy:
            continue
        correct = sum(1 for r in healthy if r >= 1)
        families[family]["p1"].append(correct / len(healthy))
        families[family]["pk"].append(pass_at_k(len(healthy), correct, min(k, len(healthy))))
    by_family = {
        name: {"tasks": len(v["p1"]), "pass_at_1": _mean(v["p1"]), f"pass_at_{k}": _mean(v["pk"])}
        for name, v in sorted(families.items())
    }
    all_p1 = [x for v in families.values() for x in v["p1"]]
    all_pk = [x for v in families.values() for x in v["pk"]]
    return {
        "k": k,
        "tasks": len(all_p1),
        "episodes": episodes,
        "infra_failures": infra,
        "pass_at_1": _mean(all_p1),
        f"pass_at_{k}": _mean(all_pk),
        "families": by_family,
        "tokens_per_sec": tokens_per_sec,
    }


def split_tasks(suite: Path, config: PolicyConfig, split: Split) -> list[SuiteTask]:
    """The suite's tasks of ``split`` (the split the settings describe)."""
    from factory.agent.suite import load_suite_tasks, split_suite

    entries = load_suite_tasks(suite)
    train, test = split_suite(
        entries,
        test_families=config.test_families,
        test_fraction=config.test_fraction,
        seed=config.seed,
        by=config.split,
    )
    return {Split.TEST: test, Split.TRAIN: train, Split.ALL: entries}[Split(split)]


def evaluate_suite(
    suite: Path,
    runner: EpisodeRunner,
    executor: Executor,
    config: PolicyConfig,
    *,
    split: Split = Split.TEST,
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
    tasks = split_tasks(suite, config, split)
    on_start(len(tasks))
    keys = _unique_keys([entry.task.id for entry in tasks])
    family = {key: entry.family for key, entry in zip(keys, tasks, strict=True)}
    rewards: dict[str, list[float | None]] = {}
    site = executor.episode_site()
    try:
        jobs = []
        images = site.images([entry.task for entry in tasks])
        for key, entry, image in zip(keys, tasks, images, strict=True):
            if isinstance(image, FactoryError):  # no environment: every episode is lost
                rewards[key] = [None] * k
                on_task(key, rewards[key])
            else:
                jobs.append(Job(key, entry.task, image))

        def done(job: Job, results: list[EpisodeResult], _seconds: float) -> None:
            rewards[job.key] = [r.reward for r in results]
            on_task(job.key, rewards[job.key])

        if jobs:
            runner.run(site, jobs, k, lambda _key: out, done)
    except BaseException:
        executor.cancel()
        raise
    finally:
        site.close()
    stats = runner.stats
    summary = summarise(
        [(family[key], rewards.get(key, [])) for key in keys],
        k,
        tokens_per_sec=stats.get("generated_tokens", 0) / max(stats.get("generate_sec", 0), 1e-9),
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval.json").write_text(json.dumps(summary, indent=2))
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
