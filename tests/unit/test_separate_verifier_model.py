"""The separate verifier without Docker: task.toml's artifacts and collect hooks, the artifact
sanitiser, the lint rule and the families that render separate-verifier tasks."""

from __future__ import annotations

import io
import random
import stat
import subprocess
import tarfile

import pytest
from fixtures.family_tasks import Carried, render_every_difficulty
from pydantic import ValidationError

from factory.families import registry
from factory.generate.render import kept_hook
from factory.generate.taxonomy import Difficulty
from factory.tasks.config import ArtifactConfig, TaskConfig, VerifierEnvironmentMode
from factory.tasks.lint import lint_task
from factory.validate.artifacts import effective_artifacts, excluded, sanitise

SEPARATE = """schema_version = "1.4"
artifacts = ["/app/out.txt", { source = "/srv/data/", exclude = ["*.tmp", "cache"] }]

[verifier]
timeout_sec = 30.0
environment_mode = "separate"

[[verifier.collect]]
command = "stat -c '%U %a' /srv > /logs/artifacts/srv.stat"
timeout_sec = 5.0
user = 0

[environment]
cpus = 1
"""


def test_artifacts_and_collect_hooks_round_trip():
    config = TaskConfig.from_toml(SEPARATE)
    assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
    assert config.artifacts[0] == "/app/out.txt"
    table = config.artifacts[1]
    assert isinstance(table, ArtifactConfig)
    assert (table.container_path, table.exclude) == ("/srv/data", ["*.tmp", "cache"])
    hook = config.verifier.collect[0]
    assert (hook.command.split()[0], hook.timeout_sec, hook.user, hook.service) == (
        "stat",
        5.0,
        "0",
        "main",
    )
    again = TaskConfig.from_toml(config.to_toml())
    assert again == config
    # Editing another field keeps the file's own spelling of these.
    assert "artifacts" in config.to_toml(keep=SEPARATE)


def test_the_mode_follows_harbors_resolution():
    assert TaskConfig.from_toml("").verifier.mode is VerifierEnvironmentMode.SHARED
    implied = TaskConfig.from_toml("[verifier.environment]\ncpus = 2\n")
    assert implied.verifier.mode is VerifierEnvironmentMode.SEPARATE
    with pytest.raises(ValidationError, match="cannot have a"):
        TaskConfig.from_toml('[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\n')
    assert "artifacts" not in TaskConfig.from_toml("").to_toml()


@pytest.mark.parametrize(
    "toml",
    [
        'artifacts = ["/app/../etc/shadow"]',
        'artifacts = [{ source = "/a", destination = "/abs" }]',
        'artifacts = [{ source = "/a", destination = "manifest.json" }]',
        'artifacts = [{ source = "/a", service = "db" }]',
        '[[verifier.collect]]\ncommand = "true"\nservice = "db"',
    ],
)
def test_unsafe_or_unsupported_entries_are_refused(toml):
    with pytest.raises(ValidationError):
        TaskConfig.from_toml(toml)


def test_the_convention_folder_is_always_an_artifact():
    assert [a.container_path for a in effective_artifacts(["app/x"])] == [
        "/logs/artifacts",
        "/app/x",
    ]
    listed = effective_artifacts([ArtifactConfig(source="/logs/artifacts/", exclude=["*.log"])])
    assert len(listed) == 1 and listed[0].exclude == ["*.log"]


def test_tar_exclude_patterns():
    assert excluded("cache/a/b.txt", ["cache"])
    assert excluded("x/y.tmp", ["*.tmp"])
    assert excluded("deep/node_modules/z.js", ["node_modules"])
    assert not excluded("kept.txt", ["*.tmp", "cache"])


def _member(tar, name, *, kind=tarfile.REGTYPE, data=b"", mode=0o644, link="", uid=1000):
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname, info.uid, info.gid = kind, mode, link, uid, uid
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def _archive(members) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for args, kwargs in members:
            _member(tar, *args, **kwargs)
    buffer.seek(0)
    return buffer


