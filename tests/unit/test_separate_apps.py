"""The web and tool families' separate verifier without Docker: what their rendered tasks
declare (separate mode, the snapshot folder as an artifact, one root collect hook), what the
hooks do to a real database and a real tool record, and that the tests read only the snapshot
(a missing snapshot or call log fails them instead of reading as "nothing happened")."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import types

import pytest
from fixtures.family_tasks import Carried

from factory.families import registry
from factory.families.base import Family
from factory.families.tool import toolfamily
from factory.families.tool.scenario import Shape
from factory.families.tool.toolfamily import ToolFamily
from factory.families.web import webfamily
from factory.families.web.webfamily import WebFamily
from factory.generate.render import Origin, render_family
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty
from factory.tasks.config import TaskConfig, VerifierEnvironmentMode
from factory.tasks.lint import lint_task, overlaps_harbor_logs

WEB = sorted(n for n in registry.names() if isinstance(registry.get(n), WebFamily))
TOOL = sorted(n for n in registry.names() if isinstance(registry.get(n), ToolFamily))


def _render(family: Family, difficulty: Difficulty, seed: int) -> tuple[TaskSpec, TaskConfig]:
    draft = family.draft(random.Random(seed), difficulty, dict(family.default_params))
    origin = Origin("sep", f"x/{family.name}", family.category, seed, family.name)
    spec = render_family(
        family, draft, task_id=f"{family.name}-{seed}", difficulty=difficulty, origin=origin
    )
    return spec, spec.config


def test_all_app_families_are_found():
    # seven web apps (web-shop and web-bank also in browser mode), six tool domains and two
    # multi-app suites of them (tool-workspace, tool-orderdesk)
    apps = {registry.get(n).app_dir().name for n in WEB}
    assert len(apps) == 7 and len(WEB) == 9 and len(TOOL) == 8, (WEB, TOOL)


@pytest.mark.parametrize("name", WEB + TOOL)
@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_rendered_task_is_separate_with_one_root_snapshot_hook(name, difficulty):
    family = registry.get(name)
    tool = isinstance(family, ToolFamily)
    module = toolfamily if tool else webfamily
    for seed in (1, 2):
        spec, config = _render(family, difficulty, seed)
        again = TaskConfig.from_toml(config.to_toml())
        assert again.verifier.mode is VerifierEnvironmentMode.SEPARATE
        carried = Carried(again)
        assert module.SNAPSHOT_DIR in carried
        hooks = again.verifier.collect
        refusal = tool and "refusal" in again.metadata.get("tags", [])
        hook = toolfamily.snapshot_hook(trajectory=toolfamily.TRAJECTORY_PATH) if refusal else None
        assert [(h.command, h.user) for h in hooks] == [(hook or module.snapshot_hook(), "root")]
        # nothing under the log folders Harbor mounts (its artifact-log-overlap)
        assert not [p for p in carried if overlaps_harbor_logs(p)]
        test_py = spec.files["tests/test_outputs.py"].decode()
        if tool:
            assert toolfamily.REPLY_PATH in carried
            assert repr(toolfamily.SNAPSHOT_DIR) in test_py
            # the live record is read for the image's initial.json only
            assert 'RECORD / "state.json"' not in test_py
            assert 'RECORD / "calls.jsonl"' not in test_py
            if refusal:  # the trajectory's copy in the snapshot, never the harness's log
                assert "TRAJECTORY = SNAPSHOT / 'trajectory.json'" in test_py
        else:
            assert f"DB = {webfamily.SNAPSHOT_DB!r}" in test_py
            assert webfamily.APP_DB not in test_py


def _sh(command: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, **kwargs)


def test_the_web_hook_copies_the_committed_database_and_replaces_a_planted_snapshot(tmp_path):
    live = tmp_path / "data" / "app.db"
    live.parent.mkdir()
    db = sqlite3.connect(live)
    db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER)")
    db.execute("INSERT INTO orders (total) VALUES (42)")
    db.commit()
    db.execute("BEGIN IMMEDIATE")  # the app in the middle of a write: not committed, not copied
    db.execute("INSERT INTO orders (total) VALUES (99)")
    out = tmp_path / "snap"
    out.mkdir()
    (out / "app.db").write_text("forged")
    (tmp_path / "snap.tmp").symlink_to(tmp_path / "elsewhere")
    # a module planted where the hook runs must not be imported (python -I, run from /)
    (tmp_path / "sqlite3.py").write_text("raise SystemExit('planted module imported')\n")
    result = _sh(webfamily.snapshot_hook(str(live), str(out)), cwd=tmp_path)
    db.rollback()
    db.close()
    assert result.returncode == 0, result.stderr
    copy = sqlite3.connect(f"file:{out / 'app.db'}?mode=ro", uri=True)
    assert copy.execute("SELECT total FROM orders").fetchall() == [(42,)]
    copy.close()
    assert not (tmp_path / "snap.tmp").exists() and not (tmp_path / "elsewhere").exists()


def test_the_web_hook_leaves_no_snapshot_without_a_database(tmp_path):
    out = tmp_path / "snap"
    out.mkdir()
    (out / "app.db").write_text("forged")
    result = _sh(webfamily.snapshot_hook(str(tmp_path / "missing.db"), str(out)))
    assert result.returncode != 0
    assert not out.exists()


def test_the_tool_hook_copies_the_record_and_writes_an_empty_log_when_none_was_kept(tmp_path):
    record, out = tmp_path / "record", tmp_path / "snap"
    record.mkdir()
    (record / "state.json").write_text('{"seats": 3}')
    (record / "calls.jsonl").write_text('{"name": "book", "violation": "no"}\n')
    out.mkdir()
    (out / "calls.jsonl").write_text("")  # planted: an erased log
    assert _sh(toolfamily.snapshot_hook(str(record), str(out))).returncode == 0
    assert (out / "state.json").read_text() == '{"seats": 3}'
    assert (out / "calls.jsonl").read_text() == '{"name": "book", "violation": "no"}\n'
    (record / "calls.jsonl").unlink()  # a server that never got a call
    assert _sh(toolfamily.snapshot_hook(str(record), str(out))).returncode == 0
    assert (out / "calls.jsonl").read_text() == ""
    (record / "state.json").unlink()
    assert _sh(toolfamily.snapshot_hook(str(record), str(out))).returncode != 0
    assert not out.exists()


def _tool_tests(tmp_path, name: str = "tool-airline") -> types.ModuleType:
    """A tool task's rendered test module, reading its snapshot from ``tmp_path/snap``."""
    family = registry.get(name)
    for seed in range(1, 40):
        spec, _ = _render(family, Difficulty.MEDIUM, seed)
        if "tests/expected_state.json" in spec.files:
            break
    expected = tmp_path / "expected_state.json"
    expected.write_bytes(spec.files["tests/expected_state.json"])
    source = spec.files["tests/test_outputs.py"].decode()
    source = source.replace(repr(toolfamily.SNAPSHOT_DIR), repr(str(tmp_path / "snap")))
    source = source.replace('"/tests/expected_state.json"', repr(str(expected)))
    module = types.ModuleType("rendered_tool_tests")
    exec(compile(source, "test_outputs.py", "exec"), module.__dict__)  # noqa: S102
    return module


