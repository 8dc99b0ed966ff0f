"""`factory validate --flake-runs`: a verifier that depends on the time zone, the hash seed and
the machine being idle is caught under each perturbation; a sound one is not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factory.cli import app
from factory.tasks.model import load_task_config

pytestmark = pytest.mark.docker
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Rewards 1 only when the solution ran AND nothing was perturbed: no TZ, no PYTHONHASHSEED,
# no CPU hog (a `yes` process) in the container.
FRAGILE_TEST = """#!/bin/bash
ok=1
[ "$(cat /app/answer.txt 2>/dev/null)" = "42" ] || ok=0
[ -z "$TZ" ] || ok=0
[ -z "$PYTHONHASHSEED" ] || ok=0
grep -qx yes /proc/[0-9]*/comm 2>/dev/null && ok=0
echo $ok > /logs/verifier/reward.txt
"""


def fragile_task(root: Path) -> Path:
    task = root / "fragile"
    shutil.copytree(EXAMPLES / "broken" / "fails-with-solution", task)
    toml = (task / "task.toml").read_text().replace("fails-with-solution", "fragile")
    (task / "task.toml").write_text(toml)
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 42 > /app/answer.txt\n")
    (task / "tests" / "test.sh").write_text(FRAGILE_TEST)
    return task


def test_flake_runs_catch_a_fragile_verifier(tmp_path):
    fragile = fragile_task(tmp_path / "tasks")
    sound = tmp_path / "tasks" / "sound"
    shutil.copytree(EXAMPLES / "tasks" / "fix-deploy-tree-permissions", sound)
    out = tmp_path / "validation"
    result = CliRunner().invoke(
        app, ["validate", str(tmp_path / "tasks"), "-o", str(out), "-j", "2", "--flake-runs", "4"]
    )
    assert result.exit_code == 0, result.output
    assert "verifier flake rate" in result.output
    fragile_meta = load_task_config(fragile / "task.toml").provenance
    assert fragile_meta.flake_rate == 0.5  # every oracle phase fails, every nop is right
    assert fragile_meta.flake_runs == 8
    sound_meta = load_task_config(sound / "task.toml").provenance
    assert sound_meta.flake_rate == 0.0 and sound_meta.flake_runs == 8
    report = {
        Path(r["task"]).name: r for r in json.loads((out / "flake" / "flake.json").read_text())
    }
    caught = report["fragile"]["by_perturbation"]
    assert {name: v["flaky"] for name, v in caught.items()} == {
        "tz": 1,
        "seed": 1,
        "load": 1,
        "all": 1,
    }
