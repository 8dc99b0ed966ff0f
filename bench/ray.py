"""Validation throughput on Ray, side by side with the local executor, in one run.

    .venv/bin/python bench/ray.py [--rounds 2] [--tasks DIR ...] [--generated 6]

The task set: examples/tasks plus ``--generated`` procedural tasks (one per family, made once
by `factory generate` before anything is timed); every image is built before the first
measurement, so builds are not timed. Configurations, interleaved round by round (medians):

* ``local -j2``: the local executor with --jobs 2 (threads, this machine's engine);
* ``ray 1x2``: a Ray cluster of 1 worker node with 2 docker_slots (the node's --jobs 2);
* ``ray 2x1``: 2 worker nodes with 1 slot each (same concurrency as -j2, spread over nodes);
* ``ray 2x2``: 2 worker nodes with 2 slots each (what adding a node gives, when both nodes
  share this machine's 2 cores and one Docker engine).

Every cluster is started with ``ray start`` on loopback (a head with no slots, so the driver's
node runs no task, plus the worker nodes), connected, pre-flighted, warmed up (one untimed pass
over as many tasks as there are slots, so every slot has a worker process), then timed on the
whole set, and stopped. Besides the walls it measures what limits scaling out: the driver's
CPU seconds per task, the trip cost per task (``dispatch``: packing, queueing, transfer,
unpacking logs), bytes sent and received per task, Ray's no-op task rate through one driver,
the time to rewrite validation.json as it grows, and one image build on a node.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This file is named like the package it benchmarks: keep bench/ off the path, or `import ray`
# (here and in the Ray workers, which inherit the driver's path) would import this script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]
sys.path.insert(0, str(REPO))

from factory.distributed import ExecutorKind, ExecutorOptions  # noqa: E402
from factory.distributed.cluster import RayCluster  # noqa: E402
from factory.distributed.localcluster import LocalRayCluster, process_stats  # noqa: E402
from factory.distributed.payload import TaskPayload, pack_logs, unpack_logs  # noqa: E402
from factory.distributed.ray_executor import RayExecutor, node_of  # noqa: E402
from factory.images.task_image import TaskImageBuilder  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402
from factory.runtime import DockerRuntime, new_run_id  # noqa: E402
from factory.tasks.model import discover_task_dirs, load_task  # noqa: E402
from factory.validate.outcome import Outcome, ValidationReport  # noqa: E402
from factory.validate.validator import Validator, write_report  # noqa: E402

REPEATS = 2
FAMILIES = [
    "file-permissions",
    "file-search",
    "archives",
    "log-report",
    "regex-extract",
    "text-transform",
    "csv-json-wrangle",
    "sqlite-query",
]
RAY_CONFIGS = {"ray 1x2": (1, 2), "ray 2x1": (2, 1), "ray 2x2": (2, 2)}


def generated_tasks(count: int, where: Path) -> list[Path]:
    """``count`` procedural tasks, one per family (made once; reused from ``where``)."""
    if count <= 0:
        return []
    tasks = where / "tasks"
    if not (tasks.is_dir() and len(list(tasks.iterdir())) >= count):
        skills = "\n".join(
            f"          - name: s{i}\n            generator: {family}"
            for i, family in enumerate(FAMILIES[:count])
        )
        taxonomy = where / "taxonomy-in.yaml"
        where.mkdir(parents=True, exist_ok=True)
        taxonomy.write_text(
            "suite: bench-ray\nseed: 7\ndefaults:\n  quota: 1\n  difficulty: {easy: 1}\n"
            "domains:\n  - name: terminal\n    categories:\n      - name: c\n        skills:\n"
            f"{skills}\n"
        )
        subprocess.run(
            [sys.executable, "-m", "factory", "generate", str(taxonomy), "--out", str(where)],
            check=True,
        )
    return sorted(tasks.iterdir())[:count]


def group_cpu_seconds(groups: list[int]) -> float:
    """CPU seconds used so far by the live processes of these process groups (a Ray cluster
    started by LocalRayCluster: GCS, raylets, agents, workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    wanted = {str(g) for g in groups}
    for fields in process_stats():
        if fields[2] in wanted:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def check(report: ValidationReport) -> None:
    bad = [t.id for t in report.tasks if t.outcome is not Outcome.VALID]
    if bad:
        raise SystemExit(f"benchmark tasks must be valid; not valid: {bad}")


def run_local(dirs: list[Path]) -> dict:
    runtime = DockerRuntime(new_run_id("bench-local"))
    try:
        with tempfile.TemporaryDirectory() as out:
            cpu, started = cpu_seconds(), time.perf_counter()
            report = Validator(runtime, Path(out), jobs=2, repeats=REPEATS, force=True).run(dirs)
            wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    finally:
        runtime.close()
    check(report)
    return {"wall": wall, "driver_cpu": cpu}


def run_ray(dirs: list[Path], nodes: int, slots: int) -> dict:
    with LocalRayCluster(workers=nodes, slots=slots, head_slots=0) as local:
        options = ExecutorOptions(ExecutorKind.RAY, local.address)
        runtime = DockerRuntime(new_run_id("bench-ray"))
        cluster = RayCluster(options, run_id=runtime.run_id)
        try:
            cluster.preflight()
            idle = group_cpu_seconds(local.groups)
            time.sleep(10)
            idle = (group_cpu_seconds(local.groups) - idle) / 10 / (1 + nodes)
            ray = RayExecutor(cluster, runtime)
            with tempfile.TemporaryDirectory() as warm:  # one worker process per slot
                Validator(runtime, Path(warm), repeats=REPEATS, force=True, executor=ray).run(
                    dirs[: cluster.slots]
                )
            with tempfile.TemporaryDirectory() as out:
                validator = Validator(runtime, Path(out), repeats=REPEATS, force=True, executor=ray)
                cpu, started = cpu_seconds(), time.perf_counter()
                ray_cpu = group_cpu_seconds(local.groups)
                report = validator.run(dirs)
                wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
                ray_cpu = group_cpu_seconds(local.groups) - ray_cpu
                log_bytes = [len(pack_logs(Path(out) / "logs" / t.id)) for t in report.tasks]
            noop = noop_rate(cluster) if (nodes, slots) == (2, 2) else None
        finally:
            cluster.shutdown()
            runtime.close()
    check(report)
    per_node: dict[str, int] = {}
    for task in report.tasks:
        per_node[node_of(task) or "?"] = per_node.get(node_of(task) or "?", 0) + 1
    return {
        "wall": wall,
        "driver_cpu": cpu,
        "node_total": statistics.median(t.timings.get("total", 0.0) for t in report.tasks),
        "ray_cpu": ray_cpu,
        "idle_cores_per_node": idle,
        "spread": sorted(per_node.values()),
        "log_bytes": statistics.mean(log_bytes),
        "noop": noop,
    }


def _noop() -> None:
    return None


def noop_rate(cluster: RayCluster, count: int = 400) -> dict:
    """No-op Ray tasks (one slot each) through this driver: round trip and throughput."""
    ray = cluster.ray
    remote = ray.remote(_noop).options(num_cpus=0, resources={"docker_slots": 1})
    ray.get([remote.remote() for _ in range(8)])  # warm
    started = time.perf_counter()
    for _ in range(50):
        ray.get(remote.remote())
    latency = (time.perf_counter() - started) / 50
    cpu, started = cpu_seconds(), time.perf_counter()
    ray.get([remote.remote() for _ in range(count)])
    wall = time.perf_counter() - started
    return {
        "latency": latency,
        "rate": count / wall,
        "driver_cpu_per_task": (cpu_seconds() - cpu) / count,
    }


def driver_costs(dirs: list[Path]) -> dict:
    """Driver-side work per task outside Ray: packing a task, rewriting validation.json."""
    started = time.perf_counter()
    sizes = [len(TaskPayload.pack(load_task(d).root).tar or b"") for d in dirs]
    pack = (time.perf_counter() - started) / len(dirs)
    runtime = DockerRuntime(new_run_id("bench-report"))
    with tempfile.TemporaryDirectory() as out:
        one = Validator(runtime, Path(out), repeats=REPEATS, force=True).run(dirs[:1]).tasks[0]
        logs = pack_logs(Path(out) / "logs" / one.id)
        started = time.perf_counter()
        for i in range(20):
            unpack_logs(logs, Path(out) / "unpacked" / str(i))
        unpack = (time.perf_counter() - started) / 20
        writes = {}
        for n in (1000, 10000):
            report = ValidationReport(run_id="x", factory_version="x", repeats=2, jobs=2)
            report.tasks = [one.model_copy(update={"id": f"t{i}"}) for i in range(n)]
            started = time.perf_counter()
            write_report(report, Path(out) / "validation.json")
            writes[n] = time.perf_counter() - started
            size = (Path(out) / "validation.json").stat().st_size
            writes[f"{n}_bytes"] = size
    runtime.close()
    return {
        "pack": pack,
        "unpack": unpack,
        "payload_bytes": statistics.mean(sizes),
        "report_write": writes,
    }


def image_build_seconds(src: Path) -> float:
    """One task image built from scratch on a node (base image and its layers cached)."""
    runtime = DockerRuntime(new_run_id("bench-build"))
    with tempfile.TemporaryDirectory() as tmp:
        task_dir = Path(tmp) / src.name
        shutil.copytree(src, task_dir)
        (task_dir / "environment" / f"bench-{time.time_ns()}.txt").write_text("unique\n")
        image = TaskImageBuilder(runtime).ensure(load_task(task_dir))
        runtime.remove_image(image.ref, force=True)
    runtime.close()
    return image.seconds


def main() -> None:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tasks", type=Path, nargs="*", default=[REPO / "examples" / "tasks"])
    parser.add_argument("--generated", type=int, default=6, help="procedural tasks to add")
    parser.add_argument(
        "--suite", type=Path, default=Path(tempfile.gettempdir()) / "factory-bench-ray-suite"
    )
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()

    dirs = discover_task_dirs(args.tasks) + generated_tasks(args.generated, args.suite)
    n = len(dirs)
    runtime = DockerRuntime(new_run_id("bench-images"))
    builder = TaskImageBuilder(runtime)
    for path in dirs:
        builder.ensure(load_task(path))  # warm cache: builds are not timed
    runtime.close()
    print(f"{n} tasks ({len(dirs) - args.generated} examples, {args.generated} generated)")

    results: dict[str, list[dict]] = {"local -j2": [], **{name: [] for name in RAY_CONFIGS}}
    for round_ in range(args.rounds):
        results["local -j2"].append(run_local(dirs))
        for name, (nodes, slots) in RAY_CONFIGS.items():
            results[name].append(run_ray(dirs, nodes, slots))
        print(
            f"round {round_ + 1}/{args.rounds}: "
            + ", ".join(f"{k} {v[-1]['wall']:.1f}s" for k, v in results.items()),
            flush=True,
        )
    costs = driver_costs(dirs)
    build = image_build_seconds(dirs[0])

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    local_wall = med("local -j2", "wall")
    print()
    print(f"| configuration ({n} tasks, {REPEATS} repeats, median of {args.rounds}) | wall | "
          "tasks/min | vs local -j2 | driver CPU / task | Ray processes CPU / task | "
          "idle Ray CPU per node | tasks per node |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name in results:
        wall = med(name, "wall")
        spread = "/".join(map(str, results[name][-1].get("spread", [n])))
        row = [
            name,
            f"{wall:.1f} s",
            f"{60 * n / wall:.1f}",
            f"{local_wall / wall:.2f}x",
            f"{med(name, 'driver_cpu') / n * 1000:.0f} ms",
            f"{med(name, 'ray_cpu') / n * 1000:.0f} ms" if name in RAY_CONFIGS else "-",
            f"{med(name, 'idle_cores_per_node') * 100:.0f}% of a core"
            if name in RAY_CONFIGS
            else "-",
            spread,
        ]
        print("| " + " | ".join(row) + " |")
    noop = next(r["noop"] for r in results["ray 2x2"] if r["noop"])
    print()
    print("| driver and transfer costs | value |")
    print("|---|---|")
    print(f"| no-op Ray task round trip (1 driver) | {noop['latency'] * 1000:.1f} ms |")
    print(f"| no-op Ray tasks through 1 driver | {noop['rate']:.0f} tasks/s "
          f"({noop['driver_cpu_per_task'] * 1000:.2f} ms driver CPU each) |")  # fmt: skip
    print(f"| task payload (tar) / logs back, mean | {costs['payload_bytes'] / 1024:.0f} KiB / "
          f"{statistics.mean(r['log_bytes'] for r in results['ray 2x2']) / 1024:.0f} KiB |")  # fmt: skip
    print(f"| pack one task / unpack its logs on the driver | {costs['pack'] * 1000:.1f} ms / "
          f"{costs['unpack'] * 1000:.1f} ms |")  # fmt: skip
    trip = costs["pack"] + noop["latency"] + costs["unpack"]
    print(f"| trip cost per task (pack + round trip + unpack) | {trip * 1000:.1f} ms |")
    for count in (1000, 10000):
        print(f"| rewrite validation.json at {count} tasks | {costs['report_write'][count]:.2f} s "
              f"({costs['report_write'][f'{count}_bytes'] / 2**20:.1f} MiB) |")  # fmt: skip
    print(f"| one task image built on a node (cached base) | {build:.1f} s |")
    if args.json:
        args.json.write_text(
            json.dumps({"tasks": n, "results": results, "costs": costs, "build": build}, indent=2)
        )


if __name__ == "__main__":
    main()
