"""Episode runners: k episodes per task with a policy, the reward from the task's verifier.
Shared by ``factory eval`` (pass@k) and ``factory calibrate`` (pass rates).

* :class:`EndpointRunner` — a model behind an OpenAI-compatible endpoint, ``jobs`` episodes
  at a time in threads (each with its own sampling seed).
* A local model (a checkpoint folder, a .gguf or a known local name): batched generation with
  transformers, from the trainer (:func:`factory.trainer_plugin.load_trainer`).

:class:`factory.agent.policy.PolicyChoice` picks one from the command line.

Both report each task as soon as its k episodes are done (``on_task``), so the caller can
journal it or advance a progress bar: a killed run loses at most the tasks in flight. Where the
episodes' containers live is the caller's :class:`~factory.executor.EpisodeSite`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from factory.agent.actions import ActionFormat
from factory.agent.harness import EpisodeResult, HarnessConfig
from factory.errors import FactoryError
from factory.tasks.model import Task

if TYPE_CHECKING:
    from factory.executor import EpisodeSite


class PolicyConfig(Protocol):
    """What factory reads of a policy's settings (the trainer's ``train.yaml``): the policy,
    its sampling, the episode harness and the train/test split."""

    model: str
    seed: int
    temperature: float
    max_new_tokens: int
    max_turns: int
    command_timeout_sec: float
    max_observation_chars: int
    action_format: str
    environment: str
    """Where a local model's episodes run: ``docker`` or ``in-process`` (tool tasks only)."""
    split: str
    test_families: list[str]
    test_fraction: float
    split_seed: int | None
    """Seed of the held-out draw (None: ``seed``)."""


@dataclass
class Job:
    key: str
    """The task's name in the run (calibrate: its directory name)."""
    task: Task
    image: str


TaskDone = Callable[[Job, list[EpisodeResult], float], None]
"""(job, its k episode results, seconds)."""


class EpisodeRunner(Protocol):
    model_name: str
    fingerprint: str
    """:func:`policy_fingerprint` of the sampling and harness settings."""
    stats: dict[str, float]
    """Totals over the episodes run so far (``generated_tokens``, ``generate_sec``...)."""

    def run(
        self,
        site: EpisodeSite,
        jobs: list[Job],
        k: int,
        log_dir: Callable[[str], Path],
        on_task: TaskDone,
    ) -> None:
        """``k`` episodes of every job at ``site``; transcripts into ``log_dir(job.key)``."""
        ...

    def close(self) -> None: ...


def policy_fingerprint(settings: dict) -> str:
    """A short hash of the settings that change a policy's pass rate besides its weights."""
    blob = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def harness_config(
    config: PolicyConfig, action_format: ActionFormat | None = None
) -> HarnessConfig:
    """The episode harness the settings file describes."""
    return HarnessConfig(
        max_turns=config.max_turns,
        command_timeout_sec=config.command_timeout_sec,
        max_observation_chars=config.max_observation_chars,
        action_format=action_format or ActionFormat(config.action_format),
    )


class EndpointRunner:
    """Episodes against an OpenAI-compatible endpoint (see :mod:`factory.agent.endpoint`)."""

    def __init__(
        self,
        client,
        harness: HarnessConfig,
        *,
        temperature: float = 0.7,
        max_tokens: int = 512,
        jobs: int = 2,
        seed: int = 0,
    ) -> None:
        self.client = client
        self.model_name = client.settings.model
        self.harness = harness
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.jobs = max(1, jobs)
        self.seed = seed
        self.stats: dict[str, float] = {}
        self.fingerprint = policy_fingerprint(
            {
                "endpoint": client.settings.base_url,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "seed": seed,
                "harness": harness.__dict__,
            }
        )

    def run(self, site, jobs, k, log_dir, on_task) -> None:
        from factory.agent.endpoint import EndpointPolicy, episode_seed
        from factory.agent.harness import run_episode

        if site.runtime is None:
            raise FactoryError(
                "a policy behind an endpoint (--base-url) runs its episodes with --executor "
                "local; --executor ray hosts the episodes of a local model"
            )
        pending: dict[str, list[EpisodeResult]] = {job.key: [] for job in jobs}
        started = {job.key: time.monotonic() for job in jobs}
        folders = {job.key: log_dir(job.key) for job in jobs}

        def one(job: Job, index: int) -> EpisodeResult:
            policy = EndpointPolicy(
                self.client,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=episode_seed(job.key, index, self.seed),
            )
            return run_episode(
                site.runtime, job.task, job.image, policy, self.harness, folders[job.key]
            )

        with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="episode") as pool:
            futures = {pool.submit(one, job, index): job for job in jobs for index in range(k)}
            try:
                for future in as_completed(futures):
                    job = futures[future]
                    pending[job.key].append(future.result())
                    if len(pending[job.key]) == k:
                        on_task(job, pending[job.key], time.monotonic() - started[job.key])
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def close(self) -> None:
        pass