def test_a_directory_artifact_is_sanitised_like_harbors_data_filter(tmp_path):
    archive = _archive(
        [
            (("report",), {"kind": tarfile.DIRTYPE, "mode": 0o700}),
            (("report/summary.txt",), {"data": b"done\n", "mode": 0o666}),
            (("report/suid",), {"data": b"#!/bin/sh\n", "mode": 0o4777}),
            (("report/inside",), {"kind": tarfile.SYMTYPE, "link": "summary.txt"}),
            (("report/passwd",), {"kind": tarfile.SYMTYPE, "link": "/etc/passwd"}),
            (("report/up",), {"kind": tarfile.SYMTYPE, "link": "../../secret"}),
            (("report/fifo",), {"kind": tarfile.FIFOTYPE}),
            (("report/hard",), {"kind": tarfile.LNKTYPE, "link": "report/summary.txt"}),
            (("report/x.tmp",), {"data": b"scratch"}),
            (("elsewhere.txt",), {"data": b"not part of it"}),
        ]
    )
    result = sanitise(archive, tmp_path / "0", exclude=["*.tmp"])
    root = result.path
    assert root == tmp_path / "0" / "report"
    names = sorted(p.name for p in root.iterdir())
    assert names == ["hard", "inside", "suid", "summary.txt"]
    assert (root / "summary.txt").read_text() == "done\n"
    assert stat.S_IMODE((root / "summary.txt").stat().st_mode) == 0o644  # group/other write off
    assert stat.S_IMODE((root / "suid").stat().st_mode) == 0o755  # setuid off
    assert (root / "inside").is_symlink() and (root / "hard").read_text() == "done\n"
    refused = " ".join(result.refused)
    for name in ("passwd", "up", "fifo", "elsewhere.txt"):
        assert name in refused
    assert not (tmp_path / "0" / "elsewhere.txt").exists()


def test_a_file_artifact_that_is_a_link_is_refused(tmp_path):
    archive = _archive([(("answer.txt",), {"kind": tarfile.SYMTYPE, "link": "/etc/shadow"})])
    result = sanitise(archive, tmp_path / "0")
    assert result.path is None and "answer.txt" in result.refused[0]
    inside = _archive([(("answer.txt",), {"kind": tarfile.SYMTYPE, "link": "other"})])
    assert sanitise(inside, tmp_path / "1").path is None
    plain = _archive([(("answer.txt",), {"data": b"42\n", "mode": 0o2755})])
    copy = sanitise(plain, tmp_path / "2").path
    assert copy.read_text() == "42\n" and stat.S_IMODE(copy.stat().st_mode) == 0o755


def test_the_kept_hook_turns_a_deleted_or_linked_input_into_an_empty_file(tmp_path):
    there, gone, linked = tmp_path / "a.txt", tmp_path / "sub" / "b.txt", tmp_path / "c.txt"
    there.write_text("data")
    linked.symlink_to(there)
    subprocess.run(["sh", "-c", kept_hook([str(there), str(gone), str(linked)])], check=True)
    assert there.read_text() == "data"
    assert gone.read_text() == "" and not linked.is_symlink() and linked.read_text() == ""


def _separate_families() -> list[str]:
    found = []
    for name in registry.names():
        family = registry.get(name)
        draft = family.draft(random.Random(3), Difficulty.EASY, dict(family.default_params))
        if draft.separate_verifier:
            found.append(name)
    return found


SEPARATE_FAMILIES = _separate_families()


def test_some_families_run_a_separate_verifier():
    assert {"ctf-hidden-flag", "log-report"} <= set(SEPARATE_FAMILIES)


@pytest.mark.parametrize("name", SEPARATE_FAMILIES)
def test_separate_family_tasks_lint_clean_and_carry_their_outputs(name, tmp_path):
    for task in render_every_difficulty(name, tmp_path):
        assert [f.line() for f in lint_task(task.root)] == []
        config = TaskConfig.from_toml((task.root / "task.toml").read_text())
        assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
        carried = Carried(config)
        assert {p.rstrip("/") for p in [*task.draft.outputs, *task.draft.kept]} <= carried
        kept = kept_hook(task.draft.kept)
        assert bool(task.draft.kept) == any(h.command == kept for h in config.verifier.collect)
