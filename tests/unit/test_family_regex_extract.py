"""regex-extract's hard grammar, without Docker: what each draft plants, that the instruction
names none of its traps, and that the reference (run in a scratch root, paths prefixed) writes
the expected CSV that the import job takes, while each near miss that leaves one fault
unfixed does not."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.import_job import IMPORT_TRAPS
from factory.families.terminal.regex_extract.family import RX_HARD_FAULTS, RX_TRAPS
from factory.quality.structure import solution_steps
from factory.vocabulary import Difficulty

FAMILY = registry.get("regex-extract")
HARD = Difficulty.HARD


draft = grammar.drafter(FAMILY)


def solution(d, level: Difficulty = HARD) -> str:
    return grammar.solution(FAMILY, d, level)


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
    def median(level):
        counts = sorted(len(solution_steps(solution(draft(level, s), level))) for s in range(1, 22))
        return counts[len(counts) // 2]

    assert median(Difficulty.EASY) < median(HARD)
    assert median(HARD) >= 8


def _materialise(d, root: str) -> None:
    ctx, job = d.context, d.context["job"]
    where = {"import.conf": job["conf"], "cron": "/etc/cron", "importer": job["importer"]}
    for rel, data in d.files.items():
        parts = rel.split("/")
        dest = ctx["root"] + "/" + "/".join(parts[2:]) if parts[1] == "corpus" else where[parts[2]]
        path = Path(root + dest)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    if ctx["link"]:
        link = Path(root + ctx["root"] + "/" + ctx["link"]["path"])
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(ctx["link"]["target"], link)
    Path(root + ctx["outdir"]).mkdir(parents=True, exist_ok=True)
    Path(root + "/tmp").mkdir(exist_ok=True)
    importer = Path(root + job["importer"])
    importer.write_text(importer.read_text().replace(repr(job["conf"]), repr(root + job["conf"])))


def _run(d, script: str, root: str) -> tuple[bool, bool]:
    """(whether the output is the expected one, whether the import job takes it)."""
    ctx, job = d.context, d.context["job"]
    for path in sorted({ctx["root"], job["conf"], ctx["outdir"], ctx["work"]}, key=len)[::-1]:
        script = script.replace(path, root + path)
    script = re.sub(r"^(chgrp|chmod|runuser) ", r": \1 ", script, flags=re.M)
    subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    conf = Path(root + job["conf"])
    text = conf.read_text().replace(f"source = {root}", "source = ")
    conf.write_text(text.replace("source = /", f"source = {root}/"))
    run = subprocess.run(["python3", root + job["importer"]], capture_output=True, text=True)
    imported = run.returncode == 0 and run.stdout.strip().endswith(f"from {root}{ctx['out']}")
    out = Path(root + ctx["out"])
    return out.is_file() and out.read_text() == ctx["expected"], imported


@pytest.mark.skipif(
    not all(shutil.which(t) for t in ("iconv", "gunzip", "cp", "sha256sum")),
    reason="needs iconv, gunzip, cp and sha256sum",
)
@pytest.mark.parametrize("seed", range(1, 9))
def test_each_fault_left_unfixed_breaks_the_outcome(seed, tmp_path):
    d = draft(HARD, seed)
    _materialise(d, str(tmp_path / "ref"))
    assert _run(d, solution(d), str(tmp_path / "ref")) == (True, True)
    for fault in d.faults:
        if fault == "consumer-perms":
            assert "chgrp" not in d.mutations[f"unfixed-{fault}"]  # the modes test catches it
            continue
        root = str(tmp_path / fault)
        _materialise(d, root)
        assert _run(d, d.mutations[f"unfixed-{fault}"], root) != (True, True), fault
