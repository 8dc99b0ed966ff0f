"""Families whose tests read state no file carries (owners, modes, inodes, accounts, live
processes) run a separate verifier: collect hooks snapshot that state in the agent's container
and the tests read the snapshots. Docker-free: the rendered task.toml of each converted family,
the snapshot scripts run here on a folder of this machine, and a snapshot the agent planted."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fixtures.family_tasks import Carried, render_one

from factory.families.terminal.shipped import read
from factory.families.terminal.state_snapshot import (
    SNAPSHOT_DIR,
    TREE_SCRIPT,
    python_hook,
    snapshot_path,
    tree_hook,
)
from factory.generate.taxonomy import Difficulty
from factory.tasks.config import TaskConfig, VerifierEnvironmentMode
from factory.tasks.lint import lint_task

CONVERTED = {
    "file-permissions": "permissions.json",
    "disk-cleanup": "tree.json",
    "users-groups": "accounts.json",
    "process-management": "processes.json",
}


def _render(name, difficulty, seed, tmp_path):
    task = render_one(name, difficulty, seed, tmp_path / f"{difficulty.value}-{seed}")
    return task.draft, task.root


@pytest.mark.parametrize("name", sorted(CONVERTED))
@pytest.mark.parametrize("seed", [1, 2])
def test_converted_families_render_a_separate_verifier_with_fresh_snapshots(name, seed, tmp_path):
    snapshot = snapshot_path(CONVERTED[name])
    for difficulty in Difficulty:
        draft, root = _render(name, difficulty, seed, tmp_path)
        assert [f.line() for f in lint_task(root)] == []
        config = TaskConfig.from_toml((root / "task.toml").read_text())
        assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
        carried = Carried(config)
        assert {p.rstrip("/") for p in draft.outputs} | {snapshot} <= carried
        hooks = config.verifier.collect
        assert len(hooks) == 1 and hooks[0].user == "0"
        # The hook removes whatever lies at the snapshot's path before writing it.
        assert hooks[0].command.startswith(f"rm -rf {snapshot} {snapshot}.tmp; ")
        assert "python3 -I -S -" in hooks[0].command
        # The tests read the snapshot, not the agent's container.
        tests = (root / "tests" / "test_outputs.py").read_text()
        assert snapshot in tests
        assert 'Path("/proc")' not in tests and "os.lstat" not in tests and ".stat()" not in tests


def test_users_groups_snapshots_the_account_files_homes_and_skeleton(tmp_path):
    draft, _ = _render("users-groups", Difficulty.HARD, 1, tmp_path)
    command = draft.collect[0].command
    for path in ("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/skel"):
        assert path in command
    for spec in draft.context["users"].values():
        if "home_mode" in spec:
            assert spec["home"] in command
        for owned in spec.get("owned", []):
            assert owned in command


def _run_tree_script(out, roots, paths=(), texts=()):
    args = [json.dumps(list(roots)), json.dumps(list(paths)), json.dumps(list(texts))]
    subprocess.run(
        [sys.executable, "-I", "-S", "-", str(out), *args], input=TREE_SCRIPT.encode(), check=True
    )
    return json.loads(out.read_text())


def test_the_tree_snapshot_records_modes_owners_inodes_links_and_contents(tmp_path):
    root = tmp_path / "srv"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(root / "bin" / "run.sh", 0o750)
    os.chmod(root / "bin", 0o2770)
    os.link(root / "bin" / "run.sh", root / "same.sh")
    (root / "current").symlink_to("bin/run.sh")
    (root / "up").symlink_to(tmp_path)  # a link to a folder is recorded, never walked
    os.mkfifo(root / "pipe")
    elsewhere = tmp_path / "default.conf"
    elsewhere.write_text("default settings\n")
    via = tmp_path / "via"
    via.symlink_to(root)
    state = _run_tree_script(
        tmp_path / "out.json",
        [str(via), str(tmp_path / "gone")],
        [str(elsewhere)],
        [str(elsewhere)],
    )
    entries = state["entries"]
    run = entries[f"{via}/bin/run.sh"]
    assert run["kind"] == "file" and run["mode"] == 0o750 and run["uid"] == os.getuid()
    assert entries[f"{via}/bin"]["mode"] == 0o2770
    assert entries[f"{via}/same.sh"]["ino"] == run["ino"] and run["nlink"] == 2
    assert run["sha256"] == entries[f"{via}/same.sh"]["sha256"]
    link = entries[f"{via}/current"]
    assert link["kind"] == "link" and link["target"] == "bin/run.sh"
    assert link["to"]["ino"] == run["ino"] and link["to"]["sha256"] == run["sha256"]
    assert entries[f"{via}/up"]["kind"] == "link"
    assert not any(p.startswith(f"{via}/up/") for p in entries)
    assert entries[f"{via}/pipe"]["kind"] == "other"
    assert entries[str(via)]["kind"] == "link"  # the root itself is a link: walked through
    assert str(tmp_path / "gone") not in entries
    assert entries[str(elsewhere)]["mode"] == elsewhere.stat().st_mode & 0o7777
    assert state["texts"] == {str(elsewhere): "default settings\n"}


def test_a_planted_snapshot_never_survives_a_failing_hook(tmp_path):
    hook = tree_hook("tree.json", [str(tmp_path / "srv")])
    folder = tmp_path / "state"
    folder.mkdir()
    planted = folder / "tree.json"
    planted.write_text('{"entries": {}, "roots": [], "texts": {}}')
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\nexit 1\n")
    (fake / "python3").chmod(0o755)
    command = hook.command.replace(SNAPSHOT_DIR, str(folder))
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    subprocess.run(["sh", "-c", command], env=env, check=False)
    assert not planted.exists()
    # A planted folder (or link) at the path goes too, and a working python3 writes it afresh.
    planted.mkdir()
    real = tmp_path / "realbin"
    real.mkdir()
    (real / "python3").symlink_to(sys.executable)
    subprocess.run(["sh", "-c", command], env={"PATH": f"{real}:/usr/bin:/bin"}, check=True)
    assert json.loads(planted.read_text())["roots"] == [str(tmp_path / "srv")]
    # A link planted where the script writes its temporary copy redirects nothing.
    outside = tmp_path / "outside.txt"
    outside.write_text("the agent's")
    planted.unlink()
    (folder / "tree.json.tmp").symlink_to(outside)
    subprocess.run(["sh", "-c", command], env={"PATH": f"{real}:/usr/bin:/bin"}, check=True)
    assert outside.read_text() == "the agent's"
    assert not planted.is_symlink() and json.loads(planted.read_text())["entries"] == {}


def test_a_hook_script_cannot_end_its_own_heredoc():
    with pytest.raises(ValueError):
        python_hook("x.json", "print(1)\nFACTORY_SNAPSHOT_END\n")


def test_the_process_observer_runs_on_the_standard_library_alone(tmp_path):
    import factory.families.terminal.process_management.family as pm

    state = tmp_path / "state"
    state.mkdir()
    (state / "ready").touch()
    task = {
        "state_dir": str(state),
        "targets": ["/nowhere/prog --never running"],
        "keepers": [],
        "lock": None,
        "zombie": None,
        "guard": None,
        "hup": None,
    }
    out = tmp_path / "seen.json"
    script = read(pm.__file__, "observe.py")
    subprocess.run(
        [sys.executable, "-I", "-S", "-", str(out), json.dumps(task)],
        input=script.encode(),
        check=True,
        timeout=60,
    )
    seen = json.loads(out.read_text())
    assert seen["booted"] is True
    assert any(p["pid"] == os.getpid() for p in seen["keepers"])
    assert not [p for p in seen["after_targets"] if p["cmd"] == task["targets"][0]]
    assert seen["lock"] is None and seen["reload"] is None and seen["guard"] is None
