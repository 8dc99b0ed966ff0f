"""Hostile and broken inputs end in a one-line error naming the file and the field (or a named
outcome), never a traceback, and in bounded memory and time. No Docker needed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from task_copies import one_line

from factory.errors import OutputPathError, TaskFormatError
from factory.fsutil import ensure_output_dir
from factory.generate.taxonomy import load_taxonomy
from factory.images.dockerfile_errors import explain_parse_error
from factory.images.task_image import _label_each_stage
from factory.importers.layouts import load_any_task
from factory.inputs import MAX_CONFIG_BYTES
from factory.runtime import DockerRuntime, Readiness
from factory.tasks.model import load_task
from factory.validate.validator import Validator

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASK = EXAMPLES / "tasks" / "access-log-report"


def taxonomy_text(*leaves: str) -> str:
    """A one-category taxonomy; each leaf is YAML flow-mapping entries added to the skill."""
    skills = ", ".join(
        "{name: leaf" + str(i) + ", generator: llm" + (f", {extra}" if extra else "") + "}"
        for i, extra in enumerate(leaves or ("",))
    )
    return (
        "suite: hostile\ndomains: [{name: terminal, categories: [{name: logs, skills: ["
        + skills
        + "]}]}]\n"
    )


def _set_toml(task_copy: Path, section: str, line: str) -> None:
    """A minimal task.toml with ``line`` in ``[section]``."""
    sections = {"verifier": "", "agent": "", "environment": 'network_mode = "no-network"\n'}
    sections[section] = line + "\n" + sections.get(section, "")
    body = "".join(f"[{name}]\n{content}" for name, content in sections.items())
    (task_copy / "task.toml").write_text('schema_version = "1.1"\n' + body)


# --- task.toml ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "section, line, field",
    [
        ("verifier", "timeout_sec = inf", "verifier.timeout_sec"),
        ("agent", "timeout_sec = 1e300", "agent.timeout_sec"),
        ("environment", "build_timeout_sec = nan", "environment.build_timeout_sec"),
        ("environment", "memory_mb = 99999999999999", "environment.memory_mb"),
        ("environment", "pids_limit = 99999999999", "environment.pids_limit"),
        ("environment", 'storage = "999999999999999999999999999999T"', "environment.storage"),
        ("environment.healthcheck", 'command = "true"\ninterval_sec = inf', "interval_sec"),
    ],
)
def test_absurd_numbers_in_task_toml_name_the_field(task_copy, section, line, field):
    _set_toml(task_copy, section, line)
    with pytest.raises(TaskFormatError) as caught:
        load_task(task_copy)
    message = one_line(caught.value)
    assert "task.toml" in message and field in message


def test_deeply_nested_task_toml_is_refused(task_copy):
    (task_copy / "task.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(TaskFormatError, match="nested more than"):
        load_task(task_copy)


def test_oversized_task_toml_is_refused_before_parsing(task_copy):
    (task_copy / "task.toml").write_text("# " + "x" * MAX_CONFIG_BYTES + "\n")
    with pytest.raises(TaskFormatError, match="limit is"):
        load_task(task_copy)


def test_non_utf8_instruction_names_the_line(task_copy):
    (task_copy / "instruction.md").write_bytes(b"fine\nnot \xff utf-8\n")
    with pytest.raises(TaskFormatError) as caught:
        load_task(task_copy)
    assert "instruction.md" in one_line(caught.value) and "line 2" in str(caught.value)


def test_tb1_timeout_of_infinity_names_task_yaml(tmp_path):
    src = tmp_path / "tb1"
    shutil.copytree(EXAMPLES / "tb1" / next(p.name for p in (EXAMPLES / "tb1").iterdir()), src)
    text = (src / "task.yaml").read_text()
    (src / "task.yaml").write_text(text + "\nmax_test_timeout_sec: .inf\n")
    with pytest.raises(TaskFormatError) as caught:
        load_any_task(src, tb1_cache=tmp_path / "cache")
    assert "task.yaml: max_test_timeout_sec" in one_line(caught.value)


# --- taxonomies ----------------------------------------------------------------------------


def _taxonomy(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "taxonomy.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize(
    "setting, field",
    [
        ("quota: 1e12", "quota"),
        ("attempts_per_task: 1e308", "attempts_per_task"),
        ("attempts_per_task: .inf", "attempts_per_task"),
        ("repeats: 1000000", "repeats"),
        ("difficulty: {easy: .inf}", "difficulty"),
    ],
)
def test_absurd_leaf_settings_name_the_field(tmp_path, setting, field):
    text = taxonomy_text(setting)
    with pytest.raises(TaskFormatError) as caught:
        load_taxonomy(_taxonomy(tmp_path, text))
    message = one_line(caught.value)
    assert f"domains[0].categories[0].skills[0].{field}" in message


def test_a_taxonomy_asking_for_too_many_attempts_in_all_is_refused(tmp_path):
    text = taxonomy_text(*["quota: 10000, attempts_per_task: 100"] * 2)
    with pytest.raises(TaskFormatError, match="candidate attempts"):
        load_taxonomy(_taxonomy(tmp_path, text))


def test_billion_laughs_is_refused_fast_with_a_short_message(tmp_path):
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append("suite: *a9")
    started = time.monotonic()
    with pytest.raises(TaskFormatError) as caught:
        load_taxonomy(_taxonomy(tmp_path, "\n".join(lines) + "\n"))
    elapsed = time.monotonic() - started
    assert "expands to more than" in one_line(caught.value)
    assert elapsed < 30  # 88 s and 5.5 GB before the cap


def test_recursive_yaml_alias_is_refused(tmp_path):
    with pytest.raises(TaskFormatError, match="refers to a node that contains it"):
        load_taxonomy(_taxonomy(tmp_path, "suite: &a [*a]\n"))


def test_deeply_nested_yaml_is_refused(tmp_path):
    with pytest.raises(TaskFormatError, match="nested more than"):
        load_taxonomy(_taxonomy(tmp_path, "suite: " + "[" * 20000 + "]" * 20000 + "\n"))


def test_non_utf8_taxonomy_is_one_line(tmp_path):
    with pytest.raises(TaskFormatError) as caught:
        load_taxonomy(_taxonomy(tmp_path, taxonomy_text().encode() + b"# caf\xe9\n"))
    assert "not UTF-8" in one_line(caught.value) and "line 3" in str(caught.value)


def test_a_fifo_as_taxonomy_does_not_hang(tmp_path):
    fifo = tmp_path / "taxonomy.yaml"
    os.mkfifo(fifo)
    with pytest.raises(TaskFormatError, match="not a regular file"):
        load_taxonomy(fifo)


def test_the_cli_prints_one_line_for_a_hostile_taxonomy(tmp_path):
    path = _taxonomy(tmp_path, taxonomy_text("quota: 1e12"))
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock"}
    result = subprocess.run(
        [sys.executable, "-m", "factory", "generate", str(path), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "skills[0].quota" in result.stderr


# --- output folders ----------------------------------------------------------------------


def test_out_pointing_at_a_file_is_a_one_line_error(tmp_path):
    target = tmp_path / "report.txt"
    target.write_text("not a folder\n")
    with pytest.raises(OutputPathError) as caught:
        ensure_output_dir(target)
    assert "--out" in one_line(caught.value) and "is a file" in str(caught.value)
    with pytest.raises(OutputPathError, match="lies under"):
        ensure_output_dir(target / "sub")
    validator = Validator(DockerRuntime("hostile-out"), target)
    with pytest.raises(OutputPathError):
        validator.run([TASK])


# --- Dockerfile syntax errors --------------------------------------------------------------


def test_dockerfile_parse_error_names_the_users_line():
    original = "FROM factory/base:bookworm\nRUN echo hi\nRUNN echo typo\n"
    sent = _label_each_stage(original)  # factory inserts a LABEL after FROM
    engine = (
        "500 Server Error for http+docker://localhost/v1.41/build?t=factory-env%3Aabc&labels="
        + "%7B%22factory.managed%22%3A+%221%22" * 20
        + ': Internal Server Error ("dockerfile parse error line 4: unknown instruction: RUNN")'
    )
    explained = explain_parse_error(engine, sent, original, "environment/Dockerfile")
    assert explained == "environment/Dockerfile line 3: unknown instruction: RUNN"
    assert explain_parse_error("The command returned a non-zero code: 1", sent, original, "x") is (
        None
    )


# --- deadlines -----------------------------------------------------------------------------


def test_healthcheck_deadline_is_bounded_whatever_the_retries():
    huge = Readiness(command="false", retries=1_000_000, interval_sec=1, timeout_sec=10)
    assert huge.deadline_sec() <= 600
    small = Readiness(command="false", retries=3, interval_sec=0.2, timeout_sec=2)
    assert small.deadline_sec() == pytest.approx(3 * 2.2)
    assert Readiness(command="x", retries=10**9, max_wait_sec=5).deadline_sec() == 5
