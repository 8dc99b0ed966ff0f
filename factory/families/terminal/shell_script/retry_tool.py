"""shell-script's retry tool: run a command until it succeeds, with attempts and back-off; its
model and test cases."""

from __future__ import annotations

import random

from .options import POSITIVE, parse_options

RETRY_NAMES = ["retry", "again", "persist", "tryhard", "rerun", "keeptrying", "redo"]


def _retry_model(spec: dict, args: list[str], seq: list[int]) -> dict:
    """seq: exit codes the flaky command returns on successive runs (0 = success)."""
    name, codes, level = spec["name"], spec["codes"], spec["level"]
    usage = {"stdout": "", "code": codes["usage"], "stderr": None, "runs": 0}
    takes = {"-n": (0, POSITIVE), "-d": (1, r"[0-9]+"), "-r": (2, r"[0-9]+(,[0-9]+)*")}
    parsed = parse_options(args, level, takes)
    if parsed is None:
        return usage
    given, rest = parsed
    n, delay = int(given.get("-n", spec["attempts"])), int(given.get("-d", 0))
    retry_on = {int(x) for x in given["-r"].split(",")} if "-r" in given else None
    if not rest:
        return usage
    cmd_args = rest[1:]
    lines, out, runs, code, sleeps = [], "", 0, 0, 0
    for attempt in range(1, n + 1):
        code = seq[min(attempt - 1, len(seq) - 1)]
        runs += 1
        out += f"run {runs}: " + "|".join(cmd_args) + "\n"
        if code == 0:
            break
        lines.append(f"{name}: attempt {attempt}/{n} failed with exit {code}")
        if retry_on is not None and code not in retry_on:
            lines.append(f"{name}: exit {code} is not retryable")
            break
        if attempt == n:
            lines.append(f"{name}: giving up after {n} attempts")
        else:
            sleeps += delay
    return {"stdout": out, "code": code, "stderr_lines": lines, "runs": runs, "sleep": sleeps}


def retry_cases(rng: random.Random, level: int, spec: dict) -> list[dict]:
    spec["attempts"] = rng.choice([3, 4, 5])
    cases = []
    fail = rng.sample(
        [c for c in [3, 4, 5, 6, 7, 9, 11, 13, 42, 99] if c != spec["codes"]["usage"]], 4
    )
    n = spec["attempts"]

    def add(args, seq, why):
        cases.append({"args": args, "seq": seq, "why": why} | _retry_model(spec, args, seq))

    words = ["hello world", "a  b", "*", "--flag", "", "x'y", "$HOME", "tab\there"]
    arg_sets = [rng.sample(words, 3) for _ in range(4)]
    add(["FLAKY", *arg_sets[0]], [0], "success at once")
    add(["FLAKY", *arg_sets[1]], [fail[0], fail[1], 0], "succeeds on the third try")
    add(["FLAKY", "one arg"], [fail[2]] * (n + 2), "always fails: last status")
    add(["-n", "2", "--", "FLAKY", *arg_sets[2]], [fail[0], fail[3], 0], "-n 2 gives up")
    add(["-n", "1", "FLAKY"], [fail[1]], "single attempt")
    add([], [0], "no command")
    add(["-n", "0", "FLAKY"], [0], "bad count")
    add(["-n", "two", "FLAKY"], [0], "bad count")
    if level >= 1:
        add(["-d", "1", "-n", "3", "FLAKY", *arg_sets[3]], [fail[2], 0], "delay between tries")
        add(["-n", "2", "-d", "1", "FLAKY"], [fail[0], fail[0]], "no delay after the last")
        add(["-d", "-1", "FLAKY"], [0], "bad delay")
        add(["-z", "FLAKY"], [0], "unknown option")
    if level >= 2:
        a, b = fail[0], fail[1]
        add(["-r", f"{a},{b}", "-n", "5", "FLAKY", "x y"], [a, b, a, 0], "retryable codes")
        add(["-r", f"{a}", "FLAKY", "z"], [a, fail[3], 0], "non-retryable code stops")
        add(["-r", "1,,2", "FLAKY"], [0], "bad code list")
    return cases
