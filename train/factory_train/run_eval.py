"""`factory eval`: load a model, run k episodes per task of a split, summarise per family."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from factory.agent.actions import ActionFormat
from factory.agent.harness import HarnessConfig
from factory.agent.suite import load_suite_tasks, split_suite
from factory.images.task_image import TaskImageBuilder
from factory.runtime import DockerRuntime, new_run_id
from factory_train.config import TrainConfig
from factory_train.evaluate import evaluate_tasks
from factory_train.generation import HFGenerator
from factory_train.models import load_policy, resolve_model
from factory_train.rollout import RolloutEngine
from factory_train.trainer import pick_device_and_dtype


def run_evaluation(
    suite: Path, config: TrainConfig, *, split: str, k: int, out: Path, say=print
) -> dict:
    entries = load_suite_tasks(suite)
    train, test = split_suite(
        entries,
        test_families=config.test_families,
        test_fraction=config.test_fraction,
        seed=config.seed,
        by=config.split,
    )
    tasks = {"test": test, "train": train, "all": entries}[split]
    device, dtype, autocast = pick_device_and_dtype(config.dtype)
    model, tokenizer = load_policy(resolve_model(config.model), device=device, dtype=dtype)
    say(f"evaluating {config.model} on {len(tasks)} tasks x {k} episodes ({device})")
    runtime = DockerRuntime(new_run_id("eval"), pool_size=4 * config.concurrency)
    runtime.ping()
    engine = None
    try:
        builder = TaskImageBuilder(runtime)
        with ThreadPoolExecutor(max_workers=2) as pool:
            refs = list(pool.map(lambda e: builder.ensure(e.task).ref, tasks))
        images = {e.task.id: ref for e, ref in zip(tasks, refs, strict=True)}
        generator = HFGenerator(
            model,
            tokenizer,
            max_new_tokens=config.max_new_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            autocast_dtype=autocast,
        )
        engine = RolloutEngine(
            generator,
            tokenizer,
            max_episode_tokens=config.max_episode_tokens,
            concurrency=config.concurrency,
            reply_prefix=config.reply_prefix,
        )
        harness = HarnessConfig(
            max_turns=config.max_turns,
            command_timeout_sec=config.command_timeout_sec,
            max_observation_chars=config.max_observation_chars,
            action_format=ActionFormat(config.action_format),
        )
        return evaluate_tasks(engine, runtime, tasks, images, harness, k=k, log_dir=out)
    finally:
        if engine is not None:
            engine.close()
        runtime.close()
