"""cron-schedule's hard fault grammar, without Docker: the reference's in-place edits run here
(GNU sed) on the shipped /etc/cron.d file, and the result is read like cron; each near miss
(one fault left) leaves something the hidden tests catch."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.cron_schedule.family import (
    CRON_BREAKS,
    CRON_EXTRA_FAULTS,
    CRON_TRAPS,
    _sed_line,
)
from factory.families.terminal.cron_schedule.shipped import cronlib
from factory.vocabulary import Difficulty

FAMILY = registry.get("cron-schedule")
LINE_FAULTS = {b.replace("_", "-") for b in CRON_BREAKS}
FILE_FAULTS = {"env-misplaced", "no-final-newline", "path-missing"}

needs_sed = pytest.mark.skipif(shutil.which("sed") is None, reason="no sed here")


draft = grammar.drafter(FAMILY)


def render(d, name: str, **extra) -> str:
    return grammar.render(FAMILY, d, name, **extra)


def repaired(d, tmp_path: Path, skip: str | None = None) -> str:
    """The shipped cron file after the reference's edits of it (all but ``skip``'s)."""
    cron_file = d.context["cron_file"]
    path = tmp_path / "crontab"
    path.write_text(d.files["environment/crontab"])
    for edit in d.context["edits"]:
        if edit["fault"] == skip or cron_file not in edit["command"]:
            continue
        subprocess.run(
            ["bash", "-c", edit["command"].replace(cron_file, str(path))],
            check=True,
            capture_output=True,
        )
    return path.read_text()


def problems(d, text: str) -> list[str]:
    """What the hidden tests would find wrong with the repaired cron file (as cron reads it)."""
    ctx = d.context
    found = []
    if not text.endswith("\n"):
        found.append("no final newline")
    entries, errors = cronlib.parse_crontab(text, True)
    found += errors
    for job in ctx["existing"]:
        mine = [e for e in entries if f"/{job['name']} " in e["command"]]
        want = set().union(*(cronlib.cron_fires(x) for x in job["exprs"]))
        if not mine or set().union(*(e["fires"] for e in mine)) != want:
            found.append(f"{job['name']}: schedule")
        for e in mine:
            if e["user"] != job["user"]:
                found.append(f"{job['name']}: user {e['user']}")
            if any(e["env"].get(k) != v for k, v in ctx["env"]):
                found.append(f"{job['name']}: environment")
            command, stdin = cronlib.cron_command(e["command"])
            if stdin or "$(date +%" in command and job["date"] is None:
                found.append(f"{job['name']}: command cut at %")
    for f in ctx["foreign"]:
        same = [e for e in entries if e["command"] == f["command"] and e["user"] == f["user"]]
        if not same or set().union(*(e["fires"] for e in same)) != cronlib.cron_fires(
            f["schedule"]
        ):
            found.append(f"{f['path']}: changed")
    return found


def test_hard_composes_faults_from_the_grammar():
    grammar.assert_varied(draft)
    seen = set()
    for seed in range(1, 60):
        d = draft(Difficulty.HARD, seed)
        lines = [f for f in d.faults if f in LINE_FAULTS]
        extra = d.context["extra"]
        assert 2 <= len(lines) <= 4 and 2 <= len(extra) <= 3
        assert set(extra) <= set(CRON_EXTRA_FAULTS)
        assert sorted(d.faults) == sorted(lines + extra)
        grammar.assert_traps_match(d, CRON_TRAPS, extra)
        assert set(d.mutations) >= {f"leave-{f}" for f in d.faults}
        seen |= set(d.faults)
    assert seen == LINE_FAULTS | set(CRON_EXTRA_FAULTS)
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        d = draft(level, 2)
        assert d.faults == [] and d.traps == [] and d.context["edits"] == []


def test_sed_line_replaces_exactly_one_whole_line(tmp_path):
    old = "7 3 * * 1-5 root /opt/x/bin/a --stamp $(date +%F) >> /var/log/x/a.log 2>&1"
    new = "7 3 * * 1-5 root /opt/x/bin/a --stamp $(date +\\%F) >> /var/log/x/a.log 2>&1"
    path = tmp_path / "f"
    path.write_text(f"# head\n{old} extra\n{old}\n[x]. ^$\n")
    subprocess.run(["bash", "-c", _sed_line(old, new, str(path))], check=True)
    assert path.read_text() == f"# head\n{old} extra\n{new}\n[x]. ^$\n"
    with pytest.raises(ValueError):
        _sed_line("a # b", "c", "f")


@needs_sed
@pytest.mark.parametrize("seed", range(1, 16))
def test_the_reference_repairs_the_file_and_each_near_miss_leaves_a_fault(seed, tmp_path):
    d = draft(Difficulty.HARD, seed)
    ctx = d.context
    assert problems(d, d.files["environment/crontab"]), "the shipped file is already right"
    assert problems(d, repaired(d, tmp_path)) == []
    for fault in d.faults:
        if fault in LINE_FAULTS | FILE_FAULTS:
            assert problems(d, repaired(d, tmp_path, skip=fault)), fault
    reference = render(d, "solution/solve.sh.j2")
    assert reference.startswith("#!/bin/bash\n# Reference solution.\nset -e\n")
    for edit in ctx["edits"]:
        assert edit["command"] in reference
        for fault in d.faults:
            near_miss = d.mutations[f"leave-{fault}"]
            assert (edit["command"] in near_miss) == (edit["fault"] != fault)
    # the new job's crontab is written whole; the repaired file is never rewritten
    assert f"' > {ctx['spool_file']}" in reference and f"' > {ctx['cron_file']}" not in reference


@needs_sed
@pytest.mark.parametrize("seed", range(1, 30))
def test_faults_around_the_jobs_are_planted_and_fixed(seed, tmp_path):
    d = draft(Difficulty.HARD, seed)
    ctx = d.context
    dockerfile = render(d, "environment/Dockerfile.j2")
    reference = render(d, "solution/solve.sh.j2")
    tests = render(d, "tests/test_outputs.py.j2")
    # the programs travel to the verifier, which checks them against the shipped ones
    assert set(ctx["digests"]) == {j["path"] for j in ctx["jobs"]}
    assert set(ctx["digests"]) <= set(d.outputs) and "def test_job_programs_unchanged" in tests
    assert ("cron-file-mode" in d.faults) == (f"chmod 664 {ctx['cron_file']}" in dockerfile)
    if "cron-file-mode" in d.faults:
        assert f"chmod 644 {ctx['cron_file']}" in reference
    sick = ctx["sick"]
    assert set(sick) == {f for f in d.faults if f.startswith("script-")}
    for fault, path in sick.items():
        rel = f"environment/bin/{path.rsplit('/', 1)[1]}"
        shipped = d.files[rel]
        if fault == "script-crlf":
            assert shipped.startswith("#!/bin/sh\r\n")
            program = tmp_path / "program"
            program.write_bytes(shipped.encode())
            command = next(e["command"] for e in ctx["edits"] if e["fault"] == fault)
            subprocess.run(["bash", "-c", command.replace(path, str(program))], check=True)
            assert hashlib.sha256(program.read_bytes()).hexdigest() == ctx["digests"][path]
        else:
            assert f"chmod 644 {path}" in dockerfile and f"chmod 755 {path}" in reference
    others = [p for p in ctx["digests"] if p != sick.get("script-crlf")]
    for path in others:
        rel = f"environment/bin/{path.rsplit('/', 1)[1]}"
        assert hashlib.sha256(d.files[rel].encode()).hexdigest() == ctx["digests"][path]


def test_the_number_of_steps_grows_with_difficulty():
    def median(level):
        return grammar.median_steps(
            lambda s: render(draft(level, s), "solution/solve.sh.j2"), range(1, 42)
        )

    assert median(Difficulty.EASY) <= median(Difficulty.MEDIUM) < median(Difficulty.HARD)
    assert median(Difficulty.HARD) >= 8


def test_hard_instructions_name_no_trap():
    words = ("newline", "crlf", "executable", "some of its lines")
    grammar.check_hard_instructions(FAMILY, draft, range(1, 80), words)
