"""service-config runs Harbor's separate verifier: a collect hook snapshots in the agent's
container what the services use (files, owners, modes, accounts, the PID file's process, a
port left open, copies of the secret) and the tests put that state back in the fresh container
before they start the services. Docker-free: the rendered tasks, the hook's script run here on
a folder of this machine, and the tests' replay of its snapshot onto a folder reset to the
image's state."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.family_tasks import Carried, render_one

from factory.families.terminal.shipped import read
from factory.families.terminal.state_snapshot import snapshot_path
from factory.generate.taxonomy import Difficulty
from factory.tasks.config import TaskConfig, VerifierEnvironmentMode
from factory.tasks.lint import lint_task

FAMILY_FILE = str(Path(__file__).parents[2] / "factory/families/terminal/service_config/family.py")
SNAPSHOT = snapshot_path("service.json")
TOKEN = "0123456789abcdef0123456789abcdef"


def hook_task(command: str) -> dict:
    """The task JSON the hook passes its script."""
    args = shlex.split(command.split("python3 -I -S - ", 1)[1].split("<<", 1)[0])
    assert args[0] == SNAPSHOT
    return json.loads(args[1])


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_every_level_renders_a_separate_verifier_that_snapshots_what_the_services_use(
    seed, tmp_path
):
    for difficulty in Difficulty:
        task = render_one("service-config", difficulty, seed, tmp_path / f"{difficulty.value}")
        ctx, root = task.draft.context, task.root
        assert [f.line() for f in lint_task(root)] == []
        config = TaskConfig.from_toml((root / "task.toml").read_text())
        assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
        carried = Carried(config)
        assert {SNAPSHOT, *task.draft.outputs} <= carried
        (hook,) = config.verifier.collect
        assert hook.user == "0" and hook.command.startswith(f"rm -rf {SNAPSHOT} {SNAPSHOT}.tmp; ")
        observed = hook_task(hook.command)
        assert set(ctx["digests"]) <= set(observed["fixed"])  # every input the tests hash
        assert ctx["config"] in observed["texts"]
        assert observed["ports"][0] == ctx["port"]
        # the hook holds the secret's hash, not the secret
        assert observed["token_sha256"] == ctx["digests"][ctx["token_file"]]
        assert ctx["token"] not in hook.command
        assert observed["accounts"] == ["/etc/passwd", "/etc/group"]
        if difficulty is not Difficulty.EASY:
            assert ctx["env_file"] in observed["texts"] and observed["pidfile"] == ctx["pidfile"]
            assert {ctx["logdir"], ctx["log"], ctx["token_file"]} <= set(observed["fixed"])
        if ctx["front"]:
            assert ctx["front"]["config"] in observed["texts"]
            assert ctx["front"]["port"] in observed["ports"]
        tests = (root / "tests" / "test_outputs.py").read_text()
        assert SNAPSHOT in tests and "_replay(state)" in tests
        # what no fresh container shows is judged from the snapshot
        assert 'state["listening"]' in tests and 'not state["copies"]' in tests
        assert 'entry.get("sha256") == digest' in tests
        # the issue-17 near miss: the secret copied, the real file left root-only
        assert "copied-secret" in task.draft.mutations


def run_hook_script(task: dict, out: Path) -> dict:
    """The hook's script, run as the hook runs it (isolated Python, the task as JSON)."""
    script = read(FAMILY_FILE, "snapshot.py")
    subprocess.run(
        [sys.executable, "-I", "-S", "-", str(out), json.dumps(task)],
        input=script,
        text=True,
        check=True,
    )
    return json.loads(out.read_text())


