"""text-transform's hard grammar, without Docker: what each draft plants, that the instruction
names none of its traps, and that the reference (run in a scratch root, paths prefixed) writes
the expected CSV that the import job takes, while each near miss that leaves one fault unfixed
does not."""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.import_job import IMPORT_TRAPS
from factory.families.terminal.text_transform.hard import (
    TT_HARD_FAULTS,
    TT_TRAPS,
    data_lines,
)
from factory.families.terminal.text_transform.report import parse_report
from factory.vocabulary import Difficulty

FAMILY = registry.get("text-transform")
HARD = Difficulty.HARD


draft = grammar.drafter(FAMILY)


def solution(d, level: Difficulty = HARD) -> str:
    return grammar.solution(FAMILY, d, level)


def test_hard_composes_two_to_four_sub_problems():
    drafts = grammar.check_hard_grammar(draft, TT_HARD_FAULTS, {**TT_TRAPS, **IMPORT_TRAPS})
    assert {d.context["shape"] for d in drafts} == {"report"}


def test_hard_instructions_name_no_trap():
    checked = grammar.check_hard_instructions(
        FAMILY, draft, range(1, 60), difficulty="hard", task_id="t"
    )
    for d, text in checked:
        words = " ".join(text.split())
        assert "on every page from page 1 on" in words and d.context["job"]["run"] in words


def _report(d) -> tuple[dict[str, bytes], str]:
    """The export's files (name -> bytes) and the report's text as the reference repairs it."""
    stored = {
        k.rsplit("/", 1)[1]: v if isinstance(v, bytes) else v.encode()
        for k, v in d.files.items()
        if "/data/" in k
    }
    utf16 = "utf16-export" in d.faults
    parts = [gzip.decompress(v) for k, v in stored.items() if k.endswith(".gz")]
    parts += [v for k, v in stored.items() if not k.endswith(".gz")]
    text = "".join(p.decode("utf-16" if utf16 else "utf-8") for p in parts)
    return stored, text


def test_the_export_carries_the_planted_faults():
    for seed in range(1, 60):
        d = draft(HARD, seed)
        stored, text = _report(d)
        assert any(k.endswith(".1.gz") for k in stored) == ("rotated-pages" in d.faults)
        raw = [v for k, v in stored.items() if not k.endswith(".gz")][0]
        assert raw.startswith(b"\xff\xfe") == ("utf16-export" in d.faults)
        spec = d.context["spec"]
        lines = text.split("\n")
        tabbed = [i for i in data_lines(text, spec) if "\t" in lines[i]]
        assert bool(tabbed) == ("tab-padding" in d.faults)
        assert "\t" not in "".join(lines[i] for i in range(len(lines)) if i not in tabbed)
        # the repaired text is the report: its data rows are the expected CSV rows
        assert parse_report(text.expandtabs(8), spec) == d.context["expected"]
        script = solution(d)
        assert bool(re.search(r"\bexpand\b", script)) == ("tab-padding" in d.faults)
        assert ("zcat" in script) == ("rotated-pages" in d.faults)
        assert ("iconv -f UTF-16" in script) == ("utf16-export" in d.faults)


def test_easy_and_medium_keep_their_draws():
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        for seed in range(1, 6):
            d = draft(level, seed)
            assert not d.faults and not d.traps and not d.collect and "job" not in d.context


def test_the_number_of_steps_grows_with_difficulty():
    grammar.assert_steps_grow(FAMILY, draft)


def _materialise(d, root: str) -> None:
    src = d.context["srcdir"]
    grammar.write_import_task(
        d, root, lambda parts: f"{src}/{parts[2]}" if parts[1] == "data" else None
    )
    Path(root + "/tmp").mkdir(exist_ok=True)


def _run(d, script: str, root: str) -> tuple[bool, bool]:
    """(whether the CSV holds the expected rows, whether the import job takes it)."""
    ctx = d.context
    imported, out = grammar.run_and_import(d, script, root, [ctx["srcdir"]])
    if not out.is_file():
        return False, imported
    with out.open(newline="") as fh:
        return list(csv.reader(fh)) == ctx["expected"], imported


def _seeds() -> list[int]:
    """Hard seeds that cover every input fault (twice) and every fault of the job."""
    seeds: list[int] = []
    for fault in TT_HARD_FAULTS:
        seeds += [s for s in range(1, 100) if fault in draft(HARD, s).faults and s not in seeds][:2]
    return sorted(seeds)


@grammar.needs_tools("iconv", "zcat", "expand", "od", "sha256sum")
@pytest.mark.parametrize("seed", _seeds())
def test_each_fault_left_unfixed_breaks_the_outcome(seed, tmp_path):
    d = draft(HARD, seed)
    grammar.check_each_unfixed_fault(d, solution(d), tmp_path, _materialise, _run, (True, True))
    for index in (1, 2, 3):  # the templates' near misses, after the same repairs
        script = grammar.render(FAMILY, d, f"mutations/near-miss-{index}.sh.j2", difficulty="hard")
        root = str(tmp_path / f"near-miss-{index}")
        _materialise(d, root)
        assert _run(d, script, root)[0] is False, index
