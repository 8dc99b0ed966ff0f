"""Evaluation: k episodes per held-out task, pass@1 and pass@k per family."""

from __future__ import annotations

import json
from collections import defaultdict
from math import comb
from pathlib import Path

from factory.agent.backends import EpisodeBackend
from factory.agent.harness import HarnessConfig
from factory.agent.suite import SuiteTask


def pass_at_k(n: int, correct: int, k: int) -> float:
    """Unbiased estimator of pass@k from n samples with ``correct`` successes."""
    if n - correct < k:
        return 1.0
    return 1.0 - comb(n - correct, k) / comb(n, k)


def evaluate_tasks(
    engine,
    backend: EpisodeBackend,
    tasks: list[SuiteTask],
    harness: HarnessConfig,
    *,
    k: int,
    log_dir: Path,
) -> dict:
    """Run ``k`` episodes of every (prepared) task, batched, and summarise per family.
    Infrastructure failures are left out of pass@k and counted; episodes whose commands
    stopped their own environment score 0 and are counted too."""
    episodes, owners = [], []
    for index, entry in enumerate(tasks):
        for _ in range(k):
            episodes.append(backend.episode(entry, harness, log_dir))
            owners.append(index)
    rollouts, stats = engine.run(episodes, owners) if episodes else ([], {})
    per_task: dict[int, list[float | None]] = defaultdict(list)
    for rollout in rollouts:
        per_task[rollout.group].append(rollout.episode.reward)
    policy_failures = sum(1 for r in rollouts if r.episode.policy_error)
    families: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"p1": [], "pk": []})
    per_task_pass: dict[str, float] = {}
    infra = 0
    for index, rewards in per_task.items():
        healthy = [r for r in rewards if r is not None]
        infra += len(rewards) - len(healthy)
        if not healthy:
            continue
        correct = sum(1 for r in healthy if r >= 1)
        family = families[tasks[index].family]
        family["p1"].append(correct / len(healthy))
        per_task_pass[tasks[index].task.id] = correct / len(healthy)
        family["pk"].append(pass_at_k(len(healthy), correct, min(k, len(healthy))))
    by_family = {
        name: {"tasks": len(v["p1"]), "pass_at_1": _mean(v["p1"]), f"pass_at_{k}": _mean(v["pk"])}
        for name, v in sorted(families.items())
    }
    all_p1 = [x for v in families.values() for x in v["p1"]]
    all_pk = [x for v in families.values() for x in v["pk"]]
    summary = {
        "k": k,
        "tasks": len(all_p1),
        "episodes": len(rollouts),
        "infra_failures": infra,
        "policy_failures": policy_failures,
        "pass_at_1": _mean(all_p1),
        f"pass_at_{k}": _mean(all_pk),
        "families": by_family,
        "per_task": per_task_pass,
        "tokens_per_sec": stats.get("generated_tokens", 0)
        / max(stats.get("generate_sec", 0), 1e-9),
    }
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "eval.json").write_text(json.dumps(summary, indent=2))
    return summary


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
