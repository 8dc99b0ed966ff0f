"""Where a browser-mode reset's time goes, in one web-shop-browser container (easy, seed 1).

    .venv/bin/python bench/reset_steps.py [--rounds 7]

Medians over ``--rounds`` of: ``docker exec`` of ``sh -c true`` and of ``python3 -I -S -c
pass`` (the floor every exec'd reset pays), ``/opt/webkit/reset.sh`` back to back and one
second apart (a reset that finds the service still building its spare page waits for it); the
container's control channel (:mod:`factory.runtime.control`): a ``hello`` round trip (the floor
of a reset over it) and ``Sandbox.reset_in_place`` one second apart; and, timed inside one
interpreter, each step of ``reset.py``: the browser reset, the database swap, the gate check.
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

from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402
from factory.images.task_image import TaskImageBuilder  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402
from factory.runtime import DockerRuntime, new_run_id  # noqa: E402
from factory.tasks.model import load_task  # noqa: E402
from factory.validate.phases import container_spec  # noqa: E402

STEPS = """
import statistics, sys, time
sys.path.insert(0, "/opt/browserkit")
import reset
steps = {"browser reset": [], "database swap": [], "gate check": []}
for _ in range(ROUNDS):
    a = time.perf_counter(); assert reset.browser_reset()
    b = time.perf_counter(); reset.swap_database(owner="webapp")
    c = time.perf_counter(); assert reset.app_gated()
    d = time.perf_counter()
    for name, took in zip(steps, (b - a, c - b, d - c)):
        steps[name].append(took)
    time.sleep(1)
for name, took in steps.items():
    print(f"| {name} (inside reset.py) | {1000 * statistics.median(took):.0f} ms "
          f"(max {1000 * max(took):.0f}) |")
"""


def main() -> None:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    runtime = DockerRuntime(new_run_id("bench-reset-steps"))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            trial = render_trial("web-shop-browser", Difficulty.EASY, 1, Path(tmp))
            task = load_task(trial.path)
            image = TaskImageBuilder(runtime).ensure(task).ref
            with runtime.start(container_spec(task, image)) as box:
                box.wait_ready()
                assert box.exec(["browse", "goto", "/login"], timeout_sec=60).exit_code == 0

                def median(command: list[str], pause: float = 0.0) -> float:
                    took = []
                    for _ in range(args.rounds):
                        time.sleep(pause)
                        started = time.perf_counter()
                        result = box.exec(command, timeout_sec=60)
                        took.append(time.perf_counter() - started)
                        assert result.exit_code == 0, result.output
                    return statistics.median(took)

                print("| step | median |\n|---|---|")
                for name, command, pause in (
                    ("docker exec sh -c true", ["sh", "-c", "true"], 0.0),
                    (
                        "docker exec python3 -I -S -c pass",
                        ["python3", "-I", "-S", "-c", "pass"],
                        0.0,
                    ),
                    ("reset.sh, back to back", ["sh", "/opt/webkit/reset.sh"], 0.0),
                    ("reset.sh, 1 s apart", ["sh", "/opt/webkit/reset.sh"], 1.0),
                ):
                    print(f"| {name} | {median(command, pause):.3f} s |", flush=True)
                channel = box.control()

                def channel_median(op, pause: float = 0.0) -> float:
                    took = []
                    for _ in range(args.rounds):
                        time.sleep(pause)
                        started = time.perf_counter()
                        op()
                        took.append(time.perf_counter() - started)
                    return statistics.median(took)

                hello = channel_median(lambda: channel.request("hello", timeout_sec=30))
                print(f"| control channel: hello round trip | {hello:.4f} s |", flush=True)
                reset = channel_median(lambda: box.reset_in_place(timeout_sec=60), 1.0)
                print(f"| control channel: reset_in_place, 1 s apart | {reset:.3f} s |")
                script = STEPS.replace("ROUNDS", str(args.rounds))
                inside = box.exec(["python3", "-I", "-S", "-c", script], timeout_sec=120)
                assert inside.exit_code == 0, inside.output
                print(inside.output.strip())
    finally:
        runtime.close()


if __name__ == "__main__":
    main()
