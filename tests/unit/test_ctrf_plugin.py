"""The CTRF pytest plugin that base images carry, exercised with the host's pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CTRF_DIR = Path(__file__).resolve().parents[2] / "verifiers" / "ctrf"


def test_writes_ctrf_report(tmp_path):
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "def test_ok(): pass\n"
        "def test_bad(): assert 1 == 2\n"
        "@pytest.mark.skip\n"
        "def test_skip(): pass\n"
    )
    report = tmp_path / "out" / "ctrf.json"
    env = {**os.environ, "PYTHONPATH": str(CTRF_DIR), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "factory_ctrf",
            "--ctrf",
            str(report),
            "-q",
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_x.py"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    data = json.loads(report.read_text())
    summary = data["results"]["summary"]
    assert (summary["tests"], summary["passed"], summary["failed"], summary["skipped"]) == (
        3,
        1,
        1,
        1,
    )
    statuses = {t["name"].split("::")[-1]: t["status"] for t in data["results"]["tests"]}
    assert statuses == {"test_ok": "passed", "test_bad": "failed", "test_skip": "skipped"}


def test_entry_point_is_named_ctrf():
    text = (CTRF_DIR / "factory_ctrf-0.1.0.dist-info" / "entry_points.txt").read_text()
    assert "[pytest11]" in text and "ctrf = factory_ctrf" in text