def build(root: Path, agent: bool) -> dict[str, Path]:
    """A service's files under ``root``: as the image has them, or as an agent left them
    (configuration fixed, environment file pointing at a local configuration, token file
    readable by the service's group, log folder created, a copy of the secret)."""
    p = {
        "config": root / "etc/svc/svc.conf",
        "local": root / "etc/svc/svc-local.conf",
        "env": root / "etc/default/svc",
        "token": root / "etc/svc/token",
        "data": root / "srv/svc/items.txt",
        "logdir": root / "var/log/svc",
        "pid": root / "run/svc.pid",
        "passwd": root / "etc/passwd",
        "group": root / "etc/group",
        "copy": root / "var/tmp/.svc-token",
        "stray": root / "srv/svc/old.txt",
    }
    for key in ("config", "env", "data", "pid", "passwd"):
        p[key].parent.mkdir(parents=True, exist_ok=True)
    (root / "var/tmp").mkdir(parents=True, exist_ok=True)
    p["token"].write_text(TOKEN + "\n")
    p["data"].write_text("alpha\nbeta\n")
    p["passwd"].write_text("root:x:0:0::/root:/bin/sh\n")
    p["group"].write_text("root:x:0:\n")
    p["stray"].write_text("in the image\n")
    if not agent:
        p["config"].write_text("port = 1\n")
        p["env"].write_text(f"SVC_CONFIG={p['config']}\n")
        p["token"].chmod(0o600)
        p["pid"].write_text("1\n")
        return p
    p["config"].write_text(
        f"port = 8100\ndata = {p['data']}\nsecret_file = {p['token']}\n# was {p['stray']}\n"
    )
    p["local"].write_text(f"port = 8100\nlog = {root}/var/log/svc/access.log\n")
    p["env"].write_text(f"SVC_CONFIG={p['local']}\nOTHER={root}/opt/elsewhere.conf\n")
    p["token"].chmod(0o640)
    p["logdir"].mkdir(parents=True)
    p["logdir"].chmod(0o750)
    (p["logdir"] / "access.log").write_text("old line\n")
    p["pid"].write_text(f"{os.getpid()}\n")  # a live process
    p["passwd"].write_text("root:x:0:0::/root:/bin/sh\nquotesd:x:999:999::/:/bin/false\n")
    p["group"].write_text("root:x:0:\nquotesd:x:999:\n")
    p["copy"].write_text(TOKEN)
    p["stray"].unlink()
    return p


