"""`factory eval --executor ray`: the model generates on this machine (batched across the live
episodes, as locally); the episodes' containers run on the Ray cluster's nodes, one live
episode per ``docker_slots`` slot (see :mod:`factory.distributed.episodes`). The summary and
the transcripts are written here exactly as by :func:`factory_train.run_eval.run_evaluation`;
the verifier's own logs stay on the nodes."""

from __future__ import annotations

from pathlib import Path

from factory.agent.harness import Episode, HarnessConfig
from factory.agent.suite import SuiteTask
from factory.distributed.cluster import RayCluster
from factory.distributed.episodes import HostPool, RayEpisodes
from factory_train.config import TrainConfig
from factory_train.evaluate import evaluate_tasks
from factory_train.run_eval import eval_tasks, rollout_engine
from factory_train.trainer import harness_config


class _Unstarted:
    """Episodes made for the local harness and never started here: RayEpisodes runs their
    remote twins (images are built on the nodes, when an episode of the task first starts)."""

    def prepare(self, tasks: list[SuiteTask]) -> None:
        pass

    def episode(self, entry: SuiteTask, harness: HarnessConfig, log_dir: Path | None = None):
        return Episode(None, entry.task, "", harness, log_dir)  # type: ignore[arg-type]

    def close(self) -> None:
        pass


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
    tasks = eval_tasks(suite, config, split)
    say(
        f"evaluating {config.model} on {len(tasks)} tasks x {k} episodes; "
        f"environments on Ray: {cluster.describe()}"
    )
    harness = harness_config(config)
    pool = HostPool(cluster, harness, shared_fs=shared_fs)
    engine = None
    try:
        engine = rollout_engine(config, concurrency=max(config.concurrency, cluster.slots), say=say)
        return evaluate_tasks(
            RayEpisodes(engine, pool), _Unstarted(), tasks, harness, k=k, log_dir=out
        )
    except BaseException:
        cluster.cancel()
        raise
    finally:
        if engine is not None:
            engine.close()
        pool.close()
