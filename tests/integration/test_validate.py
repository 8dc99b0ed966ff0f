"""`factory validate` end to end with the real engine: every outcome from a real container."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.task_dirs import TB2_STYLE

from factory.compat import tomllib
from factory.importers.layouts import import_task
from factory.tasks.model import discover_task_dirs
from factory.validate.outcome import Outcome
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXPECTED = tomllib.loads((EXAMPLES / "broken" / "EXPECTED.toml").read_text())


def test_bundled_examples_are_valid(runtime, tmp_path):
    # The Harbor examples, and the fixtures that fetch their test tools at test time (as
    # Terminal-Bench 2 tasks do) and declare no network: offline, they are validated as
    # `factory import` makes them.
    imported = tmp_path / "imported"
    for src in discover_task_dirs([EXAMPLES / "harbor", TB2_STYLE]):
        import_task(src, imported)
    dirs = discover_task_dirs([EXAMPLES / "tasks", EXAMPLES / "tb1", imported])
    assert len(dirs) >= 9
    report = Validator(runtime, tmp_path / "report", jobs=2).run(dirs)
    bad = {t.id: t.reason for t in report.tasks if t.outcome is not Outcome.VALID}
    assert not bad, bad
    assert report.summary == {"valid": len(dirs), "total": len(dirs)}
    data = json.loads((tmp_path / "report" / "validation.json").read_text())
    first = data["tasks"][0]
    assert {"id", "path", "outcome", "reason", "timings", "image"} <= set(first)
    assert {"build", "nop", "oracle", "total"} <= set(first["timings"])
    for phase in ("build", "nop-1", "oracle-1", "nop-2", "oracle-2"):
        assert Path(first["logs"][phase]).exists()
    assert (Path(first["logs"]["oracle-1"]) / "test.log").is_file()


def test_cli_json_and_exit_status(tmp_path):
    good = discover_task_dirs([EXAMPLES / "tasks"])[0]
    done = subprocess.run(
        [sys.executable, "-m", "factory", "validate", str(good),
         str(EXAMPLES / "broken" / "missing-solution"), "--out", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # one task is not valid
    report = json.loads(done.stdout)
    assert report["report_path"] == str(tmp_path / "validation.json")
    assert report["summary"] == {"valid": 1, "no_solution": 1, "total": 2}
    assert {t["outcome"] for t in report["tasks"]} == {"valid", "no_solution"}
    partial = next(t for t in report["tasks"] if t["outcome"] == "no_solution")
    assert "no reference solution" in partial["reason"]
    assert "FAILED check_answer" in partial["reason"]
    assert report["flake"] == [] and "validate" in done.stderr  # the progress: stderr


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_examples_get_the_right_outcome(runtime, tmp_path, name):
    spec = EXPECTED[name]
    validator = Validator(runtime, tmp_path, repeats=spec.get("repeats", 2))
    verdict = validator.validate(EXAMPLES / "broken" / name)
    assert verdict.outcome.value == spec["outcome"], verdict.reason
    assert spec["reason_contains"] in verdict.reason


def test_rerun_skips_certified_tasks_and_redoes_changed_ones(runtime, tmp_path):
    src = discover_task_dirs([EXAMPLES / "tasks"])[0]
    task = tmp_path / "task"
    shutil.copytree(src, task)
    out = tmp_path / "out"
    first = Validator(runtime, out).run([task]).tasks[0]
    assert first.outcome is Outcome.VALID and not first.resumed
    second = Validator(runtime, out).run([task]).tasks[0]
    assert second.resumed and second.outcome is Outcome.VALID
    (task / "instruction.md").write_text((task / "instruction.md").read_text() + "\n(edited)\n")
    third = Validator(runtime, out).run([task]).tasks[0]
    assert not third.resumed and third.outcome is Outcome.VALID
    forced = Validator(runtime, out, force=True).run([task]).tasks[0]
    assert not forced.resumed


def test_unchanged_environment_is_not_rebuilt(runtime, tmp_path):
    src = discover_task_dirs([EXAMPLES / "tasks"])[0]
    from factory.images.task_image import TaskImageBuilder
    from factory.tasks.model import load_task

    builder = TaskImageBuilder(runtime)
    task = load_task(src)
    first = builder.ensure(task)
    again = builder.ensure(load_task(src))
    assert again.ref == first.ref and again.built is False
    # Only this task's images: the engine may be shared with sessions building other images.
    mine = {"label": f"factory.task={task.id}"}
    images_before = runtime.api.images(all=True, filters=mine)
    assert images_before  # the label names this task's image
    assert builder.ensure(load_task(src)).built is False
    assert runtime.api.images(all=True, filters=mine) == images_before


def validate_variant(runtime, tmp_path: Path, name: str, files: dict[str, str], out: str = "out"):
    """The verdict on a copy of the answer-42 example task (``tmp_path/name``) with some files
    replaced, validated into ``tmp_path/out``."""
    task = tmp_path / name
    shutil.copytree(EXAMPLES / "broken" / "fails-with-solution", task)
    for rel, text in files.items():
        (task / rel).write_text(text)
    return Validator(runtime, tmp_path / out).validate(task)


def test_solution_cannot_plant_tests_or_a_reward(runtime, tmp_path):
    """A solve.sh that writes a reward file and a conftest into /tests must not pass."""
    verdict = validate_variant(
        runtime,
        tmp_path,
        "cheat",
        {
            "solution/solve.sh": "#!/bin/bash\n"
            "echo 41 > /app/answer.txt\n"
            "mkdir -p /logs/verifier /tests && echo 1 > /logs/verifier/reward.txt\n"
            "printf '#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n' > /tests/extra.sh\n",
            "tests/test.sh": "#!/bin/bash\n"
            "[ -e /tests/extra.sh ] && echo 'planted file survived' && exit 0\n"
            'if [ "$(cat /app/answer.txt)" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
        },
    )
    assert verdict.outcome is Outcome.FAILS_WITH_SOLUTION, verdict.reason


# A prebuilt image that cannot be pulled falls back to environment/Dockerfile; a Dockerfile
# that needs BuildKit (heredocs, cache mounts, --platform) builds with the legacy builder.
PREBUILT = {
    "solution/solve.sh": "#!/bin/bash\necho 42 > /app/answer.txt\n",
    "task.toml": (EXAMPLES / "broken" / "fails-with-solution" / "task.toml")
    .read_text()
    .replace("[environment]", '[environment]\ndocker_image = "docker.io/acme/prebuilt:2.0"'),
}
HEREDOCS = {
    "environment/Dockerfile": "# syntax=docker/dockerfile:1\n"
    "FROM --platform=linux/amd64 python:3.12-slim\n"
    'SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
    "WORKDIR /app\n"
    "RUN --mount=type=cache,target=/root/.cache/pip <<EOF\n"
    "set -e\n"
    "mkdir -p /app/data && echo 40 > /app/data/base.txt\n"
    "EOF\n"
    "COPY <<EOF /app/add.py\n"
    "import sys\n"
    "print(int(open('/app/data/base.txt').read()) + int(sys.argv[1]))\n"
    "EOF\n",
    "solution/solve.sh": "#!/bin/bash\npython3 /app/add.py 2 > /app/answer.txt\n",
}


@pytest.mark.parametrize(
    ("name", "files", "note"),
    [
        ("prebuilt", PREBUILT, "built environment/Dockerfile instead"),
        ("heredocs", HEREDOCS, "here-document"),
    ],
    ids=["unpullable_docker_image_falls_back", "buildkit_only_dockerfile_builds_legacy"],
)
def test_a_variant_is_valid_with_a_note(runtime, tmp_path, name, files, note):
    verdict = validate_variant(runtime, tmp_path, name, files)
    assert verdict.outcome is Outcome.VALID, verdict.reason
    assert any(note in n for n in verdict.notes), verdict.notes


def test_a_node_image_maps_to_a_toolchain_built_on_first_use(runtime, tmp_path):
    # fails-with-solution's tests want /app/answer.txt = 42; here node must compute it
    verdict = validate_variant(
        runtime,
        tmp_path,
        "node",
        {
            "environment/Dockerfile": "FROM node:20-bookworm-slim\nWORKDIR /app\n"
            "RUN printf 'console.log(6 * 7)\\n' > /app/answer.js\n",
            "solution/solve.sh": "#!/bin/bash\nnode /app/answer.js > /app/answer.txt\n",
        },
    )
    assert verdict.outcome is Outcome.VALID, verdict.reason
    assert runtime.image_exists("factory/node:trixie")
    verdict = validate_variant(
        runtime,
        tmp_path,
        "alpine",
        {"environment/Dockerfile": "FROM rust:1.70-alpine\nRUN apk add bash\n"},
        out="out-alpine",
    )
    assert verdict.outcome is Outcome.BUILD_FAILED
    assert "'rust:1.70-alpine' is not available locally" in verdict.reason
