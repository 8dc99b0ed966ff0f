"""The import job of hard data tasks (factory/families/terminal/import_job.py), without Docker:
its settings per fault, that the shipped job rejects each planted fault and accepts the output
once the reference's commands for it ran, and the tests and snapshot it gives the task."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from factory.families.terminal.import_job import (
    IMPORT_FAULTS,
    IMPORT_TRAPS,
    ImportJob,
    reachable_folder,
)

OUT = "/srv/reports/items.csv"
HEADER = "kind,value,count"


def job(faults: list[str]) -> ImportJob:
    return ImportJob.draw(random.Random(3), "acme", OUT, HEADER, faults)


def _install(j: ImportJob, root: Path, text: str = f"{HEADER}\na,b,1\n") -> None:
    for rel, content in j.files().items():
        name = rel.rsplit("/", 1)[1]
        dest = {"import.conf": j.conf, "cron": j.cron, "importer": j.importer}[name]
        path = Path(f"{root}{dest}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content.replace(repr(j.conf), repr(f"{root}{j.conf}")))
    out = Path(f"{root}{OUT}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


def _imports(j: ImportJob, root: Path, commands: list[str]) -> bool:
    script = "\n".join(commands)
    for path in (j.conf, j.outdir):
        script = script.replace(path, f"{root}{path}")
    script = re.sub(r"^(chgrp|chmod|runuser) ", r": \1 ", script, flags=re.M)
    subprocess.run(["bash", "-c", script], check=True)
    conf = Path(f"{root}{j.conf}")
    text = conf.read_text().replace(f"source = {root}", "source = ")
    conf.write_text(text.replace("source = /", f"source = {root}/"))
    done = subprocess.run(["python3", f"{root}{j.importer}"], capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip().endswith(f"from {root}{OUT}")


def test_settings_carry_the_planted_faults():
    clean = job([]).settings()
    assert f"source = {OUT}" in clean and "checksum = none" in clean
    assert f"source = {OUT}" not in job(["import-config"]).settings()
    assert "checksum required" in job(["config-syntax", "checksum"]).settings()
    assert "format = json" in ImportJob.draw(random.Random(1), "a", OUT, None, []).settings()
    j = job(["consumer-perms"])
    assert "chmod 700 /srv/reports" in j.docker()
    assert j.checked == ["/srv", "/srv/reports", OUT]
    assert [t.name for t in j.traps()] == [IMPORT_TRAPS["consumer-perms"].name]
    assert "def test_checksum_file_matches_the_output" not in j.tests()
    assert "def test_checksum_file_matches_the_output" in job(["checksum"]).tests()


@pytest.mark.skipif(not shutil.which("sha256sum"), reason="needs sha256sum")
@pytest.mark.parametrize("fault", ["import-config", "config-syntax", "checksum"])
def test_the_job_rejects_the_fault_and_takes_the_fixed_output(fault, tmp_path):
    j = job([fault])
    _install(j, tmp_path / "left")
    assert not _imports(j, tmp_path / "left", j.solve_lines(slip=fault))
    _install(j, tmp_path / "fixed")
    assert _imports(j, tmp_path / "fixed", j.solve_lines()[:-1])  # (the run as the account)


def test_a_wrong_header_is_refused(tmp_path):
    j = job([])
    _install(j, tmp_path, "kind;value;count\n")
    assert not _imports(j, tmp_path, [])


def test_every_fault_has_its_fix_and_the_run_comes_last():
    j = job(list(IMPORT_FAULTS))
    lines = j.solve_lines()
    assert lines[-1] == f"runuser -u {j.consumer} -- {j.importer}"
    assert len(lines) == 1 + sum(len(c) for c in j.fixes().values())
    assert all(not line.startswith("runuser") for line in j.solve_lines(slip="checksum"))


def test_the_job_keeps_only_its_own_of_the_task_faults():
    """A family hands over all its drawn faults; the job keeps those of IMPORT_FAULTS, sorted."""
    j = job(["truncated-input", "import-config", "bom", "checksum"])
    assert j.faults == ["checksum", "import-config"]
    assert j == job(["checksum", "import-config"])  # the same draws either way


def test_an_output_folder_in_a_home_is_redrawn_outside_the_homes():
    """/root and /home are homes; /homework only shares the prefix and is kept."""
    folders = ["/root/reports", "/srv/reports", "/home/analyst/out", "/homework"]
    assert reachable_folder(random.Random(1), "/homework", folders) == "/homework"
    for home in ("/root/reports", "/home/analyst/out"):
        drawn = {reachable_folder(random.Random(seed), home, folders) for seed in range(20)}
        assert drawn == {"/srv/reports", "/homework"}
