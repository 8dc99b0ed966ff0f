"""shell-script at hard, without Docker: the tool is a broken draft to repair. The reference's
sed edits, run here on the draft, give the reference tool byte for byte; each near miss leaves
exactly its one defect; and the task's own tests (rendered, run here with pytest on bash) reject
every bug of every kind and each defect of the file."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.shell_script.repair import BUGS, PACKAGING, TRAPS
from factory.vocabulary import Difficulty

FAMILY = registry.get("shell-script")
HARD = Difficulty.HARD
draft = grammar.drafter(FAMILY)
needs_tools = grammar.needs_tools("bash", "sed", "awk", "find", "gzip")


def kind_draft(kind: str, seed: int):
    return FAMILY.draft(random.Random(seed), HARD, {"kind": kind})


def run_repair(d, script: str, tmp_path: Path) -> Path:
    """``script`` (a repair) run on the shipped draft, moved to ``tmp_path``; the result."""
    path = d.context["path"]
    target = tmp_path / "tool"
    name = path.rsplit("/", 1)[1]
    target.write_bytes(d.files[f"environment/draft/{name}"])
    target.chmod(int(d.context["draft_mode"], 8))
    subprocess.run(["bash", "-c", script.replace(path, str(target))], check=True, timeout=60)
    return target


def task_tests_pass(d, tool: Path, tmp_path: Path) -> bool:
    """Whether the task's rendered tests pass with ``tool`` in place of the script."""
    text = FAMILY.template("tests/test_outputs.py.j2").render(**d.context)
    text = text.replace(f"SCRIPT = {d.context['path']!r}", f"SCRIPT = {str(tool)!r}", 1)
    test = tmp_path / "test_task.py"
    test.write_text(text)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", str(test)],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
    )
    return run.returncode == 0


def test_hard_composes_bugs_and_file_defects():
    drafts = [draft(HARD, seed) for seed in range(1, 101)]
    assert len({tuple(d.faults) for d in drafts}) >= 50
    for d in drafts[:40]:
        bugs = [f for f in d.faults if f not in PACKAGING]
        packaging = [f for f in d.faults if f in PACKAGING]
        assert 6 <= len(bugs) <= 7 and set(bugs) <= set(BUGS[d.context["kind"]])
        assert 1 <= len(packaging) <= 2
        # the separate verifier restores /usr/local/bin from the image, draft and all
        assert not d.context["path"].startswith("/usr/local/")
        grammar.assert_traps_match(d, TRAPS)
        near = {f"unfixed-{f}" for f in d.faults}
        assert set(d.mutations) - near == (
            {"tail-join"} if d.context["kind"] == "csv-filter" else set()
        )
    assert not draft(Difficulty.EASY, 1).faults and not draft(Difficulty.MEDIUM, 1).faults


def test_hard_instruction_names_no_defect_and_steps():
    words = ("crlf", "carriage", "chmod", "/bin/sh", "bug")
    grammar.check_hard_instructions(FAMILY, draft, range(1, 40), words)
    script = lambda seed: grammar.render(FAMILY, draft(HARD, seed), "solution/solve.sh.j2")  # noqa: E731
    assert grammar.median_steps(script, range(1, 60)) >= 8


@needs_tools
@pytest.mark.parametrize("seed", range(1, 13))
def test_hard_repair_gives_the_reference_and_each_near_miss_its_one_defect(seed, tmp_path):
    d = draft(HARD, seed)
    reference = FAMILY.tool(d.context, []).encode()
    solve = grammar.render(FAMILY, d, "solution/solve.sh.j2")
    tool = run_repair(d, solve, tmp_path)
    assert tool.read_bytes() == reference and os.access(tool, os.X_OK)
    for fault in d.faults:
        tool = run_repair(d, d.mutations[f"unfixed-{fault}"], tmp_path)
        got = tool.read_bytes()
        if fault == "no-exec":
            assert got == reference and not os.access(tool, os.X_OK)
        elif fault == "crlf":
            assert b"\r\n" in got  # (a /bin/sh shebang then stays too: `$` misses the \r)
        elif fault == "sh-shebang":
            assert got == reference.replace(b"#!/bin/bash\n", b"#!/bin/sh\n", 1)
        else:
            assert got == FAMILY.tool(d.context, [fault]).encode(), fault


@needs_tools
@pytest.mark.parametrize("kind", sorted(BUGS))
def test_the_task_tests_reject_every_bug_and_pass_the_reference(kind, tmp_path):
    d = kind_draft(kind, 3)
    tool = tmp_path / "tool"
    for bug in ["", *BUGS[kind]]:
        tool.write_text(FAMILY.tool(d.context, [bug] if bug else []))
        tool.chmod(0o755)
        assert task_tests_pass(d, tool, tmp_path) == (bug == ""), bug or "reference"


@needs_tools
def test_the_task_tests_reject_each_file_defect(tmp_path):
    d = kind_draft("csv-filter", 2)
    reference = FAMILY.tool(d.context, [])
    tool = tmp_path / "tool"
    for defect in PACKAGING:
        text = reference
        if defect == "crlf":
            text = text.replace("\n", "\r\n")
        if defect == "sh-shebang":
            text = text.replace("#!/bin/bash\n", "#!/bin/sh\n", 1)
        tool.write_text(text)
        tool.chmod(0o644 if defect == "no-exec" else 0o755)
        assert not task_tests_pass(d, tool, tmp_path), defect


@needs_tools
def test_the_tail_join_probe_still_scores_zero(tmp_path):
    """Issue 17: a `tail -n +2` join of a file without a final newline and the next file."""
    d = kind_draft("csv-filter", 1)
    script = d.mutations["tail-join"].replace(d.context["path"], str(tmp_path / "tool"))
    subprocess.run(["bash", "-c", script.replace("mkdir -p", ": mkdir -p")], check=True)
    assert not task_tests_pass(d, tmp_path / "tool", tmp_path)
