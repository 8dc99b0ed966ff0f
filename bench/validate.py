"""Validation throughput and harness overhead, measured side by side in one run.

    .venv/bin/python bench/validate.py [--rounds 3] [--tasks examples/tasks]

For the example tasks (images already built, so builds are not timed) it measures:

* ``factory validate`` wall time with --jobs 1 and --jobs 2 (and --jobs 1 without starting the
  next phase's container ahead of time), as tasks/minute;
* the floor: the same solve.sh and test.sh run by `docker exec` in one already-running
  container per task (nop test, then solve + test, times the repeats);
* a bare create+start+exec+remove cycle through the Docker SDK (the engine's own floor).

Harness overhead per container phase = (validation wall per task at --jobs 1 - floor per task)
/ (2 x repeats). Configurations are interleaved round by round and medians reported, because
these machines are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.images.task_image import TaskImageBuilder  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402
from factory.runtime import ContainerSpec, DockerRuntime, new_run_id  # noqa: E402
from factory.tasks.model import discover_task_dirs, load_task  # noqa: E402
from factory.validate.outcome import Outcome  # noqa: E402
from factory.validate.phases import container_spec  # noqa: E402
from factory.validate.validator import Validator  # noqa: E402

REPEATS = 2


def validate_wall(runtime: DockerRuntime, dirs: list[Path], jobs: int, prestart: bool) -> float:
    with tempfile.TemporaryDirectory() as out:
        validator = Validator(
            runtime, Path(out), jobs=jobs, repeats=REPEATS, force=True, prestart=prestart
        )
        started = time.perf_counter()
        report = validator.run(dirs)
        wall = time.perf_counter() - started
    bad = [t.id for t in report.tasks if t.outcome is not Outcome.VALID]
    if bad:
        raise SystemExit(f"benchmark tasks must be valid; not valid: {bad}")
    return wall


def exec_floor(runtime: DockerRuntime, dirs: list[Path], images: dict[Path, str]) -> float:
    """Seconds for all tasks' scripts by docker exec in one running container per task."""
    total = 0.0
    for path in dirs:
        task = load_task(path)
        with runtime.start(container_spec(task, images[path])) as box:
            box.upload_dir(task.paths.solution_dir, "/solution")
            box.upload_dir(task.paths.tests_dir, "/tests")
            for _ in range(REPEATS):
                for script in ("/tests/test.sh", "/solution/solve.sh", "/tests/test.sh"):
                    result = box.exec(["bash", script], timeout_sec=600)
                    total += result.duration_sec
    return total


def bare_cycle(runtime: DockerRuntime, count: int = 10) -> float:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        box = runtime.start(ContainerSpec(image="factory/base:bookworm"))
        box.exec(["true"], timeout_sec=30)
        runtime.api.remove_container(box.id, force=True)
        runtime._live.pop(box.id, None)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=Path, nargs="*", default=[REPO / "examples" / "tasks"])
    args = parser.parse_args()

    dirs = discover_task_dirs(args.tasks)
    runtime = DockerRuntime(new_run_id("bench"))
    try:
        builder = TaskImageBuilder(runtime)
        images = {path: builder.ensure(load_task(path)).ref for path in dirs}  # warm cache
        configs = {"jobs=1": (1, True), "jobs=2": (2, True), "jobs=1 no-prestart": (1, False)}
        walls: dict[str, list[float]] = {name: [] for name in configs}
        floors, cycles = [], []
        for round_ in range(args.rounds):
            for name, (jobs, prestart) in configs.items():
                walls[name].append(validate_wall(runtime, dirs, jobs, prestart))
            floors.append(exec_floor(runtime, dirs, images))
            cycles.append(bare_cycle(runtime))
            print(
                f"round {round_ + 1}/{args.rounds}: "
                + ", ".join(f"{k} {v[-1]:.1f}s" for k, v in walls.items())
                + f", floor {floors[-1]:.1f}s, bare cycle {cycles[-1]:.3f}s",
                flush=True,
            )
    finally:
        runtime.close()

    n = len(dirs)
    med = {name: statistics.median(values) for name, values in walls.items()}
    floor = statistics.median(floors)
    cycle = statistics.median(cycles)
    phases = 2 * REPEATS
    per_task = med["jobs=1"] / n
    overhead_task = per_task - floor / n
    overhead_no_prestart = (med["jobs=1 no-prestart"] - floor) / n
    print()
    print(f"| measure ({n} tasks, {REPEATS} repeats, median of {args.rounds} rounds) | value |")
    print("|---|---|")
    print(f"| validate --jobs 1 | {med['jobs=1']:.1f} s, {60 * n / med['jobs=1']:.1f} tasks/min |")
    print(f"| validate --jobs 2 | {med['jobs=2']:.1f} s, {60 * n / med['jobs=2']:.1f} tasks/min |")
    print(f"| throughput ratio jobs=2 / jobs=1 | {med['jobs=1'] / med['jobs=2']:.2f}x |")
    print(f"| validate --jobs 1 without start-ahead | {med['jobs=1 no-prestart']:.1f} s |")
    print(
        f"| floor: same scripts by docker exec in one running container | {floor:.1f} s ({floor / n:.2f} s/task) |"
    )
    print(f"| validation wall per task (jobs=1) | {per_task:.2f} s |")
    print(f"| harness overhead per task (jobs=1) | {overhead_task:.2f} s |")
    print(
        f"| harness overhead per container phase | {overhead_task / phases:.3f} s "
        f"(without start-ahead: {overhead_no_prestart / phases:.3f} s) |"
    )
    print(f"| bare SDK create+start+exec+remove cycle | {cycle:.3f} s |")


if __name__ == "__main__":
    main()
