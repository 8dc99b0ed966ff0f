"""The separate verifier of archives, git-repair, c-build-fix, cron-schedule, data-recovery and
performance-budget, without Docker: each rendered task is separate, lint-clean and carries what
its tests read; the snapshot hook writes fresh files in the format the rendered tests parse."""

from __future__ import annotations

import os
import random
import shlex
import stat
import subprocess
from pathlib import Path

import pytest
from fixtures.family_tasks import Carried

from factory.families import registry
from factory.families.terminal import state_snapshot
from factory.families.terminal.state_snapshot import (
    STATE_DIR,
    present_lines,
    snapshot_hook,
    stat_lines,
    tree_lines,
)
from factory.generate.render import Origin, render_family
from factory.generate.taxonomy import Difficulty
from factory.tasks.config import TaskConfig, VerifierEnvironmentMode
from factory.tasks.lint import lint_task

FAMILIES = [
    "archives",
    "git-repair",
    "c-build-fix",
    "cron-schedule",
    "data-recovery",
    "performance-budget",
]
SNAPSHOTS = {"archives", "cron-schedule", "data-recovery"}
"""Families whose tests read owners, modes or paths outside the artifacts from a snapshot."""


def _render(name: str, draft, difficulty: Difficulty, tmp_path: Path) -> Path:
    family = registry.get(name)
    origin = Origin("lint", f"x/{name}", family.category, 3, name)
    spec = render_family(
        family, draft, task_id=f"{name}-{difficulty.value}", difficulty=difficulty, origin=origin
    )
    return spec.write(tmp_path / f"{name}-{difficulty.value}")


def _drafts(name: str):
    """Drafts of every difficulty, over enough seeds to meet each of the family's kinds."""
    family = registry.get(name)
    for difficulty in Difficulty:
        for seed in range(4):
            yield difficulty, family.draft(random.Random(seed), difficulty, family.default_params)


@pytest.mark.parametrize("name", FAMILIES)
def test_tasks_are_separate_lint_clean_and_carry_what_the_tests_read(name, tmp_path):
    for difficulty, draft in _drafts(name):
        assert draft.separate_verifier
        root = _render(name, draft, difficulty, tmp_path)
        assert [f.line() for f in lint_task(root)] == []
        config = TaskConfig.from_toml((root / "task.toml").read_text())
        assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
        carried = Carried(config)
        assert {p.rstrip("/") for p in [*draft.outputs, *draft.kept]} <= carried
        tests = (root / "tests" / "test_outputs.py").read_text()
        hooks = [h.command for h in config.verifier.collect]
        if STATE_DIR in tests:  # a test reads a snapshot: the hook writes it, it travels
            assert STATE_DIR in carried
            written = [h for h in hooks if h.startswith(f"rm -rf {STATE_DIR} && ")]
            assert len(written) == 1
            for path in {
                line.split("=", 1)[1].strip().strip("'\"")
                for line in tests.splitlines()
                if STATE_DIR in line and "=" in line
            }:
                assert f"> {path};" in written[0], path
        else:
            assert STATE_DIR not in carried and not any(STATE_DIR in h for h in hooks)


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_families_that_check_metadata_snapshot_it(name, tmp_path):
    kinds = set()
    for difficulty, draft in _drafts(name):
        tests = (_render(name, draft, difficulty, tmp_path) / "tests/test_outputs.py").read_text()
        assert "os.stat(" not in tests and "os.lstat(" not in tests and ".stat()" not in tests
        assert "os.path.lexists(" not in tests and "os.walk(" not in tests
        kinds.add(STATE_DIR in tests)
    assert kinds == {True} if name == "cron-schedule" else kinds == {True, False}


def test_the_code_families_carry_their_whole_tree():
    family = registry.get("c-build-fix")
    draft = family.draft(random.Random(1), Difficulty.MEDIUM, family.default_params)
    root = draft.context["root"]
    assert root in draft.artifacts and draft.outputs == [f"{root}/{draft.context['prog']}"]
    family = registry.get("git-repair")
    draft = family.draft(random.Random(1), Difficulty.MEDIUM, family.default_params)
    assert draft.outputs == [draft.context["repo"] + "/"]


