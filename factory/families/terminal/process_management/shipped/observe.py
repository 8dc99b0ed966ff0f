"""Collect hook of process-management (separate verifier): observes the live process state in
the agent's container, in the order and with the waits the checks used when they ran there,
and writes what it saw as JSON to sys.argv[1]; sys.argv[2] is the task's JSON (state folder,
targets, keepers, lock, zombie, guard, hup). The tests judge these observations in a fresh
container. Standard library only: it runs as ``python3 -I -S``."""

import fcntl
import json
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

OUT = sys.argv[1]
TASK = json.loads(sys.argv[2])
STATE_DIR = Path(TASK["state_dir"])
TARGETS, KEEPERS = TASK["targets"], TASK["keepers"]
LOCK, ZOMBIE, GUARD, HUP = TASK["lock"], TASK["zombie"], TASK["guard"], TASK["hup"]


def norm(args):
    """Command line without the interpreter: '/opt/x/bin/prog --opt value'."""
    args = list(args)
    while args and re.fullmatch(r"(python3?(\.\d+)?|bash|sh|env)", os.path.basename(args[0])):
        args.pop(0)
    return " ".join(args)


def processes():
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text()
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
        args = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
        found.append(
            {
                "pid": int(entry.name),
                "state": fields[0],
                "ppid": int(fields[1]),
                "uid": uid,
                "comm": comm,
                "cmd": norm(args) if args else "",
            }
        )
    return found


def alive(cmd, procs=None):
    return [p for p in (procs or processes()) if p["cmd"] == cmd and p["state"] not in "ZX"]


def poll(check, seconds=5.0):
    """Wait until check() returns a false value (nothing left to complain about)."""
    deadline = time.monotonic() + seconds
    while True:
        problem = check()
        if not problem or time.monotonic() > deadline:
            return problem
        time.sleep(0.2)


def booted():
    deadline = time.monotonic() + 40
    while not (STATE_DIR / "ready").exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def targets():
    """The process list once no target is left running (or after 5 s)."""
    seen = []

    def still_running():
        seen[:] = processes()
        return [t for t in TARGETS if alive(t, seen)]

    poll(still_running)
    return seen


def lock():
    if not LOCK:
        return None
    seen = {"missing": [name for name in LOCK["files"] if not Path(name).is_file()]}
    if seen["missing"]:
        return seen
    try:
        with open(LOCK["file"], "a") as handle:

            def held():
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return "locked"
                fcntl.flock(handle, fcntl.LOCK_UN)
                return None

            seen["held"] = poll(held)
    except OSError as exc:
        seen["held"] = f"cannot open: {exc}"
    return seen


def zombies():
    if not ZOMBIE:
        return None

    def left():
        return [p["pid"] for p in processes() if p["state"] == "Z" and p["comm"] == ZOMBIE["comm"]]

    return poll(left)


def guard():
    """The first sign in 3 s that the supervised program came back (None: none)."""
    if not GUARD:
        return None
    # Its supervisor restarts it one second after it exits: watch for three.
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        for p in processes():
            if p["state"] in "ZX":
                continue
            if p["cmd"].startswith(GUARD["child"] + " "):
                return "it came back"
            if p["cmd"] == GUARD["path"]:
                return "its supervisor is still running"
        time.sleep(0.1)
    return None


def reload():
    """What the daemon says when asked (SIGUSR1) for its state (None: the setting is applied
    in place), or why it was not asked."""
    if not HUP:
        return None
    settings = {}
    try:
        text = Path(HUP["conf"]).read_text()
    except OSError as exc:
        return f"{HUP['conf']}: {exc}"
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = line.split("=", 1)
            settings[key.strip()] = value.strip()
    if settings.get(HUP["key"]) != HUP["value"]:
        return f"{HUP['conf']}: {HUP['key']} not set"
    live = alive(HUP["cmd"])
    if len(live) != 1:
        return "the daemon is not running (exactly once)"
    pid = live[0]["pid"]
    try:
        lines = (STATE_DIR / ".boot-pids").read_text().splitlines()
        booted_pids = dict(line.split() for line in lines)
        if pid != int(booted_pids[HUP["tag"]]):
            return "the daemon was restarted, not reloaded"
    except (OSError, ValueError, KeyError) as exc:
        return f"no record of the daemon's boot: {exc!r}"

    # The state file is writable by the agent: ask the daemon itself for a fresh one (SIGUSR1
    # writes it from what it holds in memory), after removing whatever lies there now.
    state_file = Path(HUP["state"])
    if state_file.is_dir() and not state_file.is_symlink():
        shutil.rmtree(state_file)
    else:
        state_file.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)

    def not_applied():
        try:
            if state_file.is_symlink() or state_file.lstat().st_uid != live[0]["uid"]:
                return "no state written by the daemon"
            state = json.loads(state_file.read_text())
        except (OSError, ValueError):
            return "no state"
        if state.get("pid") != pid or state.get("reloads", 0) < 1:
            return "not reloaded"
        if state.get("settings", {}).get(HUP["key"]) != HUP["value"]:
            return "new value not in effect"
        return None

    return poll(not_applied, 5.0)


def main():
    seen = {"booted": booted()}
    if seen["booted"]:
        seen["after_targets"] = targets()
        seen["keepers"] = processes()
        seen["lock"] = lock()
        seen["zombies"] = zombies()
        seen["guard"] = guard()
        seen["reload"] = reload()
    with open(OUT + ".tmp", "w") as fh:
        json.dump(seen, fh, sort_keys=True)
    os.replace(OUT + ".tmp", OUT)


main()
