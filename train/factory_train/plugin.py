"""The trainer's side of factory's seam (:mod:`factory.trainer_plugin`): what ``factory train``,
``factory eval`` and ``factory calibrate`` ask of the trainer. factory loads this module by name
and calls nothing else of ``factory_train``; torch loads only when a method needs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from factory.agent.backends import site_episode
from factory.agent.runners import Job, harness_config, policy_fingerprint
from factory.errors import FactoryError
from factory.executor import EpisodeSite
from factory.trainer_plugin import INSTALL_HINT
from factory_train.config import TrainConfig, load_train_config

#: The settings that change what a local policy does (its pass rate) besides its weights.
FINGERPRINT_FIELDS = {
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


def load_config(path: Path | None, **overrides: object) -> TrainConfig:
    return load_train_config(path, **overrides)


def require_torch() -> None:
    """A one-line error naming the missing package when the ``train`` extra is not installed."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise FactoryError(
            f"the trainer needs its extra ({exc.name} is missing): {INSTALL_HINT}"
        ) from None


def rollout_engine(config: TrainConfig, *, concurrency: int, say: Callable[[str], None]):
    """The policy ``config.model`` loaded on this machine (the GPU when there is one, in the
    training precision) behind a batched rollout engine that samples as training does."""
    import torch

    from factory_train.models import load_policy, resolve_model
    from factory_train.precision import pick_device
    from factory_train.trainer import sampling_engine

    torch.manual_seed(config.seed)
    device, precision = pick_device(config.dtype)
    model, tokenizer = load_policy(
        resolve_model(config.model), device=device, dtype=precision.frozen
    )
    model.eval()
    say(f"policy {config.model} loaded ({device})")
    return sampling_engine(model, tokenizer, config, precision, concurrency=concurrency)


class LocalRunner:
    """Episodes of a local model: the episodes of a few tasks stepped together, one batched
    ``generate`` per turn (:class:`factory_train.rollout.RolloutEngine`)."""

    def __init__(
        self, config: TrainConfig, *, jobs: int = 2, batch_episodes: int = 16, say=print
    ) -> None:
        self.config = config
        self.model_name = config.model
        self.jobs = max(1, jobs)
        self.batch_episodes = max(1, batch_episodes)
        self.say = say
        self.engine = None
        self.harness = harness_config(config)
        self.stats: dict[str, float] = {}
        self.fingerprint = policy_fingerprint(config.model_dump(include=FINGERPRINT_FIELDS))

    def run(self, site: EpisodeSite, jobs: list[Job], k: int, log_dir, on_task) -> None:
        """See :class:`factory.agent.runners.EpisodeRunner`."""
        if self.engine is None:
            concurrency = max(self.jobs, site.slots)
            self.engine = rollout_engine(self.config, concurrency=concurrency, say=self.say)
        engine = site.engine(self.engine)
        per_chunk = max(1, self.batch_episodes // k)
        for start in range(0, len(jobs), per_chunk):
            chunk = jobs[start : start + per_chunk]
            started = time.monotonic()
            episodes, groups = [], []
            for index, job in enumerate(chunk):
                folder = log_dir(job.key)
                for _ in range(k):
                    episodes.append(site_episode(site, job.task, job.image, self.harness, folder))
                    groups.append(index)
            rollouts, stats = engine.run(episodes, groups)
            for key, value in stats.items():
                self.stats[key] = self.stats.get(key, 0.0) + value
            seconds = (time.monotonic() - started) / len(chunk)
            for index, job in enumerate(chunk):
                on_task(job, [r.episode for r in rollouts if r.group == index], seconds)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def local_runner(
    config: TrainConfig, *, jobs: int, batch_episodes: int, say: Callable[[str], None]
) -> LocalRunner:
    require_torch()
    return LocalRunner(config, jobs=jobs, batch_episodes=batch_episodes, say=say)


def train(
    suite: Path,
    config: TrainConfig,
    out: Path,
    *,
    resume: bool,
    on_step: Callable[[dict], None],
    say: Callable[[str], None],
) -> Path:
    """RL (``config.algorithm``) on ``suite`` into the run folder ``out`` (``resume``: from its last checkpoint)."""
    require_torch()
    from factory_train.trainer import Trainer

    if out.exists() and any(out.iterdir()) and not resume and (out / "checkpoints").exists():
        raise FactoryError(
            f"{out} holds an earlier run: pass --resume to continue it, or another --out"
        )
    trainer = Trainer(suite, config, out, resume=resume, say=say)
    try:
        trainer.setup()
        while trainer.step < config.steps:
            row = trainer.train_step()
            if row is not None:  # a step without a learning signal does not count
                on_step(row)
    finally:
        trainer.close()
    return out
