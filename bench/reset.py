"""Per-rollout state for web and tool environments: reset time and parallel isolation.

    .venv/bin/python bench/reset.py [--rounds 5] [--resets 2] [--parallel 4]

For one web task (web-shop), its browser observation mode (web-shop-browser) and one tool task
(tool-calendar), images built if missing (``--families`` picks some), it measures side by
side, interleaved round by round (medians, these machines are noisy):

* fresh container: create + start + healthcheck passes (what every rollout gets by default);
* in-place reset of a used container, two ways, alternating which goes first:
  - ``exec``: a ``docker exec`` per reset - web ``/opt/webkit/reset.sh`` (swap the pristine
    sqlite file in while the app runs, check it is healthy; in browser mode also the browser
    reset: a new browser context, the old one's cookies, storage, cache and history gone); tool
    ``python3 -m toolenv.admin reset`` (``POST /reset`` on the tool server's admin socket,
    which only root can reach);
  - ``channel``: :meth:`factory.runtime.Sandbox.reset_in_place`, the runtime's reset: one
    request over the container's root control channel (:mod:`factory.runtime.control`),
    opened once per container (its opening is reported apart), the same work done in the
    already running root process (browser mode: ``reset.py``'s ``main()``);
* each reset after the reference solution changed the state (``--resets`` times per way and
  container), and checked: after the reset the state equals the initial one (browser mode: the
  database, the page the browser shows, and the shop's front page as the browser sees it -
  signed in or not: its session cookie; storage and cache are checked by
  tests/integration/test_browser_mode_docker.py and the unit tests).

Parallel isolation: ``--parallel`` containers of the same task start together; the reference
solution runs in the first only; every other one must still show the initial state, and the
first must show the solved state. Reported as leaks (must be 0) and the wall time to get all
of them ready.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402
from factory.images.task_image import TaskImageBuilder  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402
from factory.runtime import DockerRuntime, Sandbox, new_run_id  # noqa: E402
from factory.tasks.model import load_task  # noqa: E402
from factory.validate.phases import container_spec  # noqa: E402

WEB_STATE = (  # python3's sqlite3: the browser-mode image has no sqlite3 command
    "python3 -c \"import sqlite3; db = sqlite3.connect('/srv/app/data/app.db'); "
    "print(db.execute('SELECT COUNT(*) FROM orders').fetchone()[0]); "
    "print(db.execute('SELECT SUM(stock) FROM products').fetchone()[0])\""
)
BROWSER_STATE = (  # the page the browser shows, then the shop's front page as it sees it
    # (signed in or not: the session cookie), its element ids and focus left out
    "browse snapshot | head -1 && browse goto / | sed -E 's/\\[[0-9]+\\] //; s/ focused$//'"
)
TOOL_STATE = (  # the admin socket (root only): the agent's port serves no state or reset
    "PYTHONPATH=/opt/toolenv python3 -m toolenv.admin state | python3 -c "
    "\"import json,sys;print(json.dumps(json.load(sys.stdin)['state'], sort_keys=True))\""
)
TOOL_RESET = "PYTHONPATH=/opt/toolenv python3 -m toolenv.admin reset"


FAMILIES = ("web-shop", "web-shop-browser", "tool-calendar")


class Subject:
    def __init__(self, runtime: DockerRuntime, family: str, root: Path) -> None:
        trial = render_trial(family, Difficulty.EASY, 1, root)
        self.family = family
        self.task = load_task(trial.path)
        self.image = TaskImageBuilder(runtime).ensure(self.task).ref
        self.solve = (trial.path / "solution" / "solve.sh").read_text()
        self.web = family.startswith("web-")
        self.browser = family.endswith("-browser")
        self.runtime = runtime

    def fresh(self) -> tuple[Sandbox, float]:
        started = time.perf_counter()
        box = self.runtime.start(container_spec(self.task, self.image))
        box.wait_ready()
        return box, time.perf_counter() - started

    def state(self, box: Sandbox) -> str:
        out = box.exec(["sh", "-c", WEB_STATE if self.web else TOOL_STATE], timeout_sec=30)
        assert out.exit_code == 0, out.output
        if not self.browser:
            return out.output.strip()
        seen = box.exec(["sh", "-c", BROWSER_STATE], timeout_sec=60, user="agent")
        assert seen.exit_code == 0, seen.output
        return out.output.strip() + "\n" + seen.output.strip()

    def solve_in(self, box: Sandbox) -> None:
        result = box.exec(["bash", "-c", self.solve], timeout_sec=120)
        assert result.exit_code == 0, result.output

    def reset_exec(self, box: Sandbox) -> float:
        """The reset as one ``docker exec`` (the way before the control channel)."""
        started = time.perf_counter()
        command = ["sh", "/opt/webkit/reset.sh"] if self.web else ["sh", "-c", TOOL_RESET]
        result = box.exec(command, timeout_sec=30)
        assert result.exit_code == 0, result.output
        return time.perf_counter() - started

    def reset_channel(self, box: Sandbox) -> float:
        """The runtime's reset: one request over the container's control channel."""
        started = time.perf_counter()
        reply = box.reset_in_place(timeout_sec=30)
        took = time.perf_counter() - started
        assert reply["kinds"] == (
            ["browser"] if self.browser else ["web"] if self.web else ["tool"]
        )
        return took


WAYS = ("exec", "channel")


def one_round(subject: Subject, index: int, resets: int) -> dict[str, list[float]]:
    """A fresh container's start, the channel's opening, and ``resets`` resets each way of it
    once the solution changed its state (which way goes first alternates by round)."""
    box, fresh = subject.fresh()
    seen: dict[str, list[float]] = {"fresh": [fresh], **{way: [] for way in WAYS}}
    with box:
        initial = subject.state(box)
        started = time.perf_counter()
        box.control()
        seen["open"] = [time.perf_counter() - started]
        order = WAYS if index % 2 == 0 else WAYS[::-1]
        for _ in range(resets):
            for way in order:
                subject.solve_in(box)
                assert subject.state(box) != initial, "the solution changed nothing"
                reset = subject.reset_exec if way == "exec" else subject.reset_channel
                seen[way].append(reset(box))
                after = subject.state(box)
                assert after == initial, (
                    f"{way} reset did not restore the initial state:\n{initial}\n---\n{after}"
                )
    return seen


def measure(subjects: list[Subject], rounds: int, resets: int) -> dict[str, dict[str, list]]:
    """Each subject once per round, round by round (the machine's load then hits all alike)."""
    seen: dict[str, dict[str, list[float]]] = {s.family: {} for s in subjects}
    for index in range(rounds):
        for subject in subjects:
            for key, values in one_round(subject, index, resets).items():
                seen[subject.family].setdefault(key, []).extend(values)
    return seen


def isolation(subject: Subject, parallel: int) -> tuple[int, float]:
    started = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        boxes = [box for box, _ in pool.map(lambda _: subject.fresh(), range(parallel))]
    ready = time.perf_counter() - started
    leaks = 0
    try:
        # Reading a browser-mode state navigates the browser to the front page, so the first
        # read changes the page the next one reports; read once to settle it, then compare.
        for box in boxes:
            subject.state(box)
        initial = [subject.state(box) for box in boxes]
        subject.solve_in(boxes[0])
        after = [subject.state(box) for box in boxes]
        leaks += sum(1 for a, b in zip(initial[1:], after[1:], strict=True) if a != b)
        leaks += int(after[0] == initial[0])  # the solved one must have changed
    finally:
        for box in boxes:
            box.close()
    return leaks, ready


def main() -> None:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--resets", type=int, default=2, help="resets each way per container")
    parser.add_argument("--parallel", type=int, default=4, help="0: no isolation check")
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    args = parser.parse_args()
    runtime = DockerRuntime(new_run_id("bench-reset"))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            subjects = [Subject(runtime, f, Path(tmp)) for f in args.families]
            print(
                "| environment | fresh container (start + healthy) | reset: docker exec "
                "(median / max) | reset: control channel (median / max) | channel opening "
                "| channel / fresh | parallel containers | ready (wall) | state leaks |"
            )
            print("|---|---|---|---|---|---|---|---|---|")
            measured = measure(subjects, args.rounds, args.resets)
            for subject in subjects:
                seen = measured[subject.family]
                fresh, channel = statistics.median(seen["fresh"]), seen["channel"]
                isolated = "- | - | -"  # --parallel 0: not measured
                if args.parallel:
                    leaks, ready = isolation(subject, args.parallel)
                    isolated = f"{args.parallel} | {ready:.2f} s | {leaks}"
                print(
                    f"| {subject.family} | {fresh:.2f} s | {spread(seen['exec'])} | "
                    f"{spread(channel)} | {statistics.median(seen['open']):.3f} s | "
                    f"{statistics.median(channel) / fresh:.2f} | {isolated} |",
                    flush=True,
                )
            print(
                f"\n{args.rounds} rounds each, {args.resets} resets each way per round; medians; "
                "a WebArena-style full reset takes ~120 s."
            )
    finally:
        runtime.close()


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s / {max(values):.3f} s"


if __name__ == "__main__":
    main()
