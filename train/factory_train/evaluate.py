"""Evaluation during training: k episodes per held-out task, pass@1 and pass@k per family (the
summary is factory's, :func:`factory.agent.evaluate.summarise`, as in ``factory eval``)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from factory.agent.evaluate import summarise
from factory.agent.harness import Episode, HarnessConfig
from factory.agent.suite import SuiteTask


def evaluate_tasks(
    engine,
    runtime,
    tasks: list[SuiteTask],
    images: dict[str, str],
    harness: HarnessConfig,
    *,
    k: int,
    log_dir: Path,
) -> dict:
    """Run ``k`` episodes of every task (batched) and summarise per family."""
    episodes, owners = [], []
    for index, entry in enumerate(tasks):
        for _ in range(k):
            episodes.append(Episode(runtime, entry.task, images[entry.task.id], harness, log_dir))
            owners.append(index)
    rollouts, stats = engine.run(episodes, owners) if episodes else ([], {})
    per_task: dict[int, list[float | None]] = defaultdict(list)
    for rollout in rollouts:
        per_task[rollout.group].append(rollout.episode.reward)
    summary = summarise(
        [(tasks[index].family, rewards) for index, rewards in per_task.items()],
        k,
        tokens_per_sec=stats.get("generated_tokens", 0) / max(stats.get("generate_sec", 0), 1e-9),
    )
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "eval.json").write_text(json.dumps(summary, indent=2))
    return summary
