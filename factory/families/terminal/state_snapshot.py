"""Collect hooks that snapshot state no artifact carries, for families whose tests run in
Harbor's separate verifier (:attr:`factory.families.base.Draft.separate_verifier`).

An artifact reaches the separate verifier owned by root, with group/other write and setuid bits
cleared and links leaving it dropped; running processes do not travel at all. So tests that
check owners, modes, inodes, links, paths outside the artifacts or processes read a snapshot
instead, written by a ``[[verifier.collect]]`` hook in the agent's container after the agent's
processes are frozen and the toolchain is restored from the image. Every hook first removes
whatever is at its snapshot's path (a file, a folder, a link the agent planted), so a snapshot
the tests read was written by the hook; a test that finds it missing fails.

Two kinds, for two needs:

* **Shell lines** (:func:`snapshot_hook` with :func:`stat_lines`, :func:`tree_lines`,
  :func:`present_lines`): one hook empties :data:`STATE_DIR` and writes each snapshot file from
  ``stat``/``find`` output, with only the commands busybox and GNU coreutils/findutils share
  (``stat -c``, ``find -exec ... {} +``, no ``find -printf``): factory runs the hooks under its
  harness busybox, Harbor with the image's shell and tools. Formats, one record per line with
  the path last so it may hold spaces: :func:`stat_lines` ``UID RAWMODE PATH`` (``st_mode`` in
  hex, type bits included, of the path itself) or ``- - PATH`` when missing;
  :func:`tree_lines` ``RAWMODE MTIME PATH`` of every entry under a folder;
  :func:`present_lines` the paths of a list that exist (or are dangling links).
* **JSON by the image's Python** (:func:`python_hook`, :func:`tree_hook`): the image's
  ``python3`` runs isolated (``-I -S``: no environment variables, no user or site packages, no
  ``.pth`` files) a script that lives in the hook itself (in task.toml, never in the agent's
  container) and writes ``SNAPSHOT_DIR/<name>`` (each one a file artifact of its own): file
  hashes, inode numbers, link targets, whole texts, processes and their answers to signals.
  The tests resolve user and group names in the fresh container, against the image's account
  database.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping

from factory.tasks.config import VerifierCollectConfig

STATE_DIR = "/var/lib/factory-verifier/state"
"""Where the hook writes the snapshots (an artifact of the task)."""


def _quoted(paths: list[str]) -> str:
    return " ".join(shlex.quote(p) for p in paths)


def stat_lines(paths: list[str]) -> str:
    """Shell: ``UID RAWMODE PATH`` per path (``- - PATH`` when missing)."""
    return (
        f"for f in {_quoted(paths)}; do "
        'stat -c "%u %f %n" -- "$f" 2>/dev/null || printf -- "- - %s\\n" "$f"; done'
    )


def tree_lines(root: str) -> str:
    """Shell: ``RAWMODE MTIME PATH`` of every entry under ``root`` (not following links)."""
    return f"find {shlex.quote(root)} -mindepth 1 -exec stat -c '%f %Y %n' {{}} +"


def present_lines(paths: list[str]) -> str:
    """Shell: those of ``paths`` that exist (a dangling link counts), one per line."""
    return (
        f"for f in {_quoted(paths)}; do "
        'if [ -e "$f" ] || [ -L "$f" ]; then printf "%s\\n" "$f"; fi; done'
    )


def snapshot_hook(snapshots: Mapping[str, str]) -> str:
    """One collect hook: :data:`STATE_DIR` emptied, then ``STATE_DIR/NAME`` written from the
    stdout of each shell command (name -> command)."""
    if not snapshots:
        raise ValueError("no snapshots")
    writes = " ".join(
        f"{{ {command}; }} > {shlex.quote(STATE_DIR + '/' + name)};"
        for name, command in snapshots.items()
    )
    state = shlex.quote(STATE_DIR)
    return f"rm -rf {state} && mkdir -p {state} && {{ {writes} }}"


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
