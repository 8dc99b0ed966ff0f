"""Snapshots for a separate verifier: file metadata no artifact carries, written to files.

An artifact reaches the separate verifier owned by root, with group/other write and setuid bits
cleared and links leaving it dropped, so tests that check owners, modes, links or paths outside
the artifacts read a snapshot instead: one ``[[verifier.collect]]`` hook (:func:`snapshot_hook`)
runs in the agent's container after the agent (processes frozen, toolchain restored from the
image), deletes :data:`STATE_DIR` and writes each snapshot file afresh, so nothing the agent
planted there survives; :data:`STATE_DIR` travels as an artifact. A test that finds a snapshot
missing fails.

Snapshot formats (one record per line, the path last so it may hold spaces):

- :func:`stat_lines`: ``UID RAWMODE PATH`` (``stat -c '%u %f'``: the numeric owner and
  ``st_mode`` in hex, type bits included, of the path itself, not a link's target), or
  ``- - PATH`` when the path does not exist.
- :func:`tree_lines`: every entry under a folder: ``RAWMODE MTIME PATH`` (``stat -c '%f %Y
  %n'``: ``st_mode`` in hex, the mtime in whole seconds, the full path).

The commands are those busybox and GNU coreutils/findutils share (``stat -c``, ``find -exec
... {} +``, no ``find -printf``): factory runs the hooks under its harness busybox, Harbor with
the image's shell and tools.
- :func:`present_lines`: the paths of a list that exist (or are dangling links).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

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
