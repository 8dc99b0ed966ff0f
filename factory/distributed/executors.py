"""The executor a command's options ask for: this machine's engine, or a Ray cluster."""

from __future__ import annotations

from collections.abc import Callable

from factory.distributed import ExecutorOptions
from factory.executor import Executor, LocalExecutor, docker_pool_size
from factory.runtime import BuildNetwork, DockerRuntime


def open_executor(
    options: ExecutorOptions,
    run_id: str,
    jobs: int,
    *,
    say: Callable[[str], None] = print,
    build_network: BuildNetwork = BuildNetwork.FILTERED,
) -> Executor:
    """The executor of one run: ``jobs`` units at once on this machine's engine (checked to be
    up), or on the nodes of a Ray cluster (each checked first; a one-node Ray instance with
    ``jobs`` slots when no address is given). Image builds get ``build_network``, here and on
    every node. Close it when the run ends."""
    runtime = DockerRuntime(run_id, pool_size=docker_pool_size(jobs), build_network=build_network)
    if not options.is_ray:
        runtime.ping()  # fail fast, before any progress bar, when the engine is down
        return LocalExecutor(runtime, jobs, owns_runtime=True)
    from factory.distributed.cluster import RayCluster
    from factory.distributed.ray_executor import RayExecutor

    cluster = RayCluster(options, run_id=run_id, local_slots=jobs)
    try:
        cluster.preflight()
    except BaseException:
        cluster.shutdown()
        raise
    executor = RayExecutor(cluster, runtime, shared_fs=options.shared_fs)
    say(executor.describe())
    return executor
