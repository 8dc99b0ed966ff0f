"""What the base images promise: tools, the real uv, python stand-ins that carry only CPython
and pip, idempotent builds."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from factory.runtime import ContainerSpec

pytestmark = pytest.mark.docker
BASE = "factory/base:bookworm"


def run(box, script: str):
    return box.exec(["bash", "-c", script], timeout_sec=120)


def test_tools_present(runtime):
    with runtime.start(ContainerSpec(image=BASE)) as box:
        result = run(
            box,
            "for t in bash python3 pip pytest git tmux curl ps jq sqlite3; do command -v $t >/dev/null || echo MISSING $t; done; python3 -c 'import pytest'",
        )
        assert result.exit_code == 0 and "MISSING" not in result.output, result.output


def test_uv_is_the_real_one_from_pypi(runtime):
    with runtime.start(ContainerSpec(image=BASE)) as box:
        result = run(box, "uv --version && uvx --version && ~/.local/bin/uv --version")
        assert result.exit_code == 0, result.output
        assert re.match(r"uv 0\.9\.30\b", result.output), result.output


@pytest.mark.parametrize("image", ["factory/python:bookworm", "factory/python:trixie"])
def test_python_stand_ins_carry_cpython_and_pip_only(runtime, image):
    """What python:3.x-slim images carry, and nothing that would make a task pass here only."""
    script = (
        "python3 -m pip --version && python -c 'import venv, sqlite3, ssl'; "
        "for t in pytest uv uvx git curl ps jq sqlite3; do command -v $t && echo HAS $t; done; "
        "python3 -c 'import pytest' 2>/dev/null && echo HAS pytest-module; true"
    )
    with runtime.start(ContainerSpec(image=image)) as box:
        result = run(box, script)
    assert result.exit_code == 0, result.output
    assert "pip " in result.output and "HAS" not in result.output, result.output


def test_uv_runs_offline_from_a_cache_filled_at_build_time(runtime, tmp_path):
    """What the importers do with a test script's uv commands: fetch at build time, then
    `uv add` / `uv run` / `uvx` with the network off and UV_OFFLINE=1."""
    dockerfile = (
        f'FROM {BASE}\nRUN cd "$(mktemp -d)" && uv init --quiet && uv add --quiet pytest==8.4.1\n'
    )
    tag = "factory-test/uv-offline:1"
    runtime.build_image(tmp_path, dockerfile, tag=tag, labels={}, timeout_sec=600)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_ok():\n    assert True\n")
    try:
        spec = ContainerSpec(image=tag, workdir="/app", env={"UV_OFFLINE": "1"})
        with runtime.start(spec) as box:
            box.upload_dir(tmp_path / "tests", "/tests")
            result = run(
                box,
                "set -e; mkdir -p /app && cd /app && source $HOME/.local/bin/env\n"
                "uv init -q && uv add -q pytest==8.4.1\n"
                "uv run pytest /tests/test_x.py -rA\n"
                "uvx -w pytest==8.4.1 pytest -q /tests/test_x.py\n",
            )
        assert result.exit_code == 0, result.output
        assert "PASSED" in result.output
    finally:
        runtime.remove_image(tag)


def test_images_build_is_idempotent():
    result = subprocess.run(
        [sys.executable, "-m", "factory", "images", "build", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "factory/base:bookworm: up-to-date" in result.stderr
    built = {i["name"]: i["status"] for i in json.loads(result.stdout)["images"]}
    assert built["factory/base:bookworm"] == "up-to-date"
    listed = subprocess.run(
        [sys.executable, "-m", "factory", "images", "list", "--json"],
        capture_output=True,
        text=True,
    )
    data = json.loads(listed.stdout)
    base = next(i for i in data["images"] if i["name"] == "factory/base:bookworm")
    assert base["built"] is True and base["default"] is True
    assert data["aliases"] and {"pattern", "targets"} == set(data["aliases"][0])
