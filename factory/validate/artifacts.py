"""Artifacts: what a separate verifier gets of the agent's container, made safe on the way.

Harbor (``harbor.trial.artifact_handler``) copies every declared artifact out of the agent's
container, re-packs it through a tar extracted with Python's ``data`` filter, and copies that
into the verifier's fresh container at the artifact's original path. This module is the middle
step, the same here: a member whose name or link leaves the artifact is refused, as are device
nodes and FIFOs; setuid, setgid and sticky bits and group/other write bits are cleared;
directories get default modes; ownership is dropped (the fresh container gets it all as root,
as ``docker cp`` does). Directory artifacts honour ``exclude`` (``tar --exclude`` patterns).

Docker-free: the engine's archive comes in as a file, a folder on this machine comes out.
"""

from __future__ import annotations

import fnmatch
import posixpath
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from factory.tasks.config import (
    ARTIFACTS_CONVENTION_DIR,
    ArtifactConfig,
    artifact_collisions,
    effective_artifacts,
)

__all__ = [
    "ARTIFACTS_CONVENTION_DIR",
    "DEFAULT_MAX_ARTIFACT_BYTES",
    "Sanitised",
    "artifact_collisions",
    "effective_artifacts",
    "excluded",
    "placement",
    "sanitise",
]
DEFAULT_MAX_ARTIFACT_BYTES = 256 << 20
"""Most bytes one artifact's archive may take; a larger one is left out (and logged)."""


def excluded(relative: str, patterns: list[str]) -> bool:
    """Whether ``relative`` (a path inside a directory artifact) falls under one of
    ``patterns`` the way ``tar --exclude`` reads them: a pattern may match the path or its
    tail from any ``/`` on, and a folder that matches takes its contents with it."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    for end in range(1, len(parts) + 1):
        for start in range(end):
            candidate = "/".join(parts[start:end])
            if any(fnmatch.fnmatchcase(candidate, p.rstrip("/")) for p in patterns):
                return True
    return False


@dataclass
class Sanitised:
    """One artifact after :func:`sanitise`."""

    path: Path | None
    """The safe copy on this machine (a file or a folder named like the source), or None
    when nothing of it was usable."""
    refused: list[str] = field(default_factory=list)
    """Why members were left out (``name: reason``)."""


def sanitise(archive: BinaryIO, staging: Path, *, exclude: list[str] | None = None) -> Sanitised:
    """Extract the engine's tar of one artifact (its top entry named like the source) into
    ``staging`` under the ``data`` filter, member by member: one refused member (a link to
    ``/etc/shadow``, a FIFO) does not cost the rest. A directory artifact is extracted into
    its own folder, so a link out of that folder is refused even when it stays inside
    ``staging``."""
    staging.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []
    top: str | None = None
    is_dir = False
    with tarfile.open(fileobj=archive, mode="r:") as tar:
        for member in tar:
            name = member.name.lstrip("/")
            head, _, rest = name.partition("/")
            if top is None:
                top = head
                is_dir = member.isdir()
                if not top or top in (".", ".."):
                    return Sanitised(None, [f"{member.name}: not a usable artifact name"])
                if not is_dir:
                    return _extract_file(tar, member, staging, refused)
                (staging / top).mkdir(exist_ok=True)
                continue
            if head != top or not rest:
                refused.append(f"{member.name}: outside the artifact")
                continue
            if exclude and excluded(rest, exclude):
                continue
            member.name = rest
            if member.islnk():  # hard links name their target from the archive's top
                link_head, _, link_rest = member.linkname.lstrip("/").partition("/")
                if link_head != top or not link_rest:
                    refused.append(f"{top}/{rest}: hard link outside the artifact")
                    continue
                member.linkname = link_rest
            try:
                tar.extract(member, staging / top, filter="data")
            except (tarfile.FilterError, OSError) as exc:
                refused.append(f"{top}/{rest}: {exc}")
    if top is None:
        return Sanitised(None, ["empty archive"])
    return Sanitised(staging / top, refused)


def _extract_file(
    tar: tarfile.TarFile, member: tarfile.TarInfo, staging: Path, refused: list[str]
) -> Sanitised:
    try:
        tar.extract(member, staging, filter="data")
    except (tarfile.FilterError, OSError) as exc:
        refused.append(f"{member.name}: {exc}")
        return Sanitised(None, refused)
    path = staging / member.name
    if path.is_symlink():  # a link inside staging but not the artifact itself: never follow
        path.unlink()
        refused.append(f"{member.name}: a link, not a file")
        return Sanitised(None, refused)
    return Sanitised(path, refused)


def placement(artifact: ArtifactConfig) -> tuple[str, str]:
    """(parent folder, name) of where the verifier finds ``artifact``: its source path."""
    parent, name = posixpath.split(artifact.container_path)
    return parent or "/", name
