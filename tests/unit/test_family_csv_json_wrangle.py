"""csv-json-wrangle's hard grammar, without Docker: what each draft plants, that the
instruction names none of its traps, and that the reference (run in a scratch root, paths
prefixed) writes the expected output that the import job takes, while each near miss that
leaves one fault unfixed does not."""

from __future__ import annotations

from functools import partial

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.csv_json_wrangle.family import CJ_HARD_FAULTS, CJ_TRAPS
from factory.families.terminal.csv_json_wrangle.shipped.reference import _cj_same, parse_result
from factory.families.terminal.import_job import IMPORT_TRAPS
from factory.vocabulary import Difficulty

FAMILY = registry.get("csv-json-wrangle")
HARD = Difficulty.HARD


draft = grammar.drafter(FAMILY)

solution = partial(grammar.solution, FAMILY)


def test_hard_composes_two_to_four_sub_problems():
    grammar.check_hard_grammar(draft, CJ_HARD_FAULTS, {**CJ_TRAPS, **IMPORT_TRAPS})


def test_hard_instructions_name_no_trap():
    grammar.check_hard_instructions(FAMILY, draft, range(1, 60), difficulty="hard", task_id="t")


def test_the_inputs_carry_the_planted_faults():
    for seed in range(1, 40):
        d = draft(HARD, seed)
        data = {k.rsplit("/", 1)[1]: v for k, v in d.files.items() if "/data/" in k}
        main = d.context["main"]
        assert (f"{main}.1.gz" in data) == ("split-export" in d.faults)
        raw = [
            v if isinstance(v, bytes) else v.encode() for k, v in data.items() if k[-3:] != ".gz"
        ]
        legacy = any(not grammar.is_utf8(v) for v in raw)
        assert legacy == ("legacy-encoding" in d.faults)
        script = solution(d)
        assert ("iconv -f ISO-8859-1" in script) == legacy
        assert ("xEF" in script) == ("bom" in d.faults)


def test_the_number_of_steps_grows_with_difficulty():
    grammar.assert_steps_grow(FAMILY, draft)


def _materialise(d, root: str) -> None:
    srcdir = d.context["srcdir"]
    grammar.write_import_task(d, root, lambda p: f"{srcdir}/{p[2]}" if p[1] == "data" else None)


def _run(d, script: str, root: str) -> tuple[bool, bool]:
    """(whether the output is the expected one, whether the import job takes it)."""
    ctx = d.context
    imported, out = grammar.run_and_import(d, script, root, [ctx["srcdir"]])
    try:
        got = parse_result(out.read_text(), ctx["shape"])
    except (OSError, ValueError):
        return False, imported
    return _cj_same(got, ctx["expected"]), imported


@grammar.needs_tools("iconv", "zcat", "sed", "sha256sum")
@pytest.mark.parametrize("seed", range(1, 9))
def test_each_fault_left_unfixed_breaks_the_outcome(seed, tmp_path):
    d = draft(HARD, seed)
    grammar.check_each_unfixed_fault(d, solution(d), tmp_path, _materialise, _run, (True, True))
