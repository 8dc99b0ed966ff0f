"""Shell basics: one-line jobs with the classic tools (wc, head, tail, sort, uniq, tr, grep,
sed). Small enough that a 135M-parameter model solves some of them, which makes the family the
default for CPU training runs; the easy level names the exact command shape, medium names the
tool. Hard (:mod:`.hard`) asks five or six such questions, each about a list of its own, and
two to four of the lists arrive in a shape the instruction does not name (compressed, another
encoding or line end, cut into pieces...): a fault grammar with one near miss per quirk."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.near_miss import near_misses
from factory.vocabulary import Difficulty

from .hard import draw_sources, traps_of

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
        if difficulty is Difficulty.HARD:
            return self._hard(rng)
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
        return Draft(
            context={
                "job": job,
                "what": what.format(src=src, word=word),
                "tool": tool,
                "command": command.format(src=src, word=word),
                "near_miss": near_miss.format(src=src, word=word),
                "src": src,
                "out": out,
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

    def _hard(self, rng: random.Random) -> Draft:
        """Five or six questions about as many lists; two to four lists quirky (:mod:`.hard`)."""
        sources, out = draw_sources(rng, WORDS, DIRS, OUT_DIRS)
        shipped = {path: data for s in sources for path, data in s.shipped.items()}
        context = {
            "out": out,
            "sources": sources,
            "answers": [(s.question, s.answer) for s in sources],
            "shipped": {p: hashlib.sha256(data).hexdigest() for p, data in sorted(shipped.items())},
        }
        quirks = [s.quirk for s in sources if s.quirk]
        mutations = near_misses(self, context, quirks, key="unfixed", difficulty="hard")
        return Draft(
            context=context,
            files={f"environment/lists{path}": data for path, data in shipped.items()},
            outputs=[out],
            separate_verifier=True,
            kept=sorted(shipped),
            mutations=mutations,
            faults=[s.quirk for s in sources if s.quirk],
            traps=traps_of(sources),
            agent_timeout_sec=600.0,
            verifier_timeout_sec=60.0,
            memory_mb=512,
            tags=["beginner", *sorted({s.question for s in sources})],
        )
