"""Harness overhead per container phase of two factory trees, side by side on one engine.

Round by round, alternating between a base tree (e.g. main before a change) and this one:

    git archive $(git merge-base HEAD main) | tar -x -C /tmp/base
    .venv/bin/python bench/validate_ab.py --base /tmp/base [--rounds 3] [TASK_DIR...]

Each round takes the tasks one by one; for each, a child process per tree (in alternating
order), with that tree first on PYTHONPATH so it imports that tree's factory, measures what
bench/validate.py measures for --jobs 1: the `factory validate` wall time of the task (its
image built beforehand, so builds are not timed) and the floor (the same scripts by docker
exec in one running container). Overhead per phase = (wall - floor) / (2 x repeats). Medians
per tree and the median of the paired differences are printed: pairing each task run of one
tree with the next of the other keeps a loaded machine's drift from favouring a side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def measure(tasks: list[Path]) -> dict[str, float]:
    """One round in this process, with whatever factory PYTHONPATH gives (the child side):
    bench/validate.py's wall and floor at --jobs 1."""
    import factory  # noqa: F401 - first, so the tree on PYTHONPATH provides every factory module

    sys.path.insert(1, str(Path(__file__).resolve().parent))
    import validate as single  # bench/validate.py

    dirs = single.discover_task_dirs(tasks)
    runtime = single.DockerRuntime(single.new_run_id("bench-ab"))
    try:
        builder = single.TaskImageBuilder(runtime)
        images = {path: builder.ensure(single.load_task(path)).ref for path in dirs}
        wall = single.validate_wall(runtime, dirs, jobs=1, prestart=True)
        floor = single.exec_floor(runtime, dirs, images)
    finally:
        runtime.close()
    overhead = (wall - floor) / len(dirs) / (2 * single.REPEATS)
    return {"wall": wall, "floor": floor, "overhead": overhead, "repeats": single.REPEATS}


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
    parser.add_argument(
        "tasks",
        type=Path,
        nargs="*",
        default=[Path("examples/tasks")],
        help="Task folders; relative ones are each tree's own (default: examples/tasks).",
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.tasks)))
        return
    if args.base is None:
        parser.error("--base is required")
    trees = {"base": args.base.resolve(), "this": REPO}
    names = sorted(p.name for p in discover(args.tasks, REPO))
    pairs: list[tuple[dict[str, float], dict[str, float]]] = []
    for round_ in range(args.rounds):
        for index, name in enumerate(names):
            order = ["base", "this"] if (round_ + index) % 2 == 0 else ["this", "base"]
            got = {tree: run_child(trees[tree], [task_path(args.tasks, name)]) for tree in order}
            pairs.append((got["base"], got["this"]))
            print(
                f"round {round_ + 1}/{args.rounds} {name}: "
                + ", ".join(
                    f"{tree} {got[tree]['overhead']:.3f} s/phase (wall {got[tree]['wall']:.1f} s)"
                    for tree in ("base", "this")
                ),
                flush=True,
            )
    med = {
        side: {key: statistics.median(p[i][key] for p in pairs) for key in pairs[0][0]}
        for i, side in enumerate(("base", "this"))
    }
    diffs = sorted(p[1]["overhead"] - p[0]["overhead"] for p in pairs)
    quart = statistics.quantiles(diffs, n=4) if len(diffs) > 1 else [diffs[0]] * 3
    print()
    print(
        f"| measure ({len(pairs)} task runs per tree, {int(med['base']['repeats'])} repeats, --jobs 1, medians) "
        "| base | this branch |"
    )
    print("|---|---|---|")
    for key, label in (
        ("overhead", "harness overhead per container phase"),
        ("wall", "validate wall per task"),
        ("floor", "floor per task: same scripts by docker exec"),
    ):
        print(f"| {label} | {med['base'][key]:.3f} s | {med['this'][key]:.3f} s |")
    print(
        f"| paired difference this - base, overhead per phase | median {statistics.median(diffs):+.3f} s "
        f"(quartiles {quart[0]:+.3f} / {quart[2]:+.3f}) | |"
    )


def discover(tasks: list[Path], tree: Path) -> list[Path]:
    """Task directories under ``tasks`` (relative ones inside ``tree``)."""
    found = []
    for path in tasks:
        path = path if path.is_absolute() else tree / path
        if (path / "task.toml").is_file():
            found.append(path)
        else:
            found += sorted(p for p in path.iterdir() if (p / "task.toml").is_file())
    return found


def task_path(tasks: list[Path], name: str) -> Path:
    """The task called ``name`` among ``tasks``, as a path relative to a tree when given so."""
    for path in tasks:
        if path.name == name:
            return path
        if not path.is_absolute() or (path / name).is_dir():
            return path / name
    raise SystemExit(f"no task {name}")


if __name__ == "__main__":
    main()