def task_for(root: Path, p: dict[str, Path], ports: list[int]) -> dict:
    return {
        "fixed": [str(p["token"]), str(p["data"]), str(p["logdir"]), str(p["pid"])],
        "texts": [str(p["config"]), str(p["env"])],
        "roots": [str(root / "etc/svc"), str(root / "srv"), str(root / "var/log")],
        "accounts": [str(p["passwd"]), str(p["group"])],
        "pidfile": str(p["pid"]),
        "ports": ports,
        "token_sha256": hashlib.sha256((TOKEN + "\n").encode()).hexdigest(),
        "token_file": str(p["token"]),
        "scan": str(root),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def snapshot_of_an_agent(tmp_path: Path) -> tuple[Path, dict[str, Path], dict, dict, int]:
    root = tmp_path / "agent"
    p = build(root, agent=True)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    left, closed = listener.getsockname()[1], free_port()
    try:
        task = task_for(root, p, [left, closed])
        state = run_hook_script(task, tmp_path / "service.json")
    finally:
        listener.close()
    return root, p, task, state, left


def test_the_hook_snapshots_files_accounts_the_pid_a_port_left_open_and_copies(tmp_path):
    root, p, task, state, left = snapshot_of_an_agent(tmp_path)
    entries = state["entries"]
    text = lambda path: base64.b64decode(entries[str(path)]["content"]).decode()  # noqa: E731
    # the files the agent edits travel with their text, and what they name under the roots
    assert text(p["config"]).startswith("port = 8100")
    assert text(p["env"]).startswith("SVC_CONFIG=") and text(p["local"]).startswith("port")
    assert str(root / "opt/elsewhere.conf") not in entries  # named, but outside the roots
    assert entries[str(root / "var/log/svc/access.log")]["kind"] == "file"
    # the inputs travel as hashes only (the image's copy is what the tests run)
    token = entries[str(p["token"])]
    assert "content" not in token and token["mode"] == 0o640
    assert token["sha256"] == hashlib.sha256((TOKEN + "\n").encode()).hexdigest()
    assert entries[str(p["logdir"])]["kind"] == "dir" and entries[str(p["logdir"])]["mode"] == 0o750
    # every ancestor folder, up to /
    for parent in (root / "etc/svc", root / "etc", root, Path("/")):
        assert entries[str(parent)]["kind"] == "dir"
    assert "quotesd" in state["accounts"][str(p["passwd"])]
    assert state["pid_alive"] is True
    assert state["listening"][str(left)] == ["0100007F"]
    assert state["listening"][str(task["ports"][1])] == []
    assert state["copies"] == [str(p["copy"])]  # the token file itself excepted


def test_a_dead_pid_and_a_missing_file_are_recorded_as_such(tmp_path):
    root = tmp_path / "agent"
    p = build(root, agent=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    p["pid"].write_text(f"{dead.pid}\n")
    p["token"].unlink()
    state = run_hook_script(task_for(root, p, [free_port()]), tmp_path / "s.json")
    assert state["pid_alive"] is False
    assert state["entries"][str(p["token"])] is None
    assert state["copies"] is None  # no shipped token file: no scan, and the tests fail


def load_tests(tmp_path: Path, level: Difficulty = Difficulty.MEDIUM):
    task = render_one("service-config", level, 1, tmp_path / "rendered")
    path = task.root / "tests" / "test_outputs.py"
    spec = importlib.util.spec_from_file_location(f"sc_tests_{level.value}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inside(state: dict, root: Path) -> dict:
    """The snapshot restricted to ``root`` (this machine's / is not ours to chmod)."""
    return {
        **state,
        "entries": {k: v for k, v in state["entries"].items() if k.startswith(str(root) + "/")},
    }


def test_the_tests_put_the_agents_state_back_on_the_images_files(tmp_path):
    root, p, task, state, _ = snapshot_of_an_agent(tmp_path)
    agent = {
        str(path): (path.stat().st_mode & 0o7777, path.is_dir() or path.read_bytes())
        for path in [p["config"], p["env"], p["local"], p["token"], p["logdir"]]
    }
    # the fresh container: the image's files at the same paths
    shutil.rmtree(root)
    fresh = build(root, agent=False)
    tests = load_tests(tmp_path)
    tests.PIDFILE = str(p["pid"])
    tests.REPLAY_ROOTS = task["roots"] + task["texts"]
    tests._replay(inside(state, root))
    for path, (mode, content) in agent.items():
        assert Path(path).stat().st_mode & 0o7777 == mode, path
        if content is not True and path != str(p["token"]):
            assert Path(path).read_bytes() == content, path
    assert fresh["token"].read_text() == TOKEN + "\n"  # the image's content, the agent's mode
    assert (p["logdir"] / "access.log").is_file()
    assert not fresh["stray"].exists()  # named, gone when the agent was done: gone here
    assert "quotesd" in fresh["passwd"].read_text()
    assert p["pid"].read_text() == "1\n"  # alive there: the launcher must refuse here too
    # a PID file naming a dead process is as good as none
    tests._replay(inside({**state, "pid_alive": False}, root))
    assert not p["pid"].exists()


def test_the_replay_writes_no_content_outside_its_roots(tmp_path):
    root, p, task, state, _ = snapshot_of_an_agent(tmp_path)
    tests = load_tests(tmp_path)
    tests.PIDFILE = None
    tests.REPLAY_ROOTS = [str(root / "srv")]  # the configuration's folder is not among them
    with pytest.raises(AssertionError, match="carries"):
        tests._replay(inside(state, root))
    with pytest.raises(AssertionError, match="names /tests"):
        tests._replay({**inside(state, root), "entries": {"/tests/x": None}})


def test_a_missing_snapshot_fails_the_tests(tmp_path):
    tests = load_tests(tmp_path)
    tests.SNAPSHOT = tmp_path / "absent.json"
    with pytest.raises(AssertionError, match="collect hook did not run"):
        tests.state.__wrapped__()
