"""Pass-rate estimators: k episodes per task with a policy, reward from the task's verifier.

* :class:`LocalEstimator` — a local model (checkpoint folder, .gguf or known name, resolved
  and loaded as `factory eval` does), batched generation with transformers on the CPU, the
  episodes of a few tasks stepped together (:class:`factory_train.rollout.RolloutEngine`).
* :class:`EndpointEstimator` — a model behind an OpenAI-compatible endpoint, ``jobs``
  episodes at a time in threads.

Both report each task as soon as its k episodes are done (``on_task``), so the caller can
journal it: a killed run loses at most the tasks in flight.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from factory.agent.endpoint import episode_seed
from factory.agent.harness import Episode, EpisodeResult, HarnessConfig
from factory.calibrate.journal import policy_fingerprint
from factory.runtime import DockerRuntime
from factory.tasks.model import Task


@dataclass
class Job:
    key: str
    """The task's directory name."""
    task: Task
    image: str


TaskDone = Callable[[Job, list[EpisodeResult], float], None]
"""(job, its k episode results, seconds)."""


class Estimator(Protocol):
    model_name: str
    fingerprint: str
    """:func:`policy_fingerprint` of the sampling and harness settings."""

    def estimate(
        self,
        runtime: DockerRuntime,
        jobs: list[Job],
        k: int,
        log_dir: Callable[[str], Path],
        on_task: TaskDone,
    ) -> None: ...

    def close(self) -> None: ...


def _fresh_dir(path: Path) -> Path:
    """An empty transcript folder (a killed run's partial episodes are dropped)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


class EndpointEstimator:
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
        self.fingerprint = policy_fingerprint(
            {
                "endpoint": client.settings.base_url,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "seed": seed,
                "harness": harness.__dict__,
            }
        )

    def estimate(self, runtime, jobs, k, log_dir, on_task) -> None:
        from factory.agent.endpoint import EndpointPolicy, run_policy_episode

        pending = {job.key: [] for job in jobs}
        started = {job.key: time.monotonic() for job in jobs}
        folders = {job.key: _fresh_dir(log_dir(job.key)) for job in jobs}

        def one(job: Job, index: int) -> EpisodeResult:
            policy = EndpointPolicy(
                self.client,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=episode_seed(job.key, index, self.seed),
            )
            return run_policy_episode(
                runtime, job.task, job.image, policy, self.harness, folders[job.key]
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


class LocalEstimator:
    """A local model on this machine (CPU, or the GPU when there is one), batched."""

    def __init__(self, config, *, batch_episodes: int = 16, say=print) -> None:
        self.config = config
        self.model_name = config.model
        self.batch_episodes = max(1, batch_episodes)
        self.say = say
        self.engine = None
        self.harness: HarnessConfig | None = None
        self.fingerprint = policy_fingerprint(
            config.model_dump(
                include={
                    "seed",
                    "temperature",
                    "top_p",
                    "top_k",
                    "max_new_tokens",
                    "max_episode_tokens",
                    "max_turns",
                    "reply_prefix",
                    "action_format",
                    "command_timeout_sec",
                    "max_observation_chars",
                    "dtype",
                }
            )
        )

    def setup(self) -> None:
        import torch
        from factory_train.run_eval import rollout_engine
        from factory_train.trainer import harness_config

        torch.manual_seed(self.config.seed)
        self.engine = rollout_engine(self.config, say=self.say)
        self.harness = harness_config(self.config)

    def estimate(self, runtime, jobs, k, log_dir, on_task) -> None:
        if self.engine is None:
            self.setup()
        per_chunk = max(1, self.batch_episodes // k)
        for start in range(0, len(jobs), per_chunk):
            chunk = jobs[start : start + per_chunk]
            started = time.monotonic()
            episodes, groups = [], []
            for index, job in enumerate(chunk):
                folder = _fresh_dir(log_dir(job.key))
                for _ in range(k):
                    episodes.append(Episode(runtime, job.task, job.image, self.harness, folder))
                    groups.append(index)
            rollouts, _stats = self.engine.run(episodes, groups)
            seconds = (time.monotonic() - started) / len(chunk)
            for index, job in enumerate(chunk):
                results = [r.episode for r in rollouts if r.group == index]
                on_task(job, results, seconds)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None
