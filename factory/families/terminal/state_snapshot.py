"""Collect hooks that snapshot state no file carries (owners, modes, inode numbers, links,
processes and their answers to signals) into JSON files, for families whose tests run in
Harbor's separate verifier (:attr:`factory.families.base.Draft.separate_verifier`).

A hook runs in the agent's container after the agent's processes are frozen and the toolchain
is restored from the image. It trusts nothing the agent left at the snapshot's path: it removes
the path first (``rm -rf``, whatever the agent put there: a file, a folder, a link), then the
image's ``python3`` writes the snapshot afresh, isolated (``-I -S``: no environment variables,
no user or site packages, no ``.pth`` files), from a script that lives in the hook itself (in
task.toml, never in the agent's container). A hook that fails leaves no snapshot, and tests
that find none fail: a snapshot the tests read was written by the hook.

The tests read the snapshot in the fresh container (a test module that cannot read it fails),
and resolve user and group names there, against the image's account database.
"""

from __future__ import annotations

import json
import shlex

from factory.tasks.config import VerifierCollectConfig

SNAPSHOT_DIR = "/logs/state"
"""Where the hooks write their snapshots (each one a file artifact of its own)."""
HOOK_USER = "0"
"""The hooks run as root: they must read every file and signal every process."""
_END = "FACTORY_SNAPSHOT_END"


def snapshot_path(name: str) -> str:
    return f"{SNAPSHOT_DIR}/{name}"


def python_hook(
    name: str, script: str, args: list[str] | tuple[str, ...] = (), *, timeout_sec: float = 60.0
) -> VerifierCollectConfig:
    """A collect hook: remove ``SNAPSHOT_DIR/name`` (and the ``.tmp`` file the scripts write
    it through, which a planted link would otherwise redirect), then run ``script`` (standard
    library only; ``sys.argv[1]`` is the snapshot's path, then ``args``) with the image's
    isolated ``python3`` to write it."""
    if _END in script:
        raise ValueError("the script must not contain the heredoc's end marker")
    path = snapshot_path(name)
    quoted = " ".join(shlex.quote(a) for a in [path, *args])
    command = (
        f"rm -rf {shlex.quote(path)} {shlex.quote(path + '.tmp')}; mkdir -p {SNAPSHOT_DIR} && "
        f"python3 -I -S - {quoted} <<'{_END}'\n{script.rstrip()}\n{_END}\n"
    )
    return VerifierCollectConfig(command=command, timeout_sec=timeout_sec, user=HOOK_USER)


# Walks each root (never following links below it) and records every entry by lstat; ``paths`` are
# recorded alone. A regular file gets its SHA-256, a link its target and what it resolves to
# (with the SHA-256 of a file it resolves to). ``texts``: files whose whole text is kept.
TREE_SCRIPT = r"""
import hashlib
import json
import os
import stat
import sys

out, roots, paths, texts = sys.argv[1], *(json.loads(a) for a in sys.argv[2:5])


def info(st):
    m = st.st_mode
    kind = (
        "dir" if stat.S_ISDIR(m) else "file" if stat.S_ISREG(m)
        else "link" if stat.S_ISLNK(m) else "other"
    )
    return {
        "kind": kind, "mode": stat.S_IMODE(m), "uid": st.st_uid, "gid": st.st_gid,
        "ino": st.st_ino, "nlink": st.st_nlink, "size": st.st_size, "mtime": st.st_mtime,
    }


def sha256(path):
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def record(path):
    try:
        entry = info(os.lstat(path))
    except OSError:
        return None
    if entry["kind"] == "file":
        entry["sha256"] = sha256(path)
    elif entry["kind"] == "link":
        entry["target"] = os.readlink(path)
        try:
            entry["to"] = info(os.stat(path))
        except OSError:
            entry["to"] = None
        if entry["to"] and entry["to"]["kind"] == "file":
            entry["to"]["sha256"] = sha256(path)
    return entry


entries = {}
for root in roots:
    top = record(root)
    if top is None:
        continue
    entries[root] = top
    if (top.get("to") or top)["kind"] != "dir":  # a root that is a link is walked through
        continue
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(folder, name)
            entries[full] = record(full)
for path in paths:
    found = record(path)
    if found is not None:
        entries[path] = found
kept = {}
for path in texts:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            kept[path] = fh.read()
    except OSError:
        kept[path] = None
with open(out + ".tmp", "w") as fh:
    json.dump({"roots": roots, "entries": entries, "texts": kept}, fh, sort_keys=True)
os.replace(out + ".tmp", out)
"""


def tree_hook(
    name: str,
    roots: list[str],
    paths: list[str] | tuple[str, ...] = (),
    texts: list[str] | tuple[str, ...] = (),
) -> VerifierCollectConfig:
    """A hook that snapshots every entry under ``roots``, each of ``paths`` and the text of
    each of ``texts`` (see :data:`TREE_SCRIPT`) into ``SNAPSHOT_DIR/name``."""
    args = [[r.rstrip("/") or "/" for r in roots], list(paths), list(texts)]
    return python_hook(name, TREE_SCRIPT, [json.dumps(a) for a in args])
