"""Symbolic links and special files in task directories: a link never leads factory to a
host file (check, import, validate, export refuse it or copy it as a link), and a FIFO or device
node is refused instead of hanging hashing, tar or upload. No Docker needed."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path, PurePosixPath

import pytest
from fixtures.task_dirs import TB2_STYLE_TASK
from task_copies import one_line

from factory.archive import tar_directory
from factory.errors import UnsafeTaskFileError
from factory.importers.layouts import import_task
from factory.publish.api import export_suite
from factory.publish.errors import UnsafePathError
from factory.publish.models import FileEntry
from factory.publish.tree import link_stays_inside, write_tree
from factory.runtime import DockerRuntime
from factory.tasks.hashing import hash_tree
from factory.tasks.model import load_task
from factory.validate.outcome import Outcome
from factory.validate.validator import Validator

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASK = EXAMPLES / "tasks" / "access-log-report"


def test_symlinked_dockerfile_and_instruction_are_refused(task_copy, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("FROM host-secret\n")
    for rel in ("environment/Dockerfile", "instruction.md"):
        original = task_copy / rel
        saved = original.read_bytes()
        original.unlink()
        original.symlink_to(secret)
        with pytest.raises(UnsafeTaskFileError) as caught:
            load_task(task_copy)
        message = one_line(caught.value)
        assert rel in message and "outside the task" in message
        assert "host-secret" not in message.split(":", 2)[-1].replace(str(secret), "")
        original.unlink()
        original.write_bytes(saved)
    load_task(task_copy)  # restored: fine again


def test_links_inside_the_task_stay_links(task_copy):
    (task_copy / "tests" / "alias.py").symlink_to("test_outputs.py")
    (task_copy / "environment" / "dangling").symlink_to("no-such-file")
    loaded = load_task(task_copy)
    assert loaded.content_hash == hash_tree(task_copy)


def test_validate_gives_invalid_task_for_a_link_out_of_the_task(task_copy, tmp_path):
    (task_copy / "tests" / "data.txt").symlink_to("/etc/hostname")
    verdict = Validator(DockerRuntime("hostile-link"), tmp_path / "out").validate(task_copy)
    assert verdict.outcome is Outcome.INVALID_TASK
    assert "tests/data.txt" in verdict.reason and "outside the task" in verdict.reason


@pytest.mark.parametrize("folder", ["tests", "solution", "environment"])
def test_a_fifo_in_the_task_is_refused_not_waited_on(task_copy, tmp_path, folder):
    os.mkfifo(task_copy / folder / "pipe")
    verdict = Validator(DockerRuntime("hostile-fifo"), tmp_path / "out").validate(task_copy)
    assert verdict.outcome is Outcome.INVALID_TASK
    assert f"{folder}/pipe: a FIFO" in verdict.reason
    with pytest.raises(UnsafeTaskFileError, match="a FIFO"):
        hash_tree(task_copy)


def test_tasks_check_names_the_link(task_copy):
    (task_copy / "solution" / "helper.sh").symlink_to("/etc/passwd")
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock"}
    result = subprocess.run(
        [sys.executable, "-m", "factory", "tasks", "check", str(task_copy)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 1
    assert "solution/helper.sh: symbolic link to '/etc/passwd', outside the task" in (
        " ".join(result.stderr.split())
    )


def test_import_refuses_a_requirements_file_linked_to_a_host_file(tmp_path):
    src = tmp_path / "harbor-task"
    shutil.copytree(TB2_STYLE_TASK, src)
    secret = tmp_path / "host-only.txt"
    secret.write_text("host-secret-package==6.6.6\n")
    (src / "tests" / "requirements.txt").symlink_to(secret)
    test_sh = src / "tests" / "test.sh"
    test_sh.write_text("pip install -r /tests/requirements.txt\n" + test_sh.read_text())
    result = import_task(src, tmp_path / "out")
    assert result.error is not None and "tests/requirements.txt" in result.error
    assert "outside the task" in result.error
    written = [p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert not any("host-secret-package" in text for text in written)


def test_requirements_are_never_read_through_a_link_out_of_the_tests(tmp_path):
    from factory.tasks.offline import scan_test_script

    tests = tmp_path / "tests"
    tests.mkdir()
    secret = tmp_path / "host-only.txt"
    secret.write_text("host-secret-package==6.6.6\n")
    (tests / "requirements.txt").symlink_to(secret)
    os.mkfifo(tests / "pipe.txt")
    scan = scan_test_script(
        "pip install -r requirements.txt\npip install -r pipe.txt\n",
        name="tests/test.sh",
        requirement_root=tests,
    )
    assert scan.system_packages == []


def test_import_states_the_network_policy_it_kept(tmp_path):
    result = import_task(TB2_STYLE_TASK, tmp_path / "out")
    assert result.error is None
    assert any(note.startswith("network policy kept from the source") for note in result.notes)


def test_export_refuses_a_task_with_a_link_out_of_it(tmp_path):
    tasks = tmp_path / "tasks"
    shutil.copytree(TASK, tasks / "t1")
    (tasks / "t1" / "environment" / "leak").symlink_to("/etc/hostname")
    with pytest.raises(UnsafeTaskFileError, match="environment/leak"):
        export_suite(tasks, "jsonl", tmp_path / "export")
    assert not (tmp_path / "export").exists()


@pytest.mark.parametrize(
    "link, target, inside",
    [
        ("a", "b", True),
        ("dir/a", "../b", True),
        ("dir/a", "../../b", False),
        ("a", "/etc/passwd", False),
        ("a/b/c", "./x/../../y", True),
        ("a", "..", False),
    ],
)
def test_link_targets_are_judged_against_the_task_root(link, target, inside):
    assert link_stays_inside(PurePosixPath(link), target) is inside


def test_rebuilding_an_export_refuses_a_link_out_of_the_task(tmp_path):
    entries = [FileEntry(path="tests/secret", kind="symlink", link_target="../../../etc/shadow")]
    with pytest.raises(UnsafePathError, match="outside the task"):
        write_tree(entries, tmp_path / "dest", where="row 3")
    assert not (tmp_path / "dest" / "tests" / "secret").is_symlink()


def test_uploads_keep_links_as_links_and_refuse_fifos(tmp_path):
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "real.txt").write_text("hello\n")
    (folder / "link.txt").symlink_to("/etc/passwd")
    data = tar_directory(folder, "tests")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        link = archive.getmember("tests/link.txt")
        assert link.issym() and link.linkname == "/etc/passwd"
        assert archive.extractfile("tests/real.txt").read() == b"hello\n"
    os.mkfifo(folder / "pipe")
    with pytest.raises(UnsafeTaskFileError, match="a FIFO"):
        tar_directory(folder, "tests")
