from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixtures.task_dirs import TB2_STYLE_TASK

from factory.errors import TaskFormatError
from factory.importers.layouts import import_task, load_any_task
from factory.importers.tb1 import convert_tb1
from factory.tasks.model import load_task

TB1 = Path(__file__).resolve().parents[2] / "examples" / "tb1"


def test_convert_count_error_lines(tmp_path):
    task = convert_tb1(TB1 / "count-error-lines", tmp_path / "out")
    root = task.root
    assert (root / "instruction.md").read_text().startswith("The application in /app")
    # environment/ holds the build context minus TB1's own files
    env_files = sorted(p.name for p in (root / "environment").iterdir())
    assert env_files == ["Dockerfile", "make_log.py"]
    dockerfile = (root / "environment" / "Dockerfile").read_text()
    assert dockerfile.startswith("FROM ghcr.io/laude-institute/t-bench/python-3-13")
    assert "uv add --quiet pytest==8.4.1" in dockerfile  # uv's cache, filled at build time
    assert task.config.verifier.env == {"UV_OFFLINE": "1"}
    # tests/: original tests, rewritten run-tests.sh, generated test.sh
    assert (root / "tests" / "test_outputs.py").is_file()
    run_tests = (root / "tests" / "run-tests.sh").read_text()
    assert ": # factory: removed" in run_tests and "uv --offline run pytest $TEST_DIR" in run_tests
    test_sh = (root / "tests" / "test.sh").read_text()
    assert "TEST_DIR=/tests" in test_sh and "/logs/verifier/reward.txt" in test_sh
    assert (root / "solution" / "solve.sh").read_text().startswith("#!/bin/bash")
    config = task.config
    assert config.verifier.timeout_sec == 60.0
    assert config.agent.timeout_sec == 180.0
    assert config.metadata["difficulty"] == "easy"
    assert config.metadata["tags"] == ["grep", "logs"]
    assert config.environment.env == {"LOG_FORMAT": "iso"}
    assert config.environment.allow_internet is True
    assert config.provenance.source == "import:terminal-bench-1"
    assert any("astral" in note or "installer" in note for note in config.provenance.notes)
    assert task.notes == config.provenance.notes


def test_convert_descriptions_and_solution_yaml(tmp_path):
    task = convert_tb1(TB1 / "csv-column-sum", tmp_path / "out")
    assert "/data/sales.csv" in task.instruction
    solve = (task.root / "solution" / "solve.sh").read_text()
    assert "python3 -c" in solve
    assert any("solution.yaml" in note for note in task.notes)
    assert task.config.verifier.timeout_sec == 120.0


def test_load_any_task_converts_tb1_on_the_fly(tmp_path):
    task = load_any_task(TB1 / "count-error-lines", tb1_cache=tmp_path)
    assert task.source_layout == "terminal-bench-1"
    assert task.original_path == TB1 / "count-error-lines"
    again = load_any_task(TB1 / "count-error-lines", tb1_cache=tmp_path)
    assert again.root == task.root and again.content_hash == task.content_hash


def test_the_task_model_knows_only_harbor(tmp_path):
    with pytest.raises(TaskFormatError, match="Terminal-Bench 1 task.*factory import"):
        load_task(TB1 / "count-error-lines")


def _copy(tmp_path: Path, name: str = "count-error-lines") -> Path:
    dest = tmp_path / "src" / name
    shutil.copytree(TB1 / name, dest)
    return dest


def test_bad_yaml_names_file(tmp_path):
    src = _copy(tmp_path)
    (src / "task.yaml").write_text("instruction: [unclosed\n")
    with pytest.raises(TaskFormatError, match=r"task\.yaml: invalid YAML at line"):
        convert_tb1(src, tmp_path / "out")


def test_bad_field_is_named(tmp_path):
    src = _copy(tmp_path)
    (src / "task.yaml").write_text("instruction: hi\nmax_test_timeout_sec: soon\n")
    with pytest.raises(TaskFormatError) as info:
        convert_tb1(src, tmp_path / "out")
    assert info.value.field == "max_test_timeout_sec"


def test_missing_instruction(tmp_path):
    src = _copy(tmp_path)
    (src / "task.yaml").write_text("difficulty: easy\n")
    with pytest.raises(TaskFormatError, match="instruction"):
        convert_tb1(src, tmp_path / "out")


@pytest.mark.parametrize("missing", ["Dockerfile", "run-tests.sh"])
def test_missing_files(tmp_path, missing):
    src = _copy(tmp_path)
    (src / missing).unlink()
    with pytest.raises(TaskFormatError, match=missing):
        convert_tb1(src, tmp_path / "out")


