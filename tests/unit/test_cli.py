from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fixtures.fresh_import import loaded_after_import
from fixtures.task_dirs import TB2_STYLE_TASK

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def factory(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "DOCKER_HOST": "unix:///nonexistent.sock"}
    return subprocess.run(
        [sys.executable, "-m", "factory", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def test_version_and_help():
    assert factory("--version").stdout.startswith("factory ")
    out = factory("--help").stdout
    for command in ("validate", "gc", "images", "tasks"):
        assert command in out


def test_tasks_check_reports_one_line_per_bad_task():
    result = factory("tasks", "check", str(EXAMPLES / "broken"))
    assert result.returncode == 1
    err = result.stderr
    assert "bad-field/task.toml: environment.cpus" in err
    assert "invalid-toml/task.toml: invalid TOML" in err
    assert "Traceback" not in err
    ok = factory("tasks", "check", str(EXAMPLES / "tasks"))
    assert ok.returncode == 0, ok.stderr


def test_import_tb1_prints_notes(tmp_path):
    result = factory("tasks", "import-tb1", str(EXAMPLES / "tb1"), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "imported" in result.stderr and "installer" in result.stderr
    assert (tmp_path / "count-error-lines" / "tests" / "test.sh").is_file()
    assert (tmp_path / "csv-column-sum" / "solution" / "solve.sh").is_file()


def test_import_tb1_refuses_harbor_dirs(tmp_path):
    result = factory(
        "tasks",
        "import-tb1",
        str(TB2_STYLE_TASK),
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 1
    assert "task.yaml: file is missing" in result.stderr


def test_no_docker_engine_is_one_clear_line(tmp_path):
    result = factory("validate", str(EXAMPLES / "tasks"), "--out", str(tmp_path))
    assert result.returncode == 2
    assert "cannot reach the Docker engine" in result.stderr
    assert "Traceback" not in result.stderr


def test_importing_factory_is_light():
    modules = ["factory", "factory.tasks.model", "factory.validate.outcome"]
    assert loaded_after_import(modules, ["docker", "torch", "vllm"]) == []


def test_a_param_value_is_read_as_yaml_and_a_bad_one_is_one_line(tmp_path):
    out = tmp_path / "trials"
    result = factory(
        "families", "try", "repo-bug", "-d", "easy", "--render-only",
        "-p", "projects=sqlparse", "-p", "llm_report=false", "-o", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sqlparse" in (out / "tasks" / "repo-bug-easy-1" / "instruction.md").read_text()
    bad = factory("families", "try", "repo-bug", "--render-only", "-p", "projects=[sql[/]")
    assert bad.returncode == 2
    lines = (bad.stdout + bad.stderr).strip().splitlines()
    assert len(lines) == 1
    assert "--param projects: '[sql[/]' is not a value" in lines[0]


def test_paths_and_messages_are_printed_as_they_are_not_as_markup(tmp_path):
    """A log line shows a path (or an error naming a TOML table like ``[task]``) whole: the
    console reads markup only in factory's own styling."""
    out = tmp_path / "[task] trials [/]"
    result = factory(
        "families", "try", "checksum-verify", "-d", "easy", "--render-only", "-o", str(out)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"wrote {out / 'tasks' / 'checksum-verify-easy-1'}" in result.stdout + result.stderr
