"""The separate verifier of text-transform, shell-script, sqlite-migration, python-bugfix,
repo-bug and file-search and of the hand-written examples, without Docker: what each rendered
task.toml declares against what its tests read, the snapshot hooks run on a local tree, the
lint."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import tomllib
from fixtures.family_tasks import Carried, render_one

from factory.families import registry
from factory.families.terminal.file_search.family import SNAPSHOT, snapshot_hook
from factory.generate.taxonomy import Difficulty
from factory.tasks.config import TaskConfig, VerifierEnvironmentMode
from factory.tasks.lint import lint_task

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "tasks"
CONVERTED = [
    "text-transform",
    "shell-script",
    "sqlite-migration",
    "python-bugfix",
    "repo-bug",
    "file-search",
]


def _render(name, difficulty, seed, tmp_path):
    task = render_one(name, difficulty, seed, tmp_path / f"{difficulty.value}-{seed}")
    draft, root = task.draft, task.root
    config = TaskConfig.from_toml((root / "task.toml").read_text())
    carried = Carried(config)
    return draft, root, config, carried


@pytest.mark.parametrize("name", CONVERTED)
@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_converted_family_is_separate_lints_clean_and_carries_what_its_tests_read(
    name, difficulty, tmp_path
):
    for seed in (1, 2, 5):
        draft, root, config, carried = _render(name, difficulty, seed, tmp_path)
        assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
        assert [f.line() for f in lint_task(root)] == []
        assert {p.rstrip("/") for p in [*draft.outputs, *draft.kept, *draft.artifacts]} <= carried
        context = draft.context
        if name == "text-transform":
            # every file the tests open: the report and its source, or every config file
            config_shape = context["shape"] == "config"
            read = set(context["expected"] if config_shape else [context["out"]])
            read |= set(context.get("digests", {}))
            assert read <= carried
            assert read - set(draft.outputs) <= set(draft.kept), "a compared input is kept"
        elif name == "shell-script":
            assert context["path"] in carried
        elif name == "sqlite-migration":
            db = context["db"]
            assert {db, f"{db}-wal", f"{db}-journal"} <= carried
        elif name in ("python-bugfix", "repo-bug"):
            assert "/app" in carried  # the code, its tests and their configuration
        elif name == "file-search":
            assert SNAPSHOT in carried and context["listing"] in carried
            assert len(config.verifier.collect) == 1
            hook = config.verifier.collect[0].command
            assert hook.startswith("rm -rf /var/lib/factory-verifier && ")
            tests = (root / "tests" / "test_outputs.py").read_text()
            # the tree is read from the snapshot only, never from the fresh container
            assert "ROOT" not in tests and "os.walk" not in tests and SNAPSHOT in tests


def _tree(tmp_path):
    root, dest = tmp_path / "share", tmp_path / "out"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.log").write_text("hello\n")
    (root / "a" / "latest.log").symlink_to("x.log")
    (root / "a" / "loop").symlink_to("..")
    (dest / "a").mkdir(parents=True)
    (dest / "a" / "x.log").write_text("hello\n")
    (dest / "etc").symlink_to("/etc")
    (dest / "file-link.log").symlink_to(root / "a" / "x.log")
    return root, dest


def test_the_file_search_snapshot_records_what_the_tests_check(tmp_path):
    root, dest = _tree(tmp_path)
    out = tmp_path / "snap" / "tree.json"
    out.parent.mkdir()
    out.write_text('{"planted": true}')  # what an agent could leave there is replaced
    (out.parent / "other").write_text("x")
    rels = ["a/x.log", "a/latest.log", "a/loop", "a/moved.log"]
    subprocess.run(["sh", "-c", snapshot_hook(str(root), str(dest), rels, str(out))], check=True)
    assert sorted(p.name for p in out.parent.iterdir()) == ["tree.json"]
    tree = json.loads(out.read_text())
    facts = tree["root"]
    assert facts["a/moved.log"] is None
    assert facts["a/x.log"]["file"] and not facts["a/x.log"]["link"]
    assert facts["a/latest.log"]["link"] and facts["a/latest.log"]["target"] == "x.log"
    assert facts["a/loop"]["target"] == ".." and not facts["a/loop"]["file"]
    # the destination as os.walk lists it: files, links to folders and to files
    assert sorted(tree["dest"]) == ["a/x.log", "etc", "file-link.log"]
    assert tree["dest"]["etc"] == {"link": True, "file": False, "target": "/etc"}
    assert tree["dest"]["file-link.log"]["link"] and tree["dest"]["file-link.log"]["file"]
    assert tree["dest"]["a/x.log"]["mtime"] == int((dest / "a" / "x.log").stat().st_mtime)
    shutil.rmtree(dest)
    subprocess.run(["sh", "-c", snapshot_hook(str(root), str(dest), rels, str(out))], check=True)
    assert json.loads(out.read_text())["dest"] is None


def _file_search_outcome(tmp_path, difficulty, tamper=None) -> int:
    """Run a rendered file-search task's tests against the snapshot of its seed tree,
    unpacked here and solved as the reference does (the listing written, the matches copied
    or moved), then ``tamper(share, dest)``: the snapshot hook, then pytest on
    test_outputs.py with the paths moved here."""
    draft, root, _config, _carried = _render("file-search", difficulty, 4, tmp_path)
    context = draft.context
    fs = tmp_path / "fs"
    fs.mkdir()
    with tarfile.open(fileobj=io.BytesIO(draft.files["environment/seed.tar.gz"])) as tar:
        tar.extractall(fs, filter="tar")
    share = fs / context["root"].lstrip("/")
    dest = fs / context["dest"].lstrip("/")
    for rel in context["expected"] if context["action"] != "list" else []:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        move = shutil.move if context["action"] == "move" else shutil.copy2
        move(share / rel, dest / rel)
    if tamper:
        tamper(share, dest)
    out = tmp_path / "snap" / "tree.json"  # the hook empties its folder
    rels = sorted({*context["meta"], *context["links"]})
    subprocess.run(["sh", "-c", snapshot_hook(str(share), str(dest), rels, str(out))], check=True)
    listing = tmp_path / "listing.txt"
    listing.write_text("".join(r + "\n" for r in context["expected"]))
    tests = (root / "tests" / "test_outputs.py").read_text()
    tests = tests.replace(repr(SNAPSHOT), repr(str(out)))
    tests = tests.replace(repr(context["listing"]), repr(str(listing)))
    (tmp_path / "test_fs.py").write_text(tests)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fs.py"]
    return subprocess.run(command, capture_output=True, cwd=tmp_path).returncode


# (hard adds chores beyond the search: test_family_file_search runs its reference and near misses)
@pytest.mark.parametrize("difficulty", [Difficulty.EASY, Difficulty.MEDIUM])
def test_file_search_tests_pass_on_a_solved_tree_and_fail_on_a_changed_one(tmp_path, difficulty):
    family = registry.get("file-search")
    context = family.draft(random.Random(4), difficulty, dict(family.default_params)).context
    assert _file_search_outcome(tmp_path / "solved", difficulty) == 0
    link = next(iter(context["links"]))
    victim = next(r for r in context["meta"] if r not in context["expected"])

    def relink(share, _dest):
        (share / link).unlink()
        (share / link).symlink_to("elsewhere")

    def edit(share, _dest):
        (share / victim).write_text("x")

    def delete(share, _dest):
        (share / victim).unlink()

    tampers = [relink, edit, delete]
    if context["action"] != "list":
        found = context["expected"][0]

        def touch(_share, dest):  # a collected file whose mtime was not kept
            os.utime(dest / found)

        def extra(_share, dest):  # a link to a folder is counted as collected too
            (dest / "more").symlink_to("/etc")

        tampers += [touch, extra]
    for tamper in tampers:
        assert _file_search_outcome(tmp_path / tamper.__name__, difficulty, tamper) != 0, tamper


@pytest.mark.parametrize("task", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_every_example_runs_a_separate_verifier_and_lints_clean(task):
    root = EXAMPLES / task
    config = TaskConfig.from_toml((root / "task.toml").read_text())
    assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
    assert [f.line() for f in lint_task(root)] == []
    carried = Carried(config)
    tests = (root / "tests" / "test_outputs.py").read_text()
    # each snapshot a hook writes is carried, and written afresh
    for hook in config.verifier.collect:
        if "/var/lib/factory-verifier" in hook.command:
            assert hook.command.startswith("rm -rf /var/lib/factory-verifier && ")
    for path in carried:
        if path.startswith("/var/lib/factory-verifier/"):
            assert path in tests
            assert any(path in h.command for h in config.verifier.collect)


def test_the_deploy_tree_snapshot_reads_owners_modes_and_contents(tmp_path):
    root = EXAMPLES / "fix-deploy-tree-permissions"
    hook = tomllib.loads((root / "task.toml").read_text())["verifier"]["collect"][0]["command"]
    tree = tmp_path / "app"
    shutil.copytree(root / "environment" / "app", tree)
    (tree / "logs" / "orders.log").chmod(0o660)
    (tree / "bin" / "extra").symlink_to("/etc/passwd")
    snap = tmp_path / "snap"
    local = hook.replace("/var/lib/factory-verifier", str(snap)).replace(
        '"/srv/app"', repr(str(tree))
    )
    subprocess.run(["sh", "-c", local], check=True)
    found = json.loads((snap / "deploy-tree.json").read_text())
    assert "bin/extra" in found["files"] and found["entries"]["bin/extra"]["link"]
    assert found["entries"]["logs/orders.log"]["mode"] == 0o660
    assert set(found["dirs"]) == {".", "bin", "config", "lib", "logs"}
    digest = found["entries"]["VERSION"]["sha"]
    assert f'"VERSION": "{digest}"' in (root / "tests" / "test_outputs.py").read_text()