def test_multi_service_compose_becomes_harbor_sidecars(tmp_path):
    src = _copy(tmp_path)
    (src / "docker-compose.yaml").write_text(
        "services:\n  client:\n    build: .\n    depends_on: [db]\n  db:\n    image: postgres:16\n"
    )
    task = convert_tb1(src, tmp_path / "out")
    assert [s.name for s in task.compose.sidecars] == ["db"]
    assert task.compose.main_depends_on == {"db": "service_started"}
    (src / "docker-compose.yaml").write_text(
        "services:\n  client:\n    build: .\n  db:\n    image: postgres:16\n    privileged: true\n"
    )
    with pytest.raises(TaskFormatError, match="privileged") as info:
        convert_tb1(src, tmp_path / "out")
    assert info.value.field == "services.db.privileged"
    assert info.value.path == src / "docker-compose.yaml"


def test_a_lone_service_of_another_name_is_the_agents(tmp_path):
    src = _copy(tmp_path)
    (src / "docker-compose.yaml").write_text(
        "services:\n  rust-build:\n    build: .\n    working_dir: /app\n    mem_limit: 1g\n"
        "    networks: [buildnet]\nnetworks:\n  buildnet:\n    driver: bridge\n"
    )
    task = convert_tb1(src, tmp_path / "out")
    assert task.config.environment.memory_mb == 1024
    notes = task.config.provenance.notes
    assert any("'rust-build'" in note for note in notes), notes
    (src / "docker-compose.yaml").write_text(
        "services:\n  app:\n    build: .\n  worker:\n    build: .\n"
    )
    with pytest.raises(TaskFormatError, match="no 'client' service among app, worker"):
        convert_tb1(src, tmp_path / "out")


def test_import_batch_keeps_going(tmp_path):
    good = _copy(tmp_path)
    bad = _copy(tmp_path, "csv-column-sum")
    (bad / "task.yaml").write_text(": : :\n")
    results = [import_task(p, tmp_path / "out") for p in (bad, good)]
    assert results[0].error and "task.yaml" in results[0].error
    assert results[1].error is None and (results[1].dest / "task.toml").is_file()


def test_import_harbor_task_makes_network_explicit(tmp_path):
    result = import_task(TB2_STYLE_TASK, tmp_path / "out")
    assert result.error is None and result.layout == "harbor"
    task = load_task(result.dest)
    assert task.config.environment.allow_internet is True
    dockerfile = (result.dest / "environment" / "Dockerfile").read_text()
    assert "uv add --quiet pytest==8.4.1 pytest-json-ctrf==0.3.5" in dockerfile
    assert task.config.verifier.env == {"UV_OFFLINE": "1"}
    assert ": # factory: removed" in (result.dest / "tests" / "test.sh").read_text()
    # the unknown top-level comment-free content is preserved
    assert task.config.metadata["author_name"] == "factory examples"


def test_compose_network_and_limits(tmp_path):
    src = _copy(tmp_path)
    (src / "docker-compose.yaml").write_text(
        "services:\n  client:\n    build:\n      dockerfile: Dockerfile\n"
        "    network_mode: none\n"
        "    deploy:\n      resources:\n        limits:\n          cpus: '2'\n          memory: 1g\n"
    )
    config = convert_tb1(src, tmp_path / "out").config
    assert config.environment.network_enabled is False
    assert (config.environment.cpus, config.environment.memory_mb) == (2.0, 1024)
    (src / "docker-compose.yaml").write_text(
        "services:\n  client:\n    build: .\n    mem_limit: 536870912\n"
    )
    config = convert_tb1(src, tmp_path / "out").config
    assert config.environment.memory_mb == 512 and config.environment.network_enabled


def test_build_context_outside_the_task_is_explained(tmp_path):
    src = _copy(tmp_path)
    (src / "docker-compose.yaml").write_text(
        "services:\n  client:\n    build:\n      context: ${T_BENCH_REPO_ROOT}\n"
        "      dockerfile: docker/base/Dockerfile.x\n"
    )
    with pytest.raises(TaskFormatError) as info:
        convert_tb1(src, tmp_path / "out")
    assert info.value.field == "services.client.build.context"


def test_shared_terminal_bench_scripts_are_supplied(tmp_path):
    task = convert_tb1(TB1 / "word-frequency", tmp_path / "out")
    tests = task.root / "tests"
    assert (tests / "setup-uv-pytest.sh").is_file() and (tests / "run-uv-pytest.sh").is_file()
    assert "astral.sh" not in (tests / "setup-uv-pytest.sh").read_text()
    dockerfile = (task.root / "environment" / "Dockerfile").read_text()
    assert "requests==2.32.4" in dockerfile and "pytest==8.4.1" in dockerfile
    assert any("shared script" in note for note in task.notes)