def test_the_tool_tests_read_the_snapshot_and_fail_without_it(tmp_path):
    tests = _tool_tests(tmp_path)
    snap = tmp_path / "snap"
    with pytest.raises(FileNotFoundError):
        tests.test_no_policy_violation()  # no snapshot: never "no calls were made"
    with pytest.raises(FileNotFoundError):
        tests.test_final_state()
    snap.mkdir()
    (snap / "state.json").write_text(json.dumps(tests.EXPECTED))
    (snap / "calls.jsonl").write_text('{"name": "x", "ok": true}\n')
    tests.test_final_state()
    tests.test_no_policy_violation()
    (snap / "calls.jsonl").write_text('{"name": "x", "violation": "forbidden"}\n')
    with pytest.raises(AssertionError):
        tests.test_no_policy_violation()
    (snap / "calls.jsonl").unlink()
    with pytest.raises(FileNotFoundError):
        tests.test_no_policy_violation()


def test_the_refusal_hook_copies_the_trajectory_and_nothing_the_agent_points_it_at(
    tmp_path, monkeypatch
):
    record, out, logs = tmp_path / "record", tmp_path / "snap", tmp_path / "logs"
    for folder in (record, logs):
        folder.mkdir()
    (record / "state.json").write_text("{}")
    trajectory = logs / "trajectory.json"
    copy = out / toolfamily.SNAPSHOT_TRAJECTORY

    # a harness may put its busybox first on PATH (its dd has no nofollow): the image's dd runs
    shadow = tmp_path / "bin"
    shadow.mkdir()
    (shadow / "dd").write_text("#!/bin/sh\nexit 1\n")
    (shadow / "dd").chmod(0o755)
    env = {**os.environ, "PATH": f"{shadow}:{os.environ['PATH']}"}

    def hook() -> subprocess.CompletedProcess:
        command = toolfamily.snapshot_hook(str(record), str(out), trajectory=str(trajectory))
        return _sh(command, timeout=20, env=env)

    # none left by the harness: the snapshot holds the record only
    assert hook().returncode == 0 and not copy.exists()
    assert (out / "state.json").read_text() == "{}"
    trajectory.write_text('{"steps": [{"source": "agent", "message": "I cannot do that."}]}')
    assert hook().returncode == 0
    assert copy.read_text() == trajectory.read_text()
    # a symlink to a file root can read and the agent cannot: not followed, no copy
    secret = tmp_path / "root-only.txt"
    secret.write_text("the answer")
    trajectory.unlink()
    trajectory.symlink_to(secret)
    assert hook().returncode == 0 and not copy.exists()
    assert (out / "state.json").exists()
    # a FIFO with no writer does not stall the hook
    trajectory.unlink()
    os.mkfifo(trajectory)
    assert hook().returncode == 0 and copy.read_text() == ""
    # a huge file is cut at the limit
    trajectory.unlink()
    monkeypatch.setattr(toolfamily, "TRAJECTORY_LIMIT", 1000)
    trajectory.write_text("x" * 5000)
    assert hook().returncode == 0 and copy.stat().st_size == 1000
    # the record is still required: no state, no snapshot at all
    (record / "state.json").unlink()
    assert hook().returncode != 0 and not out.exists()


