"""Shell basics: one-line jobs with the classic tools (wc, head, tail, sort, uniq, tr, grep,
sed). Small enough that a 135M-parameter model solves some of them, which makes the family the
default for CPU training runs; the easy level names the exact command shape, medium names the
tool, hard names neither and adds a second step."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.vocabulary import Difficulty

WORDS = [
    "apple",
    "birch",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "grove",
    "heron",
    "iris",
    "juniper",
    "kestrel",
    "lotus",
    "maple",
    "nectar",
    "onyx",
    "pine",
    "quartz",
    "raven",
    "sage",
    "tulip",
    "umber",
    "violet",
    "willow",
    "yarrow",
    "zephyr",
]
DIRS = ["/data", "/srv/input", "/home/user/files", "/opt/job", "/var/tmp/work"]
OUT_DIRS = ["/app", "/output", "/home/user"]

# name -> (what to compute, tool hint, command template, near-miss command template)
JOBS: dict[str, tuple[str, str, str, str]] = {
    "count-lines": ("the number of lines in {src}", "wc -l", "wc -l < {src}", "wc -w < {src}"),
    "count-words": ("the number of words in {src}", "wc -w", "wc -w < {src}", "wc -l < {src}"),
    "first-line": ("the first line of {src}", "head", "head -n 1 {src}", "head -n 2 {src}"),
    "last-line": ("the last line of {src}", "tail", "tail -n 1 {src}", "head -n 1 {src}"),
    "sorted": ("the lines of {src} sorted alphabetically", "sort", "sort {src}", "sort -r {src}"),
    "unique": ("the distinct lines of {src}, sorted", "sort -u", "sort -u {src}", "sort {src}"),
    "upper": ("the contents of {src} in upper case", "tr", "tr a-z A-Z < {src}", "cat {src}"),
    "count-match": (
        "how many lines of {src} contain the word {word}",
        "grep -c",
        "grep -c {word} {src}",
        "grep -c -v {word} {src}",
    ),
    "max-number": (
        "the largest number in {src} (one number per line)",
        "sort -n",
        "sort -n {src} | tail -n 1",
        "sort {src} | tail -n 1",
    ),
}


@register
class ShellBasics(Family):
    name = "shell-basics"
    title = "One-line jobs with classic shell tools (wc, head, tail, sort, tr, grep)"
    category = "shell-basics"
    default_params: Mapping[str, Any] = {"jobs": sorted(JOBS)}
    """params.jobs: which of the jobs to draw from."""

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        job = rng.choice(list(params.get("jobs") or sorted(JOBS)))
        what, tool, command, near_miss = JOBS[job]
        src = f"{rng.choice(DIRS)}/{rng.choice(WORDS)}-{rng.randint(10, 99)}.txt"
        out = f"{rng.choice(OUT_DIRS)}/{rng.choice(['answer', 'result', 'out'])}.txt"
        word = rng.choice(WORDS)
        if job == "max-number":
            lines = [str(rng.randint(1, 5000)) for _ in range(rng.randint(8, 30))]
            # The maximum has more digits but a low first digit, and a smaller number starts
            # with 9: a text sort then picks the wrong line.
            big, nine = rng.sample(range(len(lines)), 2)
            lines[big] = str(rng.randint(10000, 19999))
            lines[nine] = str(rng.randint(900, 999))
        else:
            lines = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
                for _ in range(rng.randint(6, 25))
            ]
            if job == "count-match":
                # fewer than half of the lines match, so "lines without the word" differs
                for i in rng.sample(range(len(lines)), rng.randint(2, (len(lines) - 1) // 2)):
                    lines[i] = f"{lines[i]} {word}"
            if job == "unique":
                lines += rng.sample(lines, rng.randint(2, len(lines) // 2))
            if job in ("first-line", "last-line"):
                lines[0], lines[-1] = lines[0] + " start", lines[-1] + " end"
        then_sort = difficulty is Difficulty.HARD and job in ("count-match", "upper")
        return Draft(
            context={
                "job": job,
                "what": what.format(src=src, word=word),
                "tool": tool,
                "command": command.format(src=src, word=word),
                "near_miss": near_miss.format(src=src, word=word),
                "src": src,
                "out": out,
                "hard_suffix": then_sort,
            },
            files={"environment/input.txt": "\n".join(lines) + "\n"},
            outputs=[out],
            separate_verifier=True,
            kept=[src],
            agent_timeout_sec=120.0,
            verifier_timeout_sec=60.0,
            memory_mb=512,
            tags=["beginner", job],
        )
