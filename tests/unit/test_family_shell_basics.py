"""shell-basics at hard, without Docker: five or six questions about as many lists, two to four
of them shipped in a shape the instruction does not name. The reference runs here (bash and the
classic tools) on the shipped files in a scratch root and writes the expected report; each near
miss (one quirky list read as shipped, a wrong command, the wrong file) gets an answer wrong."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.shell_basics.hard import BREAKS, QUIRKS, TRAPS
from factory.vocabulary import Difficulty

FAMILY = registry.get("shell-basics")
HARD = Difficulty.HARD
draft = grammar.drafter(FAMILY)
needs_tools = grammar.needs_tools("bash", "zcat", "iconv", "awk", "sed", "tr", "sort")


def hard_script(d, name: str = "solution/solve.sh.j2", **extra) -> str:
    return grammar.render(FAMILY, d, name, difficulty="hard", **extra)


def run_in(d, script: str, root: Path) -> list[str]:
    """``script`` run with every task path moved below ``root`` (the shipped lists written
    there first); the report's lines as the tests read them."""
    grammar.write_shipped(d, root, "environment/lists/")
    out = d.context["out"]
    (root / out.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    (root / "tmp").mkdir(exist_ok=True)
    prefixes = sorted(
        {s.folder for s in d.context["sources"]} | {out, "/tmp"}, key=len, reverse=True
    )
    pattern = re.compile(r"(?<=[\s<>'])(" + "|".join(map(re.escape, prefixes)) + r")(?=[/\s.]|$)")
    script = pattern.sub(lambda m: f"{root}{m.group(1)}", script)
    subprocess.run(["bash", "-c", script], capture_output=True, timeout=60)
    report = root / out.lstrip("/")
    if not report.is_file():
        return []
    lines = report.read_bytes().decode("utf-8", errors="replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.strip(" \t") for line in lines]


def expected(d) -> list[str]:
    return [answer for _question, answer in d.context["answers"]]


def test_hard_composes_quirks_from_the_grammar():
    drafts = grammar.check_hard_grammar(draft, QUIRKS, TRAPS)
    for d in drafts:
        sources = d.context["sources"]
        assert 5 <= len(sources) <= 6
        questions = [s.question for s in sources]
        assert len(set(questions)) == len(questions)
        for s in sources:
            assert s.quirk is None or s.question in BREAKS[s.quirk]


def test_hard_instructions_name_no_quirk():
    words = ("gzip", "utf-16", "crlf", "latin", "split", "newline", "bom", "encoding", "\\r")
    grammar.check_hard_instructions(FAMILY, draft, range(1, 60), words, difficulty="hard")


def test_hard_median_steps():
    assert grammar.median_steps(lambda seed: hard_script(draft(HARD, seed)), range(1, 60)) >= 8


@needs_tools
@pytest.mark.parametrize("seed", range(1, 25))
def test_hard_reference_answers_and_each_near_miss_does_not(seed, tmp_path):
    d = draft(HARD, seed)
    assert run_in(d, hard_script(d), tmp_path / "ref") == expected(d)
    for name, script in d.mutations.items():
        assert run_in(d, script, tmp_path / name) != expected(d), name
    for name in ("near-miss", "wrong-place"):
        script = hard_script(d, f"mutations/{name}.sh.j2")
        assert run_in(d, script, tmp_path / name) != expected(d), name


@needs_tools
def test_each_quirk_alone_breaks_its_own_answer(tmp_path):
    """Left alone, a quirk changes the answer of the question on its list, and only that one."""
    seen = set()
    for seed in range(1, 41):
        d = draft(HARD, seed)
        for index, s in enumerate(d.context["sources"]):
            if not s.quirk or s.quirk in seen:
                continue
            seen.add(s.quirk)
            got = run_in(d, d.mutations[f"unfixed-{s.quirk}"], tmp_path / s.quirk)
            want = expected(d)
            assert got[:index] == want[:index] and got[index : index + 1] != want[index : index + 1]
    assert seen == set(QUIRKS)


def test_easy_and_medium_stay_one_liners():
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        d = draft(level, 1)
        assert not d.faults and not d.traps and not d.mutations
        text = grammar.render(FAMILY, d, "solution/solve.sh.j2", difficulty=level.value)
        assert text == f"#!/bin/bash\n{d.context['command']} > {d.context['out']}\n"