@pytest.mark.parametrize("name", [n for n in TOOL if Shape.REFUSAL in registry.get(n).shapes])
def test_a_refusal_reads_the_agents_last_message_from_the_snapshot(name, tmp_path):
    family = registry.get(name)
    params = {**family.default_params, "shape": "refusal"}
    draft = family.draft(random.Random(1), Difficulty.MEDIUM, params)
    origin = Origin("sep", f"x/{name}", family.category, 1, name)
    spec = render_family(
        family, draft, task_id=f"{name}-r", difficulty=Difficulty.MEDIUM, origin=origin
    )
    assert "refusal" in spec.config.metadata["tags"]
    assert [f.line() for f in lint_task(spec.write(tmp_path / "task"))] == []
    snap = tmp_path / "snap"
    source = spec.files["tests/test_outputs.py"].decode()
    source = source.replace(repr(toolfamily.SNAPSHOT_DIR), repr(str(snap)))
    source = source.replace(repr(toolfamily.REPLY_PATH), repr(str(tmp_path / "reply.md")))
    source = source.replace(repr(toolfamily.RECORD_DIR), repr(str(tmp_path)))
    (tmp_path / "initial.json").write_text("{}")
    expected = spec.files.get("tests/expected_state.json", b"{}")
    (tmp_path / "expected_state.json").write_bytes(expected)
    source = source.replace(
        '"/tests/expected_state.json"', repr(str(tmp_path / "expected_state.json"))
    )
    assert f"Path({toolfamily.TRAJECTORY_PATH!r})" not in source  # the live log: never read
    tests = types.ModuleType("rendered_refusal_tests")
    exec(compile(source, "test_outputs.py", "exec"), tests.__dict__)  # noqa: S102
    snap.mkdir()
    with pytest.raises(AssertionError):  # no reply, no trajectory
        tests.test_the_customer_is_told_what_was_refused()
    said = "Sorry, I cannot do that: " + ", ".join(tests.SUBJECTS)
    steps = [
        {"source": "user", "message": "please"},
        {"source": "agent", "message": said},
    ]
    (snap / toolfamily.SNAPSHOT_TRAJECTORY).write_text(json.dumps({"steps": steps}))
    tests.test_the_customer_is_told_what_was_refused()
    # without the snapshot's copy, nothing the agent said counts
    (snap / toolfamily.SNAPSHOT_TRAJECTORY).unlink()
    with pytest.raises(AssertionError):
        tests.test_the_customer_is_told_what_was_refused()
