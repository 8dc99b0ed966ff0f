"""`factory eval --executor ray`: the model generates on this machine (batched across the live
episodes, as locally); the episodes' containers run on the Ray cluster's nodes, one live
episode per ``docker_slots`` slot (see :mod:`factory.distributed.episodes`). The summary and
the transcripts are written here exactly as by :func:`factory_train.run_eval.run_evaluation`;
the verifier's own logs stay on the nodes."""

from __future__ import annotations

from pathlib import Path

from factory.agent.actions import ActionFormat
from factory.agent.harness import HarnessConfig
from factory.agent.suite import load_suite_tasks, split_suite
from factory.distributed.cluster import RayCluster
from factory.distributed.episodes import HostPool, RayEpisodes
from factory_train.config import TrainConfig
from factory_train.evaluate import evaluate_tasks
from factory_train.generation import HFGenerator
from factory_train.models import load_policy, resolve_model
from factory_train.rollout import RolloutEngine
from factory_train.trainer import pick_device_and_dtype


def run_evaluation_ray(
    suite: Path,
    config: TrainConfig,
    cluster: RayCluster,
    *,
    split: str,
    k: int,
    out: Path,
    shared_fs: bool = False,
    say=print,
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
    say(
        f"evaluating {config.model} on {len(tasks)} tasks x {k} episodes ({device}); "
        f"environments on Ray: {cluster.describe()}"
    )
    harness = HarnessConfig(
        max_turns=config.max_turns,
        command_timeout_sec=config.command_timeout_sec,
        max_observation_chars=config.max_observation_chars,
        action_format=ActionFormat(config.action_format),
    )
    pool = HostPool(cluster, harness, shared_fs=shared_fs)
    engine = None
    try:
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
            concurrency=max(config.concurrency, cluster.slots),
            reply_prefix=config.reply_prefix,
        )
        # Images are built on the nodes, when an episode of the task first starts there.
        images = {entry.task.id: "" for entry in tasks}
        return evaluate_tasks(
            RayEpisodes(engine, pool), None, tasks, images, harness, k=k, log_dir=out
        )
    except BaseException:
        cluster.cancel()
        raise
    finally:
        if engine is not None:
            engine.close()
        pool.close()
