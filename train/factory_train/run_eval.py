"""`factory eval`: load a model, run k episodes per task of a split, summarise per family."""

from __future__ import annotations

from pathlib import Path

from factory.agent.backends import make_backend
from factory.agent.suite import SuiteTask
from factory.errors import FactoryError
from factory_train.config import TrainConfig
from factory_train.evaluate import evaluate_tasks
from factory_train.generation import HFSampler
from factory_train.models import load_policy, resolve_model
from factory_train.precision import pick_device
from factory_train.rollout import RolloutEngine
from factory_train.trainer import harness_config, split_tasks


def eval_tasks(suite: Path, config: TrainConfig, split: str) -> list[SuiteTask]:
    """The tasks of a split (test, train or all); a test split that holds nothing out is an
    error that says how to get one, never a silent pass@1 of 0 over no tasks."""
    if split not in ("test", "train", "all"):
        raise FactoryError(f"split must be test, train or all, not {split!r}")
    train, test = split_tasks(suite, config)
    if split == "test" and not test:
        families = sorted({e.family for e in train})
        how = (
            "the suite has one family, so a split by family holds nothing out: pass a config "
            "with `split: task` (e.g. -c examples/train.yaml, the one training used)"
            if len(families) == 1 and config.split == "family"
            else f"the config's split ({config.split}, test_fraction {config.test_fraction}, "
            f"test_families {config.test_families}) holds nothing out: pass the training config"
        )
        raise FactoryError(f"{suite}: no held-out tasks to evaluate; {how}, or --split all")
    return {"test": test, "train": train, "all": train + test}[split]


def rollout_engine(config: TrainConfig, *, concurrency: int | None = None, say=print):
    """The policy of ``config.model`` on this machine, sampling as in training."""
    device, precision = pick_device(config.dtype)
    model, tokenizer = load_policy(
        resolve_model(config.model), device=device, dtype=precision.frozen
    )
    model.eval()
    say(f"policy {config.model} loaded ({device})")
    sampler = HFSampler(
        model,
        tokenizer,
        max_new_tokens=config.max_new_tokens,
        sampling=config.sampling,
        precision=precision,
    )
    return RolloutEngine(
        sampler,
        tokenizer,
        max_episode_tokens=config.max_episode_tokens,
        concurrency=concurrency or config.concurrency,
        reply_prefix=config.reply_prefix,
    )


def run_evaluation(
    suite: Path, config: TrainConfig, *, split: str, k: int, out: Path, say=print
) -> dict:
    tasks = eval_tasks(suite, config, split)
    say(f"evaluating {config.model} on {len(tasks)} tasks x {k} episodes")
    engine = rollout_engine(config, say=say)
    backend = None
    try:
        backend = make_backend(
            config.environment, run_prefix="eval", concurrency=config.concurrency
        )
        backend.prepare(tasks)
        return evaluate_tasks(engine, backend, tasks, harness_config(config), k=k, log_dir=out)
    finally:
        engine.close()
        if backend is not None:
            backend.close()
