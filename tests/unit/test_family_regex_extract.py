"""regex-extract's hard grammar, without Docker: what each draft plants, that the instruction
names none of its traps, and that the reference (run in a scratch root, paths prefixed) writes
the expected CSV that the import job takes, while each near miss that leaves one fault
unfixed does not."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.import_job import IMPORT_TRAPS
from factory.families.terminal.regex_extract.family import RX_HARD_FAULTS, RX_TRAPS
from factory.vocabulary import Difficulty

FAMILY = registry.get("regex-extract")
HARD = Difficulty.HARD


draft = grammar.drafter(FAMILY)

solution = partial(grammar.solution, FAMILY)


def test_hard_composes_two_to_four_sub_problems():
    drafts = grammar.check_hard_grammar(draft, RX_HARD_FAULTS, {**RX_TRAPS, **IMPORT_TRAPS})
    for d in drafts[:30]:
        corpus = [k for k in d.files if k.startswith("environment/corpus/")]
        assert any(k.endswith(".gz") for k in corpus) == ("gzip-files" in d.faults)
        assert (d.context["link"] is not None) == ("symlink-dup" in d.faults)
        assert (d.context["utf16"] is not None) == ("utf16-file" in d.faults)


def test_hard_instructions_name_no_trap():
    grammar.check_hard_instructions(FAMILY, draft, range(1, 60), difficulty="hard", task_id="t")


def test_the_number_of_steps_grows_with_difficulty():
    grammar.assert_steps_grow(FAMILY, draft)


def _materialise(d, root: str) -> None:
    ctx = d.context
    grammar.write_import_task(
        d, root, lambda p: ctx["root"] + "/" + "/".join(p[2:]) if p[1] == "corpus" else None
    )
    if ctx["link"]:
        link = Path(root + ctx["root"] + "/" + ctx["link"]["path"])
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(ctx["link"]["target"], link)
    Path(root + "/tmp").mkdir(exist_ok=True)


def _run(d, script: str, root: str) -> tuple[bool, bool]:
    """(whether the output is the expected one, whether the import job takes it)."""
    ctx = d.context
    imported, out = grammar.run_and_import(d, script, root, [ctx["root"]])
    return out.is_file() and out.read_text() == ctx["expected"], imported


@grammar.needs_tools("iconv", "gunzip", "cp", "sha256sum")
@pytest.mark.parametrize("seed", range(1, 9))
def test_each_fault_left_unfixed_breaks_the_outcome(seed, tmp_path):
    d = draft(HARD, seed)
    grammar.check_each_unfixed_fault(d, solution(d), tmp_path, _materialise, _run, (True, True))