def _run(hook: str) -> None:
    subprocess.run(["sh", "-c", hook], check=True, capture_output=True)


def test_the_snapshot_hook_replaces_what_was_planted(tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setattr(state_snapshot, "STATE_DIR", str(state))
    (state / "stats").mkdir(parents=True)  # a folder where a snapshot goes
    (state / "stats" / "x").write_text("0 81a4 /etc/forged\n")
    (state / "planted").write_text("forged")
    real = tmp_path / "real.conf"
    real.write_text("x")
    real.chmod(0o4640)
    link = tmp_path / "link"
    link.symlink_to(real)
    gone = tmp_path / "a b" / "gone"
    _run(snapshot_hook({"stats": stat_lines([str(real), str(gone), str(link)])}))
    assert sorted(p.name for p in state.iterdir()) == ["stats"]
    lines = (state / "stats").read_text().splitlines()
    uid, raw, path = lines[0].split(" ", 2)
    assert (int(uid), path) == (os.getuid(), str(real))
    assert stat.S_ISREG(int(raw, 16)) and stat.S_IMODE(int(raw, 16)) == 0o4640
    assert lines[1] == f"- - {gone}"
    assert stat.S_ISLNK(int(lines[2].split()[1], 16))  # the link itself, not its target


def test_the_tree_and_presence_snapshots(tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setattr(state_snapshot, "STATE_DIR", str(state))
    top = tmp_path / "top"
    (top / "sub dir").mkdir(parents=True)
    (top / "sub dir" / "f.txt").write_text("1")
    os.utime(top / "sub dir" / "f.txt", (1650000000, 1650000000))
    (top / "out").symlink_to("/etc")
    landed = tmp_path / "landed.sh"
    landed.write_text("")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    _run(
        snapshot_hook(
            {
                "tree": tree_lines(str(top)),
                "present": present_lines([str(landed), str(dangling), str(tmp_path / "no")]),
            }
        )
    )
    records = [line.split(" ", 2) for line in (state / "tree").read_text().splitlines()]
    kinds = {"out": stat.S_ISLNK, "sub dir": stat.S_ISDIR, "sub dir/f.txt": stat.S_ISREG}
    assert sorted(path for _, _, path in records) == sorted(f"{top}/{k}" for k in kinds)
    for raw, mtime, path in records:
        assert kinds[path[len(str(top)) + 1 :]](int(raw, 16)), path
        if path.endswith("f.txt"):
            assert int(mtime) == 1650000000
    assert (state / "present").read_text().splitlines() == [str(landed), str(dangling)]


def _module(name: str, draft, difficulty: Difficulty, tmp_path: Path) -> dict:
    """The rendered tests/test_outputs.py of ``draft``, executed (its test functions not run)."""
    root = _render(name, draft, difficulty, tmp_path)
    namespace: dict = {"__name__": "rendered"}
    exec((root / "tests" / "test_outputs.py").read_text(), namespace)  # noqa: S102
    return namespace


def test_archives_tests_read_the_hook_manifest(tmp_path, monkeypatch):
    family = registry.get("archives")
    draft = family._extract(random.Random(5), Difficulty.MEDIUM)
    assert draft.kept == [draft.context["archive"]]
    module = _module("archives", draft, Difficulty.MEDIUM, tmp_path)
    state = tmp_path / "state"
    monkeypatch.setattr(state_snapshot, "STATE_DIR", str(state))
    target = tmp_path / "target"
    (target / "a").mkdir(parents=True)
    (target / "a" / "keep.txt").write_text("k")
    (target / "a" / "keep.txt").chmod(0o664)
    os.utime(target / "a" / "keep.txt", (1650000123.9, 1650000123.9))
    (target / "a" / "escape").symlink_to("/etc")
    landing = tmp_path / "landing.sh"
    landing.write_text("pwned")
    _run(
        snapshot_hook(
            {
                "tree": tree_lines(str(target)),
                "landed": present_lines([str(landing), str(tmp_path / "not-there")]),
            }
        )
    )
    module.update(TREE=str(state / "tree"), TARGET=target, LANDED=str(state / "landed"))
    assert module["manifest"]()["a/keep.txt"] == ("f", 0o664, 1650000123)
    assert sorted(module["tree"]()) == ["a/escape", "a/keep.txt"]  # the link counts
    module["LANDINGS"] = [str(tmp_path / "not-there")]
    module["test_nothing_escaped"]()
    module["LANDINGS"] = [str(landing)]
    with pytest.raises(AssertionError, match="outside the target"):
        module["test_nothing_escaped"]()


def test_data_recovery_checks_the_snapshot_mode(tmp_path, monkeypatch):
    family = registry.get("data-recovery")
    draft = family._patches(random.Random(2), Difficulty.HARD)
    module = _module("data-recovery", draft, Difficulty.HARD, tmp_path)
    assert module["CHECK_MODE"] and module["STATE"] == f"{STATE_DIR}/live.stat"
    live = tmp_path / "live.conf"
    live.write_text("x")
    snap = tmp_path / "live.stat"
    module["STATE"] = str(snap)
    want = int(module["MODE"], 8)
    for mode, ok in [(want, os.getuid() == 0), (want | 0o020, False)]:
        live.chmod(mode)
        snap.write_text(subprocess.check_output(["sh", "-c", stat_lines([str(live)])]).decode())
        if ok:
            module["test_permissions"]()
        else:
            with pytest.raises(AssertionError):
                module["test_permissions"]()
    snap.write_text(f"0 {0o100000 | want:x} {live}\n")
    module["test_permissions"]()
    snap.write_text(f"1000 {0o100000 | want:x} {live}\n")
    with pytest.raises(AssertionError, match="root"):
        module["test_permissions"]()
    snap.write_text(f"- - {live}\n")
    with pytest.raises(AssertionError, match="missing"):
        module["test_permissions"]()


def test_cron_tests_read_owners_and_modes_from_the_snapshot(tmp_path):
    family = registry.get("cron-schedule")
    draft = family.draft(random.Random(1), Difficulty.HARD, family.default_params)
    assert draft.collect == [
        snapshot_hook({"crontabs.stat": stat_lines(list(draft.context["files_spec"]))})
    ]
    module = _module("cron-schedule", draft, Difficulty.HARD, tmp_path)
    snap = tmp_path / "crontabs.stat"
    module["STATE"] = str(snap)
    paths = list(module["FILES"])
    snap.write_text(
        f"0 81a4 {paths[0]}\n" + "".join(f"- - {p}\n" for p in paths[1:]),
    )
    found = module["owners_and_modes"]()
    assert found[paths[0]] == (0, 0o100644)
    assert all(found[p] is None for p in paths[1:])
    assert shlex.quote(paths[0]) in draft.collect[0]


@pytest.mark.parametrize(
    ("name", "kind", "mutation", "tail"),
    [
        ("archives", None, "escaped-link", "chmod g+w "),
        ("data-recovery", "_patches", "group-writable", "chmod g+w "),
        ("cron-schedule", None, "group-writable", "chmod 664 "),
    ],
)
def test_a_near_miss_only_the_snapshot_catches(name, kind, mutation, tail, tmp_path):
    """The copy a separate verifier gets clears group write bits and drops links leaving the
    target: each of these families has a mutation that hides there."""
    family = registry.get(name)
    rng = random.Random(1)
    draft = (
        getattr(family, kind)(rng, Difficulty.HARD)
        if kind
        else family.draft(rng, Difficulty.HARD, family.default_params)
    )
    origin = Origin("lint", f"x/{name}", family.category, 3, name)
    spec = render_family(family, draft, task_id=name, difficulty=Difficulty.HARD, origin=origin)
    script = spec.mutations[mutation]
    assert tail in script
    if name == "archives":
        assert f"ln -s /etc {draft.context['target']}/etc-link" in script
