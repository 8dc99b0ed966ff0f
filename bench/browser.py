"""Browser observation mode: image build time, container readiness and per-action latency.

    .venv/bin/python bench/browser.py [--rounds 5]

Builds the images of web-shop-browser and web-reports (easy, seed 1), timing each build: the
first pays for Chromium's layer unless an earlier build left it, the second reuses it and
pays only for its own app. Then, in a web-reports container, as the agent's user: the time
from start to a passing healthcheck (app and browser up), and the round trip of each
``browse`` action as the agent sees it (the CLI, the service, Chromium, the page settling,
the accessibility tree printed), medians over ``--rounds``.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.families import registry  # noqa: E402
from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402
from factory.images.task_image import TaskImageBuilder  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402
from factory.runtime import DockerRuntime, new_run_id  # noqa: E402
from factory.tasks.model import load_task  # noqa: E402
from factory.validate.phases import container_spec  # noqa: E402


def _image_size(ref: str) -> str:
    out = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Size}}", ref], capture_output=True, text=True
    )
    return f"{int(out.stdout.strip()) / 1e6:.0f} MB" if out.returncode == 0 else "?"


def main() -> None:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runtime = DockerRuntime(new_run_id("bench-browser"))
    root = Path(tempfile.mkdtemp(prefix="bench-browser-"))
    tasks = {}
    for family in ("web-shop-browser", "web-reports"):
        trial = render_trial(family, Difficulty.EASY, 1, root)
        task = load_task(trial.path)
        started = time.monotonic()
        ref = TaskImageBuilder(runtime).ensure(task).ref
        print(f"image {family}: {time.monotonic() - started:.1f} s ({_image_size(ref)})")
        tasks[family] = (task, ref, trial)
    task, ref, _trial = tasks["web-reports"]
    started = time.monotonic()
    with runtime.start(container_spec(task, ref)) as box:
        box.wait_ready()
        print(f"container ready (app + Chromium): {time.monotonic() - started:.1f} s")

        def act(*command: str) -> tuple[float, str]:
            began = time.monotonic()
            result = box.exec(["browse", *command], timeout_sec=120, user="agent")
            assert result.exit_code == 0, result.output
            return time.monotonic() - began, result.output

        def find(page: str, role: str, name: str) -> str:
            return re.search(rf'\[(\d+)\] {role} "{re.escape(name)}"', page).group(1)

        user = registry.get("web-reports").draft(random.Random(1), Difficulty.EASY, {})
        user = [user.context["user"]["username"], user.context["user"]["password"]]
        times: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            box.reset_in_place(timeout_sec=60)  # the runtime's reset: the control channel
            steps = []
            t, page = act("goto", "/login")
            steps.append(("goto (server page)", t))
            t, _ = act("type", find(page, "textbox", "Username"), user[0])
            steps.append(("type", t))
            act("type", find(page, "textbox", "Password"), user[1])
            t, page = act("click", find(page, "button", "Sign in"))
            steps.append(("click (form post + redirect)", t))
            t, page = act("goto", "/report")
            steps.append(("goto (JavaScript page + fetch)", t))
            t, page = act("select", find(page, "combobox", "Region"), "All regions")
            steps.append(("select (script refetches)", t))
            t, page = act("snapshot")
            steps.append(("snapshot", t))
            t, page = act("click", find(page, "button", "Next page"))
            steps.append(("click (client-side pager)", t))
            t, _ = act("back")
            steps.append(("back", t))
            for name, seconds in steps:
                times.setdefault(name, []).append(seconds)
        for name, values in times.items():
            print(f"  {name:32s} median {statistics.median(values):.2f} s  max {max(values):.2f} s")


if __name__ == "__main__":
    main()
