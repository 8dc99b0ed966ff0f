from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.files import write_files

from factory.compat import tomllib
from factory.errors import TaskFormatError
from factory.tasks.model import discover_task_dirs, load_task, task_id_from_name

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXPECTED = tomllib.loads((EXAMPLES / "broken" / "EXPECTED.toml").read_text())
PARSE_FAILURES = [name for name, spec in EXPECTED.items() if spec["outcome"] == "invalid_task"]


def test_example_tasks_load():
    dirs = discover_task_dirs([EXAMPLES / "tasks"])
    assert len(dirs) >= 6
    for path in dirs:
        task = load_task(path)
        assert task.instruction.strip()
        assert task.has_solution
        assert len(task.content_hash) == 64


@pytest.mark.parametrize("name", PARSE_FAILURES)
def test_malformed_tasks_name_file_and_field(name):
    with pytest.raises(TaskFormatError) as info:
        load_task(EXAMPLES / "broken" / name)
    message = str(info.value)
    assert EXPECTED[name]["reason_contains"] in message
    assert "\n" not in message, "errors are one line"
    assert str(EXAMPLES / "broken" / name) in message


def test_bad_field_names_the_field():
    with pytest.raises(TaskFormatError) as info:
        load_task(EXAMPLES / "broken" / "bad-field")
    assert info.value.field == "environment.cpus"
    assert info.value.path.name == "task.toml"


def test_missing_directory(tmp_path):
    with pytest.raises(TaskFormatError, match="no such task directory"):
        load_task(tmp_path / "nope")


TEST_SH = {"tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n"}


@pytest.mark.parametrize(
    ("files", "error"),
    [
        pytest.param(
            {"instruction.md": "  \n", "environment/Dockerfile": "FROM debian:bookworm\n"},
            "instruction is empty",
            id="empty-instruction",
        ),
        pytest.param(  # the main service of docker-compose.yaml is built from the Dockerfile
            {"instruction.md": "do it\n", "environment/docker-compose.yaml": "services: {}\n"},
            "docker-compose",
            id="compose-without-a-dockerfile",
        ),
    ],
)
def test_a_malformed_task_is_refused_clearly(tmp_path, files, error):
    task = write_files(tmp_path / "t", {"task.toml": 'version = "1.0"\n', **files, **TEST_SH})
    with pytest.raises(TaskFormatError, match=error):
        load_task(task)


def test_docker_image_replaces_dockerfile(tmp_path):
    task = write_files(
        tmp_path / "t",
        {
            "task.toml": '[environment]\ndocker_image = "python:3.12-slim"\n',
            "instruction.md": "do it\n",
            **TEST_SH,
        },
    )
    assert load_task(task).config.environment.docker_image == "python:3.12-slim"


def test_sidecar_services_load_and_unsupported_ones_are_refused_by_field(tmp_path):
    files = {
        "task.toml": 'version = "1.0"\n',
        "instruction.md": "do it\n",
        "environment/Dockerfile": "FROM ubuntu:24.04\n",
        "environment/dns-server/Dockerfile": "FROM debian:bookworm\n",
        "environment/docker-compose.yaml": (
            "services:\n  main:\n    depends_on: [dns-server, db]\n"
            "  dns-server:\n    build: ./dns-server\n  db:\n    image: postgres:16\n"
        ),
        **TEST_SH,
    }
    task = write_files(tmp_path / "t", files)
    compose = load_task(task).compose
    assert [s.name for s in compose.sidecars] == ["db", "dns-server"]
    assert compose.sidecar("dns-server").build_context == "dns-server"
    assert compose.sidecar("db").image == "postgres:16"
    (task / "environment" / "docker-compose.yaml").write_text(
        "services:\n  main: {}\n  db:\n    image: postgres:16\n    ports: ['5432:5432']\n"
    )
    with pytest.raises(TaskFormatError, match="publishes ports on the host") as info:
        load_task(task)
    assert info.value.field == "services.db.ports"
    # overrides of the main service alone are fine
    (task / "environment" / "docker-compose.yaml").write_text(
        "services:\n  main:\n    environment: [A=1]\n"
    )
    loaded = load_task(task)
    assert loaded.config.environment.docker_image is None
    assert loaded.compose.sidecars == () and loaded.compose.main_env == {"A": "1"}


def test_task_ids_are_safe():
    assert task_id_from_name("org/my task!") == "org__my-task"
    assert task_id_from_name("plain") == "plain"
    assert task_id_from_name("///") == "task"


def test_discover_expands_folders_and_keeps_task_dirs():
    found = discover_task_dirs([EXAMPLES / "broken", EXAMPLES / "tb1" / "csv-column-sum"])
    names = {p.name for p in found}
    assert "invalid-toml" in names and "csv-column-sum" in names
    assert "broken" not in names


def test_content_hash_changes_with_content(tmp_path):
    import shutil

    src = next(iter(discover_task_dirs([EXAMPLES / "tasks"])))
    copy = tmp_path / src.name
    shutil.copytree(src, copy)
    first = load_task(copy).content_hash
    assert load_task(copy).content_hash == first
    (copy / "instruction.md").write_text((copy / "instruction.md").read_text() + "\nMore.\n")
    assert load_task(copy).content_hash != first
