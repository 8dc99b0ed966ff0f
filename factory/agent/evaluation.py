"""Evaluation: k episodes per task, pass@1 and pass@k per family, and a policy behind an
endpoint as the engine that runs them.

:func:`evaluate_tasks` takes any engine with ``run(episodes, groups) -> (rollouts, stats)``:
the trainer's batched local-model :class:`factory_train.rollout.RolloutEngine`, or
:class:`EndpointEngine` here (one conversation per episode against an OpenAI-compatible
endpoint, in threads). :func:`evaluate_endpoint` is `factory eval` against an endpoint:
split, images, episodes (fenced commands or tool calls, as ``HarnessConfig`` says), summary.
Torch-free.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from math import comb
from pathlib import Path

from factory.agent.backends import DockerEpisodes, EpisodeBackend
from factory.agent.endpoint import EndpointPolicy, drive_episode, episode_seed
from factory.agent.harness import Episode, EpisodeResult, HarnessConfig
from factory.agent.suite import SuiteTask, load_suite_tasks, split_suite
from factory.errors import FactoryError
from factory.llm import LlmClient


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


@dataclass
class PolicyRollout:
    """One finished episode and the task group it belongs to."""

    episode: EpisodeResult
    group: int


class EndpointEngine:
    """Runs episodes against an endpoint policy, ``jobs`` at a time; each episode samples with
    its own seed (task id, index within its group), so reruns hit the response cache."""

    def __init__(
        self,
        client: LlmClient,
        *,
        temperature: float = 0.7,
        max_tokens: int = 512,
        seed: int = 0,
        jobs: int = 2,
    ) -> None:
        self.client = client
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.jobs = max(1, jobs)

    def run(
        self, episodes: list[Episode], groups: list[int]
    ) -> tuple[list[PolicyRollout], dict[str, float]]:
        started = time.monotonic()
        index_in_group: list[int] = []
        seen: dict[int, int] = defaultdict(int)
        for group in groups:
            index_in_group.append(seen[group])
            seen[group] += 1

        def one(position: int) -> EpisodeResult:
            episode = episodes[position]
            seed = episode_seed(episode.task.id, index_in_group[position], self.seed)
            policy = EndpointPolicy(
                self.client, temperature=self.temperature, max_tokens=self.max_tokens, seed=seed
            )
            return drive_episode(episode, policy)

        with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="episode") as pool:
            results = list(pool.map(one, range(len(episodes))))
        rollouts = [PolicyRollout(r, g) for r, g in zip(results, groups, strict=True)]
        return rollouts, {"rollout_sec": time.monotonic() - started}


def evaluate_endpoint(
    suite: Path,
    client: LlmClient,
    harness: HarnessConfig,
    *,
    runtime,
    split: str = "test",
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
) -> dict:
    """pass@1 and pass@k per family of the model behind ``client`` on a split of ``suite``;
    transcripts and ``eval.json`` go to ``out``. ``runtime`` runs the containers."""
    entries = load_suite_tasks(suite)
    train, test = split_suite(
        entries,
        test_families=list(test_families or []),
        test_fraction=test_fraction,
        seed=seed,
        by=split_by,
    )
    if split not in ("test", "train", "all"):
        raise FactoryError(f"split must be test, train or all, not {split!r}")
    tasks = {"test": test, "train": train, "all": entries}[split]
    say(
        f"evaluating {client.settings.model} at {client.settings.base_url} on {len(tasks)} "
        f"tasks x {k} episodes ({harness.action_format.value})"
    )
    backend = DockerEpisodes(runtime)  # the caller owns and closes the runtime
    backend.prepare(tasks)
    engine = EndpointEngine(
        client, temperature=temperature, max_tokens=max_tokens, seed=seed, jobs=jobs
    )
    return evaluate_tasks(engine, backend, tasks, harness, k=k, log_dir=out)
