"""Collect hook of service-config (separate verifier): snapshots, in the agent's container,
what the services need to start as the agent left them, and what no fresh container can show.
Writes JSON to sys.argv[1]; sys.argv[2] is the task's JSON. Standard library only: it runs as
``python3 -I -S``.

* ``entries``: every path the services use (configuration, environment file, token file,
  data file, programs, launchers, log folder and file, PID file), every path the
  configuration and environment files name under the service's own folders (``roots``; e.g.
  a configuration file the environment file points at), and every ancestor folder of those,
  by ``lstat``: kind, mode, owner, group, a link's target, a file's SHA-256 (through links,
  as the checks read it). The text of the files the agent is to edit (``texts``) and of the
  named files under ``roots`` (not the inputs the checks hash) is kept, base64, so the tests
  can put them back; the inputs keep the image's content there (the hash judges them).
* ``accounts``: the account files (the service user, its groups).
* ``pid_alive``: whether the launcher would find its PID file naming a live process.
* ``listening``: the local addresses listening on each service port (a service left
  running; the agent's processes are frozen, not gone).
* ``copies``: regular files changed since the container started that hold the secret (the
  token file itself excepted), anywhere but the kernel's pseudo file systems and /logs; None
  when the token file is not the one shipped (a regular file with the shipped SHA-256). The
  secret is read from that file: the hook (task.toml) holds only its hash.
"""

import base64
import hashlib
import json
import os
import posixpath
import re
import stat
import subprocess
import sys

OUT = sys.argv[1]
TASK = json.loads(sys.argv[2])
MAX_TEXT = 1 << 18
MAX_NAMED = 64
PATH_RE = re.compile(r"/[A-Za-z0-9._@+~-]+(?:/[A-Za-z0-9._@+~-]+)*")


def sha256(path):
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def record(path, keep_text):
    try:
        st = os.lstat(path)
    except OSError:
        return None
    m = st.st_mode
    kind = (
        "dir" if stat.S_ISDIR(m) else "file" if stat.S_ISREG(m)
        else "link" if stat.S_ISLNK(m) else "other"
    )
    entry = {"kind": kind, "mode": stat.S_IMODE(m), "uid": st.st_uid, "gid": st.st_gid}
    if kind == "link":
        entry["target"] = os.readlink(path)
    if kind in ("file", "link") and os.path.isfile(path):
        entry["sha256"] = sha256(path)
        if keep_text and kind == "file" and st.st_size <= MAX_TEXT:
            try:
                with open(path, "rb") as fh:
                    entry["content"] = base64.b64encode(fh.read()).decode()
            except OSError:
                pass
    return entry


def under(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


fixed = list(TASK["fixed"])
texts = list(TASK["texts"])
roots = list(TASK["roots"])
entries = {}
for path in fixed:
    entries[path] = record(path, keep_text=False)
# The files the agent edits, then what they name under the service's folders, round by round.
queue = list(texts)
named = set()
while queue:
    path = queue.pop(0)
    if path in entries:
        continue
    entries[path] = entry = record(path, keep_text=True)
    if entry and entry["kind"] == "link":  # what it leads to travels too, under the roots
        real = os.path.realpath(path)
        if real not in entries and under(real, roots) and len(named) < MAX_NAMED:
            named.add(real)
            queue.append(real)
    if not entry or "content" not in entry:
        continue
    text = base64.b64decode(entry["content"]).decode("utf-8", "replace")
    for found in PATH_RE.findall(text):
        found = posixpath.normpath(found)
        if found in entries or found in named or not under(found, roots):
            continue
        if len(named) >= MAX_NAMED:
            break
        named.add(found)
        queue.append(found)
# Every ancestor folder (its owner and mode decide who may pass).
for path in list(entries):
    parent = posixpath.dirname(path)
    while parent not in entries:
        entries[parent] = record(parent, keep_text=False)
        if parent == "/":
            break
        parent = posixpath.dirname(parent)

accounts = {}
for path in TASK["accounts"]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            accounts[path] = fh.read()
    except OSError:
        accounts[path] = None

pid_alive = None
if TASK["pidfile"]:
    check = '[ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null'  # what the launcher asks
    pid_alive = subprocess.run(["sh", "-c", check, "sh", TASK["pidfile"]]).returncode == 0

listening = {}
for port in TASK["ports"]:
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, hexport = fields[1].rsplit(":", 1)
            if int(hexport, 16) == port and fields[3] == "0A":
                found.append(addr)
    listening[str(port)] = found


def container_started():
    """When this container started (its PID 1), in the clock files' ctimes use."""
    with open("/proc/1/stat") as fh:
        ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as fh:
        boot = next(int(l.split()[1]) for l in fh.read().splitlines() if l.startswith("btime "))
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def copies(token, token_file, since, top="/"):
    """Regular files under ``top`` whose inode changed since ``since`` (a ctime cannot be set
    back) and that hold ``token``."""
    skip = {"/proc", "/sys", "/dev", "/logs", "/tests"}
    needle = token.encode()
    stack, hits = [top], []
    while stack:
        folder = stack.pop()
        try:
            found = list(os.scandir(folder))
        except OSError:
            continue
        for item in found:
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if item.path not in skip:
                    stack.append(item.path)
            elif (
                stat.S_ISREG(info.st_mode)
                and info.st_ctime >= since
                and item.path != token_file
                and info.st_size <= 64 * 1024 * 1024
            ):
                try:
                    with open(item.path, "rb") as fh:
                        if needle in fh.read():
                            hits.append(item.path)
                except OSError:
                    continue
    return sorted(hits)


def shipped_secret(path, digest):
    """The secret, when ``path`` is a regular file with the shipped hash (else None)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            data = fh.read(1 << 16)
    except OSError:
        return None
    secret = data.strip().decode("utf-8", "replace")
    return secret if hashlib.sha256(data).hexdigest() == digest and secret else None


secret = shipped_secret(TASK["token_file"], TASK["token_sha256"])
snapshot = {
    "entries": entries,
    "accounts": accounts,
    "pid_alive": pid_alive,
    "listening": listening,
    "copies": None
    if secret is None
    else copies(secret, TASK["token_file"], container_started() - 2, TASK.get("scan", "/")),
}
with open(OUT + ".tmp", "w") as fh:
    json.dump(snapshot, fh, sort_keys=True)
os.replace(OUT + ".tmp", OUT)
