"""What a sidecar costs: validation and container start of a multi-container task against the
same task in one container, on one engine, interleaved round by round (medians).

    PYTHONPATH=. .venv/bin/python bench/sidecars.py [--rounds 3]

The multi-container task is examples/harbor/kv-inventory (main + the `kv` sidecar, whose
healthcheck main waits for). Its single-container twin is made here from the same directory:
no compose file, and a solution and tests that do the same file work without the service
(the same images, so the difference is the sidecar: its network, container, healthcheck and
removal). Images are built before the first round, so builds are not timed. Printed per
round and as medians:

* ``validate``: wall time of ``Validator.run`` (2 repeats: 4 phases, each a fresh container,
  and for the twin with sidecars a fresh sidecar and network each), ``--jobs 1``;
* ``start``: ``runtime.start`` until ready (the sidecar's healthcheck included) and the first
  exec answered, then ``close``, timed until everything is removed.

Measured 2026-12-04 on the 2-core machine with other sessions' Docker work running (load
average 16-23, so absolute figures are inflated), ``--rounds 3``, medians:

    validate  single   7.69 s  multi  19.88 s  (+12.19 s: 4 phases, +3.0 s a phase)
    start     single   0.69 s  multi   3.82 s  (+3.13 s)
    removed   single   0.18 s  multi   0.72 s  (+0.54 s)

Where a multi start goes (one profiled start, same load): network 0.1 s, sidecar create and
start 0.5-2.0 s, its healthcheck until it passes 1.5-2.2 s (a python HTTP server starting, and
each check a `python3 -c` exec), main create and start 0.8-1.2 s (as for one container). The
sidecar's healthcheck is waited for before main starts (main `depends_on` it with
`service_healthy`, as Harbor's `up --wait` would), so it is serial.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from factory.images.task_image import TaskImageBuilder
from factory.processes import sigterm_as_ctrl_c
from factory.runtime import LABEL_RUN, DockerRuntime, new_run_id
from factory.tasks.model import load_task
from factory.validate.outcome import Outcome
from factory.validate.phases import container_spec
from factory.validate.validator import Validator

REPO = Path(__file__).resolve().parent.parent
MULTI = REPO / "examples" / "harbor" / "kv-inventory"

SINGLE_SOLVE = """#!/bin/bash
python3 -c "import csv; t=sum(int(r['count']) for r in csv.DictReader(open('/app/inventory.csv'))); open('/app/total.txt','w').write(f'{t*3}\\n')"
"""
SINGLE_CHECK = """import sys
from pathlib import Path
total = Path("/app/total.txt").read_text().strip() if Path("/app/total.txt").exists() else ""
sys.exit(0 if total == str((12 + 7 + 30 + 4) * 3) else 1)
"""


def single_twin(folder: Path) -> Path:
    twin = folder / "kv-inventory-single"
    shutil.copytree(MULTI, twin)
    (twin / "environment" / "docker-compose.yaml").unlink()
    shutil.rmtree(twin / "environment" / "kv")
    (twin / "solution" / "solve.sh").write_text(SINGLE_SOLVE)
    (twin / "tests" / "check.py").write_text(SINGLE_CHECK)
    return twin


def validate_wall(runtime: DockerRuntime, task: Path, out: Path) -> float:
    started = time.monotonic()
    report = Validator(runtime, out, repeats=2, jobs=1, force=True).run([task])
    wall = time.monotonic() - started
    (verdict,) = report.tasks
    if verdict.outcome is not Outcome.VALID:
        raise SystemExit(f"{task.name}: {verdict.outcome.value}: {verdict.reason}")
    return wall


def start_cycle(runtime: DockerRuntime, task_dir: Path, image: str) -> tuple[float, float]:
    """(seconds until the container answers its first exec, seconds until all is removed)."""
    task = load_task(task_dir)
    started = time.monotonic()
    box = runtime.start(container_spec(task, image))
    box.wait_ready()
    box.exec(["true"], timeout_sec=30)
    ready = time.monotonic() - started
    mark = time.monotonic()
    box.close()
    label = f"{LABEL_RUN}={runtime.run_id}"
    while runtime.api.containers(all=True, filters={"label": label}) or [
        n for n in runtime.api.networks(filters={"label": label})
    ]:
        time.sleep(0.05)
    return ready, time.monotonic() - mark


def main() -> None:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-sidecars-"))
    tasks = {"single": single_twin(folder), "multi": MULTI}
    results: dict[str, dict[str, list[float]]] = {
        name: {"validate": [], "start": [], "removed": []} for name in tasks
    }
    runtime = DockerRuntime(new_run_id("bench-sidecars"))
    try:
        builder = TaskImageBuilder(runtime)
        images = {name: builder.ensure(load_task(path)).ref for name, path in tasks.items()}
        for round_ in range(1, args.rounds + 1):
            order = list(tasks) if round_ % 2 else list(reversed(tasks))
            for name in order:
                wall = validate_wall(runtime, tasks[name], folder / f"out-{name}-{round_}")
                ready, removed = start_cycle(runtime, tasks[name], images[name])
                for key, value in (("validate", wall), ("start", ready), ("removed", removed)):
                    results[name][key].append(value)
                print(
                    f"round {round_} {name:6s} validate {wall:6.2f} s  start {ready:5.2f} s  "
                    f"removed {removed:5.2f} s",
                    flush=True,
                )
    finally:
        runtime.close()
        shutil.rmtree(folder, ignore_errors=True)
    print("\nmedians")
    for key in ("validate", "start", "removed"):
        single = statistics.median(results["single"][key])
        multi = statistics.median(results["multi"][key])
        print(f"{key:9s} single {single:6.2f} s  multi {multi:6.2f} s  (+{multi - single:.2f} s)")


if __name__ == "__main__":
    main()
