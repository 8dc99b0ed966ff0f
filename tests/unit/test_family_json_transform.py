"""json-transform's hard grammar, without Docker: what each draft plants, that the instruction
names none of its traps, and that the reference (run in a scratch root, paths prefixed) writes
the expected outputs that the import job takes, while each near miss that leaves one fault
unfixed does not."""

from __future__ import annotations

import gzip
from functools import partial
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar
from fixtures.family_tasks import Carried, render_one

from factory.families import registry
from factory.families.terminal.import_job import IMPORT_TRAPS
from factory.families.terminal.json_transform.family import JT_HARD_FAULTS, JT_TRAPS
from factory.tasks.config import TaskConfig
from factory.tasks.lint import lint_task
from factory.vocabulary import Difficulty

FAMILY = registry.get("json-transform")
HARD = Difficulty.HARD


draft = grammar.drafter(FAMILY)


solution = partial(grammar.solution, FAMILY)


def test_hard_composes_two_to_four_sub_problems():
    # one near miss per fault, and the templates' two made after the same repairs
    slips = ["edge-case-slip", "format-slip"]
    traps = {**JT_TRAPS, **IMPORT_TRAPS}
    drafts = grammar.check_hard_grammar(draft, JT_HARD_FAULTS, traps, slips=slips)
    assert {d.context["kind"] for d in drafts} == {"report", "merge", "reshape"}


def test_hard_instructions_name_no_trap():
    grammar.check_hard_instructions(FAMILY, draft, range(1, 60), difficulty="hard", task_id="t")


def _inputs(d) -> dict[str, bytes]:
    return {
        k.rsplit("/", 1)[1]: v if isinstance(v, bytes) else v.encode()
        for k, v in d.files.items()
        if "/input/" in k
    }


def test_the_inputs_carry_the_planted_faults():
    for seed in range(1, 60):
        d = draft(HARD, seed)
        stored = _inputs(d)
        gz = {k.removesuffix(".gz") for k in stored if k.endswith(".gz")}
        assert bool(gz) == ("gzip-input" in d.faults)
        plain = {
            k.removesuffix(".gz"): gzip.decompress(v) if k.endswith(".gz") else v
            for k, v in stored.items()
        }
        assert sorted(plain) == d.context["inputs"]
        boms = [k for k, v in plain.items() if v.startswith(b"\xef\xbb\xbf")]
        assert bool(boms) == ("bom" in d.faults)
        legacy = [k for k, v in plain.items() if not grammar.is_utf8(v)]
        assert bool(legacy) == ("legacy-encoding" in d.faults)
        script = solution(d)
        assert ("iconv -f ISO-8859-1" in script) == bool(legacy)
        assert ("xEF" in script) == bool(boms)
        assert ("zcat" in script) == bool(gz)


def test_easy_and_medium_keep_their_draws():
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        d = draft(level, 1)
        assert not d.faults and not d.traps and not d.collect
        assert "runuser" not in solution(d, level) and "job" not in d.context


def test_the_number_of_steps_grows_with_difficulty():
    grammar.assert_steps_grow(FAMILY, draft)


def _materialise(d, root: str) -> None:
    ctx = d.context
    grammar.write_import_task(
        d,
        root,
        lambda parts: f"{ctx['in_dir']}/{parts[2]}" if parts[1] == "input" else None,
        outdir=ctx["out_dir"],
    )
    Path(root + "/tmp").mkdir(exist_ok=True)


def _run(d, script: str, root: str) -> tuple[bool, bool]:
    """(whether every output is the expected one, whether the import job takes the main one)."""
    ctx, job = d.context, d.context["job"]
    main = ctx["main_out"]
    paths = {ctx["in_dir"], ctx["out_dir"], ctx["work"], job["conf"]}
    imported = grammar.run_then_import(script, root, job, main, paths)
    outs = [Path(root + ctx["out_dir"], name) for name in ctx["expected"]]
    right = all(
        p.is_file() and p.read_text(encoding="utf-8") == ctx["expected"][p.name] for p in outs
    )
    return right, imported


def _hard_seeds(count: int) -> list[int]:
    """The first seeds whose hard draft has an input fault, of each kind."""
    seeds: list[int] = []
    for kind in ("report", "merge", "reshape"):
        found = (s for s in range(1, 200) if draft(HARD, s).context["kind"] == kind)
        seeds += [s for s in found if draft(HARD, s).context["faulty"]][:count]
    return seeds


@grammar.needs_tools("iconv", "zcat", "sed", "sha256sum")
@pytest.mark.parametrize("seed", _hard_seeds(3))
def test_each_fault_left_unfixed_breaks_the_outcome(seed, tmp_path):
    d = draft(HARD, seed)
    grammar.check_each_unfixed_fault(d, solution(d), tmp_path, _materialise, _run, (True, True))
    for name in ("format-slip", "edge-case-slip"):  # the near misses after the same repairs
        root = str(tmp_path / name)
        _materialise(d, root)
        assert _run(d, d.mutations[name], root)[0] is False, name


@pytest.mark.parametrize("seed", [3, 5, 6, 7])
def test_the_separate_verifier_gets_what_the_hard_tests_read(seed, tmp_path):
    """The rendered hard task lints clean, and its artifacts carry every output the tests
    compare, the job's settings (and checksum file) and the collect hook's snapshot."""
    task = render_one("json-transform", HARD, seed, tmp_path)
    config = TaskConfig.from_toml((task.root / "task.toml").read_text())
    assert [f.line() for f in lint_task(task.root)] == []
    ctx, carried = task.draft.context, Carried(config)
    read = {f"{ctx['out_dir']}/{name}" for name in ctx["expected"]} | {ctx["job"]["conf"]}
    read |= {f"{ctx['main_out']}.sha256"} if "checksum" in task.draft.faults else set()
    assert read | set(task.draft.artifacts) <= carried
    assert len(config.verifier.collect) == 1
