"""The separate verifier (Harbor's ``verifier.environment_mode = "separate"``): the tests run in
a fresh container that gets only the declared artifacts, so what an agent plants beside its
answer (a fake ``python3``, a background loop writing the reward) never reaches them."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.files import write_files

from factory.images.task_image import TaskImageBuilder
from factory.tasks.model import load_task
from factory.validate.outcome import Outcome
from factory.validate.probes import cheat_scripts, run_probes
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker

TASK_TOML = """schema_version = "1.4"
artifacts = ["/app/answer.txt", "/app/report"]

[task]
name = "factory-tests/separate-answer"

[verifier]
timeout_sec = 60.0
environment_mode = "separate"

[[verifier.collect]]
command = "stat -c '%U %a' /app/owned > /logs/artifacts/owned.stat"

[agent]
timeout_sec = 60.0

[environment]
network_mode = "no-network"
cpus = 1
memory_mb = 512
"""

DOCKERFILE = """FROM python:3.12-slim
WORKDIR /app
RUN echo original > /app/answer.txt && echo keep > /app/owned && chmod 600 /app/owned
"""

TEST_SH = """#!/bin/bash
# The answer, the report folder and the collected owner/mode snapshot must all be there.
python3 - <<'EOF'
import os, pathlib
ok = (
    pathlib.Path("/app/answer.txt").read_text().strip() == "42"
    and pathlib.Path("/app/report/summary.txt").read_text().strip() == "done"
    and not pathlib.Path("/app/report/escape").exists()
    and pathlib.Path("/logs/artifacts/owned.stat").read_text().split() == ["nobody", "640"]
    and not os.path.exists("/app/planted")
)
pathlib.Path("/logs/verifier/reward.txt").write_text("1" if ok else "0")
EOF
"""

HONEST = """#!/bin/bash
echo 42 > /app/answer.txt
mkdir -p /app/report && echo done > /app/report/summary.txt
ln -s /etc/passwd /app/report/escape
chown nobody /app/owned && chmod 640 /app/owned
"""

# Writes a wrong answer, then plants everything that used to fool a shared verifier.
PLANTER = """#!/bin/bash
echo 41 > /app/answer.txt
mkdir -p /app/report && echo done > /app/report/summary.txt
chown nobody /app/owned && chmod 640 /app/owned
echo planted > /app/planted
printf '#!/bin/sh\\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\\n' \
  > /usr/local/bin/python3
chmod +x /usr/local/bin/python3
nohup bash -c 'while :; do mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; \
  sleep 0.05; done' >/dev/null 2>&1 &
"""


def _task(root: Path, solve: str) -> Path:
    files = {
        "task.toml": TASK_TOML,
        "instruction.md": "Write 42 to /app/answer.txt.\n",
        "environment/Dockerfile": DOCKERFILE,
        "tests/test.sh": TEST_SH,
        "solution/solve.sh": solve,
    }
    return write_files(root, files)


def test_the_separate_verifier_sees_the_artifacts_not_the_plants(runtime, tmp_path):
    task = load_task(_task(tmp_path / "task", HONEST))
    image = TaskImageBuilder(runtime).ensure(task).ref
    scripts = {"honest": HONEST, "planter": PLANTER, **cheat_scripts(["/app/answer.txt"])}
    results = {r.name: r for r in run_probes(runtime, task, image, scripts, "cheat", tmp_path)}
    honest = results.pop("honest")
    assert honest.reward == 1.0, honest.detail
    log = (Path(honest.log_dir) / "artifacts.log").read_text()
    assert "artifact /app/answer.txt: file" in log
    assert "artifact /app/report: refused report/escape" in log
    assert "collect[0] exit=0" in log
    scored = {name: r.reward for name, r in results.items() if not r.rejected}
    assert scored == {}, scored
    assert results["planter"].reward == 0.0


def test_validate_certifies_a_separate_verifier_task(runtime, tmp_path):
    root = _task(tmp_path / "task", HONEST)
    verdict = Validator(runtime, tmp_path / "out", repeats=1, probes=True).validate(root)
    assert verdict.outcome is Outcome.VALID, verdict.reason
    assert all(p.rejected for p in verdict.probes)
