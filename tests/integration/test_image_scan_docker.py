"""The certificate's image scan against the real engine: a forbidden string that the base image
already holds is not the task's leak; the same string in a file the task's build adds (also
under a name holding a newline), or writes into a file of the base image, is."""

from __future__ import annotations

import time

import pytest
from fixtures.offline_tasks import offline_task_toml, write_task

from factory.images.task_image import TaskImageBuilder
from factory.quality.leaks import scan_image
from factory.tasks.model import load_task

pytestmark = pytest.mark.docker
BASE = "factory/base:bookworm"
IN_BASE = "Password aging controls"
"""A line of the base image's /etc/login.defs (and of no other file of it)."""
ADDED = "the-answer-a-task-left-in-a-new-file-1f0c"
CHANGED = "the-answer-a-task-wrote-into-a-base-file-77ab"


def test_only_what_the_task_adds_or_changes_is_reported(runtime, tmp_path):
    toml = offline_task_toml(
        "image-scan", "scan", verifier_timeout=60, memory_mb=512, build_timeout=300
    )
    dockerfile = (
        f"FROM {BASE}\n"
        f"RUN mkdir -p /app && echo '{ADDED}' > /app/notes.txt && echo '{CHANGED}' >> /etc/nanorc\n"
        # a copy of a base file under a name with a newline, read line by line it would pose
        # as /etc/login.defs and etc/login.defs, both the base's
        'RUN d="$(printf \'/etc/login.defs\\netc\')" && mkdir -p "$d" && cp /etc/login.defs "$d/"\n'
        "WORKDIR /\n"
    )
    root = write_task(
        tmp_path,
        "image-scan",
        toml,
        {
            "instruction.md": "Nothing to do.\n",
            "environment/Dockerfile": dockerfile,
            "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
            "solution/solve.sh": "#!/bin/bash\ntrue\n",
        },
    )
    task = load_task(root)
    image = TaskImageBuilder(runtime).ensure(task)
    assert image.base == BASE
    strings = [IN_BASE, ADDED, CHANGED]
    started = time.monotonic()
    everything = scan_image(runtime, task, image.ref, strings)
    plain = time.monotonic() - started
    started = time.monotonic()
    found = scan_image(runtime, task, image.ref, strings, base=image.base)
    compared = time.monotonic() - started
    print(f"scan {plain:.1f} s; with the base image compared {compared:.1f} s")
    hidden = "/etc/login.defs\x01etc/login.defs"  # the newline shown as \x01
    assert sorted(everything) == ["/app/notes.txt", "/etc/login.defs", hidden, "/etc/nanorc"]
    assert sorted(found) == ["/app/notes.txt", hidden, "/etc/nanorc"]
    # A base image that cannot be started: every file, as without one.
    missing = scan_image(runtime, task, image.ref, strings, base="factory/no-such-image:1")
    assert sorted(missing) == sorted(everything)


def test_no_repo_bug_project_comes_with_the_base_image(runtime):
    """The scan lets a file that the base image has unchanged hold a forbidden string (pip's
    vendored pygments shares a line with sqlparse). That is sound only while the base image
    holds no copy of a project that repo-bug mutates: an upstream copy there would give the
    agent the original to diff against, and the scan would no longer say so."""
    from factory.families.terminal.repo_bug.projects import load_projects
    from factory.runtime import ContainerSpec

    packages = sorted({project.package for project in load_projects().values()})
    finds = " ".join(
        f"-path '*/{package}/__init__.py' -o -name '{package}.py' -o" for package in packages
    )
    script = f"find / -xdev \\( {finds} -false \\) -print 2>/dev/null; exit 0"
    with runtime.start(ContainerSpec(image="factory/python:bookworm")) as box:
        result = box.exec(["sh", "-c", script], timeout_sec=120)
    assert result.exit_code == 0
    assert result.output.split() == []
