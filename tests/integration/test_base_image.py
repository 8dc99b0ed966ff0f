"""What the base image promises: tools, the offline uv shim, the CTRF plugin, idempotent builds."""

from __future__ import annotations

import json
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


def test_uv_shim_runs_tb_style_scripts_offline(runtime, tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_ok():\n    assert True\n")
    with runtime.start(ContainerSpec(image=BASE, workdir="/app")) as box:
        box.upload_dir(tmp_path / "tests", "/tests")
        result = run(
            box,
            "set -e; mkdir -p /app && cd /app\n"
            "curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh\n"
            "source $HOME/.local/bin/env\n"
            "uv init && uv add pytest==8.4.1\n"
            "uv run pytest /tests/test_x.py -rA\n"
            "uvx -p 3.13 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_x.py\n"
            "uv venv .tb && source .tb/bin/activate && uv pip install pytest && python -m pytest -q /tests\n"
            "test -s /logs/verifier/ctrf.json\n",
        )
        assert result.exit_code == 0, result.output
        assert "PASSED" in result.output


def test_uv_shim_explains_what_it_cannot_install(runtime):
    with runtime.start(ContainerSpec(image=BASE)) as box:
        result = run(box, "cd /tmp && uv add surely-not-installed-pkg==1.0")
        assert result.exit_code == 1
        assert "bake it into the image" in result.output


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
