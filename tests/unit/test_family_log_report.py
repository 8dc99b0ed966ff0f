"""log-report's hard grammar, without Docker: what each draft plants, that the instruction
names none of its traps, and that the reference (run in a scratch root, paths prefixed) gets
the exact report while each near miss that leaves one fault unfixed does not."""

from __future__ import annotations

from functools import partial

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.import_job import IMPORT_TRAPS
from factory.families.terminal.log_report.family import LR_HARD_FAULTS, LR_TRAPS
from factory.vocabulary import Difficulty

FAMILY = registry.get("log-report")
HARD = Difficulty.HARD


draft = grammar.drafter(FAMILY)

solution = partial(grammar.solution, FAMILY)


def test_hard_composes_two_to_four_sub_problems():
    grammar.check_hard_grammar(draft, LR_HARD_FAULTS, {**LR_TRAPS, **IMPORT_TRAPS})


def test_hard_instructions_name_no_trap():
    hard = grammar.check_hard_instructions(
        FAMILY, draft, range(1, 60), difficulty="hard", task_id="t"
    )
    for d, text in hard:
        assert ("sha256sum -c" in text) == ("checksum" in d.faults)


def test_the_number_of_steps_grows_with_difficulty():
    grammar.assert_steps_grow(FAMILY, draft)


def test_the_reference_reads_only_this_tasks_rotations():
    for seed in range(1, 30):
        d = draft(HARD, seed)
        script = solution(d)
        assert ("iconv -f UTF-16" in script) == ("utf16-rotation" in d.faults)
        assert ("xz -dc" in script) == ("xz-rotation" in d.faults)
        assert ("chgrp" in script) == ("consumer-perms" in d.faults)
        assert ("source = " in script) == ("import-config" in d.faults)
        assert ("checksum = " in script) == ("config-syntax" in d.faults)
        assert ("gzip.open" not in script) and ('BUG == "skip-rotated"' not in script)
        if "olddir" in d.faults:
            assert d.context["archive"] in script


def _materialise(d, root: str) -> None:
    ctx = d.context
    dirs = {"logs": ctx["logdir"], "archive": ctx["archive"]}
    grammar.write_import_task(
        d,
        root,
        lambda p: f"{dirs[p[1]]}/{p[2]}" if p[1] in dirs else None,
        logrotate=ctx["logrotate"],
    )


def _run(d, script: str, root: str) -> tuple[str | None, bool]:
    """(the report, whether the import job takes it) after running ``script`` in ``root``."""
    ctx = d.context
    imported, out = grammar.run_and_import(d, script, root, [ctx["logdir"], ctx["logrotate"]])
    return (out.read_text() if out.is_file() else None), imported


@grammar.needs_tools("iconv", "zcat", "xz", "sha256sum")
@pytest.mark.parametrize("seed", range(1, 9))
def test_each_fault_left_unfixed_breaks_the_outcome(seed, tmp_path):
    d = draft(HARD, seed)
    good = (d.context["expected"], True)
    grammar.check_each_unfixed_fault(d, solution(d), tmp_path, _materialise, _run, good)
