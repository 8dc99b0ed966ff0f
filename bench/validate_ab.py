"""Harness overhead per container phase of two factory trees, measured side by side: round by
round, alternating between a base tree (e.g. main) and this one, on the same engine.

    .venv/bin/python bench/validate_ab.py --base /path/to/main [--rounds 3] [--tasks DIR...]

Each round runs, for each tree in turn, a child process with that tree first on PYTHONPATH
(so it imports that tree's factory) which measures what bench/validate.py measures for
--jobs 1: the `factory validate` wall time of the tasks (images built beforehand, so builds
are not timed) and the floor (the same scripts by docker exec in one running container per
task). Overhead per phase = (wall - floor) / tasks / (2 x repeats). Medians per tree and
their ratio are printed; interleaving keeps the machine's other load from favouring a side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REPEATS = 2


def measure(tasks: list[Path]) -> dict[str, float]:
    """One round in this process, with whatever factory PYTHONPATH gives (the child side)."""
    from factory.images.task_image import TaskImageBuilder
    from factory.runtime import DockerRuntime, new_run_id
    from factory.tasks.model import discover_task_dirs, load_task
    from factory.validate.outcome import Outcome
    from factory.validate.phases import container_spec
    from factory.validate.validator import Validator

    dirs = discover_task_dirs(tasks)
    runtime = DockerRuntime(new_run_id("bench-ab"))
    try:
        builder = TaskImageBuilder(runtime)
        images = {path: builder.ensure(load_task(path)).ref for path in dirs}
        with tempfile.TemporaryDirectory() as out:
            validator = Validator(runtime, Path(out), jobs=1, repeats=REPEATS, force=True)
            started = time.perf_counter()
            report = validator.run(dirs)
            wall = time.perf_counter() - started
        bad = {t.id: t.reason for t in report.tasks if t.outcome is not Outcome.VALID}
        if bad:
            raise SystemExit(f"benchmark tasks must be valid; not valid: {bad}")
        floor = 0.0
        for path in dirs:
            task = load_task(path)
            with runtime.start(container_spec(task, images[path])) as box:
                box.upload_dir(task.paths.solution_dir, "/solution")
                box.upload_dir(task.paths.tests_dir, "/tests")
                for _ in range(REPEATS):
                    for script in ("/tests/test.sh", "/solution/solve.sh", "/tests/test.sh"):
                        floor += box.exec(["bash", script], timeout_sec=600).duration_sec
    finally:
        runtime.close()
    overhead = (wall - floor) / len(dirs) / (2 * REPEATS)
    return {"wall": wall, "floor": floor, "overhead": overhead, "tasks": len(dirs)}


def run_child(tree: Path, tasks: list[Path]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "train")])}
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", *map(str, tasks)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    if result.returncode != 0:
        raise SystemExit(f"{tree}: the measurement failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="The tree to compare against.")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("tasks", type=Path, nargs="*", default=[REPO / "examples" / "tasks"])
    args = parser.parse_args()
    tasks = [path.resolve() for path in args.tasks]
    if args.child:
        print(json.dumps(measure(tasks)))
        return
    if args.base is None:
        parser.error("--base is required")
    trees = {"base": args.base.resolve(), "this": REPO}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        for name, tree in trees.items():
            results[name].append(run_child(tree, tasks))
        print(
            f"round {round_ + 1}/{args.rounds}: "
            + ", ".join(
                f"{name} {r[-1]['overhead']:.3f} s/phase (wall {r[-1]['wall']:.1f} s, "
                f"floor {r[-1]['floor']:.1f} s)"
                for name, r in results.items()
            ),
            flush=True,
        )
    med = {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    count = int(med["base"]["tasks"])
    print()
    print(
        f"| measure ({count} tasks, {REPEATS} repeats, --jobs 1, median of {args.rounds}) "
        "| base | this branch |"
    )
    print("|---|---|---|")
    for key, label in (
        ("overhead", "harness overhead per container phase"),
        ("wall", "validate wall"),
        ("floor", "floor: same scripts by docker exec"),
    ):
        print(f"| {label} | {med['base'][key]:.3f} s | {med['this'][key]:.3f} s |")
    ratio = med["this"]["overhead"] / med["base"]["overhead"] if med["base"]["overhead"] else 0.0
    print(f"| overhead ratio this / base | {ratio:.2f}x | |")


if __name__ == "__main__":
    main()
