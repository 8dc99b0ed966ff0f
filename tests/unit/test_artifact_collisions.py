"""Artifacts whose copies land on each other (Harbor's ``overlapping-artifacts``): found as
Harbor finds them, reported by ``factory lint``, collected as Harbor collects them (the first
claim wins, the later entry is skipped), and never written by the families' renderer."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.family_tasks import render_every_difficulty

from factory.tasks.config import ArtifactConfig, artifact_collisions, effective_artifacts
from factory.tasks.lint import LintRule, lint_task
from factory.tasks.model import load_task
from factory.validate.separate import collect_artifacts


def _pairs(*entries: str | ArtifactConfig) -> list[tuple[str, str]]:
    found = artifact_collisions(effective_artifacts(list(entries)))
    return [(first.source, later.source) for first, later in found]


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (["/app"], []),
        (["/app", "/app/x.py"], []),  # the folder, listed first, already holds the file
        (["/app/x.py", "/app"], [("/app/x.py", "/app")]),  # Harbor skips the folder
        (["/app", "/app"], []),
        (["/srv/a", "/srv/ab"], []),  # a shared prefix is not a parent
        (["/logs/artifacts/x"], []),  # inside the convention entry, which comes first
        (["/logs"], [("/logs/artifacts", "/logs")]),
        ([ArtifactConfig(source="/app", exclude=["*.pyc"]), "/app/x.py"], [("/app", "/app/x.py")]),
        ([ArtifactConfig(source="/a", destination="out"), ArtifactConfig(source="/b", destination="out")],
         [("/a", "/b")]),
    ],
)  # fmt: skip
def test_collisions_are_found_as_harbor_finds_them(entries, expected):
    assert _pairs(*entries) == expected


TASK = """
version = "1.0"
artifacts = [{artifacts}]

[verifier]
environment_mode = "separate"
"""


def _task(tmp_path: Path, artifacts: list[str]) -> Path:
    root = tmp_path / "task"
    for folder in ("tests", "solution", "environment"):
        (root / folder).mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text("FROM python:3.12-slim-bookworm\n")
    (root / "instruction.md").write_text("Fix the build.\n")
    (root / "tests" / "test.sh").write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    (root / "solution" / "solve.sh").write_text("#!/bin/sh\ntrue\n")
    (root / "task.toml").write_text(TASK.format(artifacts=", ".join(f'"{a}"' for a in artifacts)))
    return root


def test_lint_names_the_entry_harbor_would_skip(tmp_path):
    root = _task(tmp_path, ["/work/proj/proj", "/work/proj"])
    (finding,) = [f for f in lint_task(root) if f.rule is LintRule.OVERLAPPING_ARTIFACTS]
    assert finding.where == "artifacts"
    assert "/work/proj lands on /work/proj/proj" in finding.line()


class _Box:
    def __init__(self) -> None:
        self.copied: list[str] = []

    def copy_out(self, source, out, *, max_bytes):
        self.copied.append(source)
        return None  # nothing there: the log says so, nothing more is needed here


def test_collection_skips_the_later_entry_as_harbor_does(tmp_path):
    task = load_task(_task(tmp_path, ["/work/proj/proj", "/work/proj"]))
    box, log = _Box(), []
    (tmp_path / "staging").mkdir()
    collect_artifacts(task, box, tmp_path / "staging", log, max_bytes=1 << 20)
    assert box.copied == ["/logs/artifacts", "/work/proj/proj"]
    assert "artifact /work/proj: skipped, its copy would land on that of /work/proj/proj" in (
        "\n".join(log)
    )


@pytest.mark.parametrize("name", ["c-build-fix", "python-bugfix", "repo-bug"])
def test_families_list_a_folder_alone_not_the_files_inside_it(name, tmp_path):
    """These families carry a whole folder and also name an output inside it: the renderer
    lists the folder only (Harbor would otherwise skip the folder and the tests would build
    or test the image's original code)."""
    for task in render_every_difficulty(name, tmp_path):
        config = load_task(task.root).config
        assert artifact_collisions(effective_artifacts(config.artifacts)) == []
        assert not [f for f in lint_task(task.root) if f.rule is LintRule.OVERLAPPING_ARTIFACTS]
