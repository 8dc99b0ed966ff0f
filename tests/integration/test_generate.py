"""`factory generate` end to end: suites, rejections, dedup, resume after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.generate_cli import generate_command, perms_taxonomy

from factory.generate.certify import Certificate
from factory.generate.results import LlmUsage
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import parse_taxonomy
from factory.runtime import LABEL_MANAGED, DockerRuntime
from factory.tasks.config import TaskConfig
from factory.tasks.model import discover_task_dirs
from factory.validate.outcome import Outcome
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker


def run_generate(tmp_path: Path, quota: int, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        generate_command(tmp_path, perms_taxonomy("it-suite", quota), out, *extra),
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_generate_a_suite_and_resume(tmp_path, runtime):
    out = tmp_path / "suite"
    result = run_generate(tmp_path, 2, out)
    assert result.returncode == 0, result.stderr[-2000:]
    manifest = json.loads((out / "suite.json").read_text())
    assert [t["id"] for t in manifest["tasks"]] == ["files-perms-000", "files-perms-001"]
    task = manifest["tasks"][0]
    for key in (
        "taxonomy_path",
        "family",
        "difficulty",
        "seed",
        "generator",
        "content_hash",
        "timings",
    ):
        assert task[key] not in (None, "", {}), key
    leaf = manifest["coverage"][0]
    assert (leaf["quota"], leaf["valid"], leaf["complete"]) == (2, 2, True)
    assert leaf["outcomes"] == {"valid": 2}
    # every generated task is certified again by a plain `factory validate`
    report = Validator(runtime, tmp_path / "val", jobs=2).run(discover_task_dirs([out / "tasks"]))
    assert {t.outcome for t in report.tasks} == {Outcome.VALID}
    # a rerun finds the journal and does nothing; --json: the manifest on stdout
    started = time.monotonic()
    again = run_generate(tmp_path, 2, out, "--json")
    assert again.returncode == 0 and time.monotonic() - started < 20
    assert json.loads((out / "suite.json").read_text())["tasks"] == manifest["tasks"]
    printed = json.loads(again.stdout)
    assert printed["path"] == str(out) and printed["tasks"] == manifest["tasks"]
    shown = subprocess.run(
        [sys.executable, "-m", "factory", "suite", "show", str(out)], capture_output=True, text=True
    )
    assert "terminal/files/perms" in shown.stdout
    shown = subprocess.run(
        [sys.executable, "-m", "factory", "suite", "show", str(out), "--json"],
        capture_output=True,
        text=True,
    )
    assert json.loads(shown.stdout)["coverage"] == manifest["coverage"]


def test_families_try_json(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "factory", "families", "try", "file-permissions", "-d", "easy",
         "--out", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (trial,) = json.loads(done.stdout)["trials"]
    assert trial["outcome"] == "valid" and trial["verifier_strength"] is not None
    assert {p["kind"] for p in trial["probes"]} >= {"cheat"}
    assert (tmp_path / "validation" / "logs" / Path(trial["path"]).name / "build.log").is_file()


def test_kill_then_rerun_never_duplicates(tmp_path):
    out = tmp_path / "suite"
    proc = subprocess.Popen(
        generate_command(tmp_path, perms_taxonomy("it-suite", 4), out),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list((out / "results").glob("*.json"))) < 1:
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    subprocess.run([sys.executable, "-m", "factory", "gc"], check=True, capture_output=True)
    result = run_generate(tmp_path, 4, out)
    assert result.returncode == 0, result.stderr[-2000:]
    ids = sorted(p.name for p in (out / "tasks").iterdir())
    journal = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    assert ids == [r["id"] for r in journal if r["status"] == "accepted"] and len(ids) == 4
    # a rejected candidate is a near-duplicate of an earlier, kept one (settled in order)
    for r in journal:
        if r["status"] != "accepted":
            assert r["outcome"] == "duplicate" and r["duplicate_of"] in ids, r
            assert r["duplicate_of"] < r["id"], r
    assert list((out / "candidates").iterdir()) == []
    api = DockerRuntime("probe").api
    labels = [f"{LABEL_MANAGED}=1", f"factory.pid={proc.pid}"]
    assert api.containers(all=True, filters={"label": labels}) == []


class ScriptedBackend:
    """Candidates from a fixed list of (instruction, solve.sh, test.sh) per attempt."""

    def __init__(self, variants: list[dict[str, str]]) -> None:
        self.variants = variants
        self.calls = 0

    def make(self, leaf, difficulty, seed, task_id):
        variant = self.variants[min(self.calls, len(self.variants) - 1)]
        self.calls += 1
        files = {
            "instruction.md": variant.get(
                "instruction", "Write the word ready to /app/state.txt."
            ).encode(),
            "environment/Dockerfile": b"FROM python:3.12-slim-bookworm\nWORKDIR /app\n",
            "solution/solve.sh": variant["solve"].encode(),
            "tests/test.sh": variant["test"].encode(),
        }
        config = TaskConfig.model_validate(
            {
                "metadata": {"difficulty": difficulty.value},
                "environment": {"network_mode": "no-network"},
            }
        )
        outputs = (variant.get("output", "/app/state.txt"),)
        return TaskSpec(id=task_id, files=files, config=config, outputs=outputs), LlmUsage()

    def repair(self, leaf, spec: TaskSpec, certificate: Certificate):
        return None


GOOD_TEST = '#!/bin/bash\nif [ "$(cat /app/state.txt 2>/dev/null)" = ready ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n'
EXISTS_TEST = "#!/bin/bash\nif [ -e /app/state.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
SOLVE = "#!/bin/bash\necho ready > /app/state.txt\n"


def test_rejections_are_kept_with_their_reasons(tmp_path, runtime):
    from factory.generate.pipeline import SuiteGenerator

    taxonomy = parse_taxonomy(
        {
            "suite": "rej",
            "defaults": {
                "quota": 1,
                "attempts_per_task": 4,
                "difficulty": {"easy": 1},
                "dedup_threshold": 0.7,
            },
            "domains": [
                {
                    "name": "terminal",
                    "categories": [
                        {
                            "name": "c",
                            "skills": [{"name": "s", "generator": "file-permissions", "quota": 2}],
                        }
                    ],
                }
            ],
        }
    )
    backend = ScriptedBackend(
        [
            {"solve": SOLVE, "test": EXISTS_TEST},  # a lazy agent passes
            {
                "solve": "#!/bin/bash\necho steady > /app/state.txt\n",
                "test": GOOD_TEST,
            },  # wrong oracle
            {"solve": SOLVE, "test": GOOD_TEST},  # good
            {"solve": SOLVE, "test": GOOD_TEST},  # same again: duplicate
            {
                "solve": SOLVE,
                "test": GOOD_TEST,
                "instruction": "Write the word ready to /app/state.txt!",
            },
            {
                "solve": "#!/bin/bash\nmkdir -p /srv && printf 'mode=%s\\n' maintenance > /srv/mode.conf\n",
                "test": "#!/bin/bash\ngrep -qx mode=maintenance /srv/mode.conf && echo 1 > /logs/verifier/reward.txt"
                " || echo 0 > /logs/verifier/reward.txt\n",
                "instruction": "Put the service into maintenance mode: /srv/mode.conf must hold the line "
                "mode=maintenance and nothing else.",
                "output": "/srv/mode.conf",
            },
        ]
    )
    generator = SuiteGenerator(
        taxonomy, "suite: rej\n", tmp_path / "s", runtime, lambda leaf: backend, jobs=1
    )
    manifest = generator.run()
    results = {
        p.stem: json.loads(p.read_text()) for p in (tmp_path / "s" / "results").glob("*.json")
    }
    outcomes = [results[f"c-s-00{i}"]["outcome"] for i in range(len(results))]
    assert outcomes == [
        "cheat_passed",
        "fails_with_solution",
        "valid",
        "duplicate",
        "duplicate",
        "valid",
    ]
    assert "empty-outputs" in results["c-s-000"]["reason"]
    assert results["c-s-003"]["duplicate_of"] == "c-s-002"
    assert "same content" in results["c-s-003"]["reason"]
    assert "similar to c-s-002" in results["c-s-004"]["reason"]
    rejection = json.loads((tmp_path / "s" / "rejected" / "c-s-000" / "rejection.json").read_text())
    assert rejection["outcome"] == "cheat_passed"
    assert manifest.coverage[0].outcomes["valid"] == manifest.coverage[0].valid
