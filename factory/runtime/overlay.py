"""A container's filesystem changes read straight from its overlay folders (local engine,
overlay2, root): milliseconds where the engine's own diff takes seconds."""

from __future__ import annotations

import os
import stat

_OPAQUE_XATTR = "trusted.overlay.opaque"


def _is_whiteout(info: os.stat_result) -> bool:
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def lower_kind(lowers: list[str], path: str) -> str | None:
    """What the merged lower layers (top-most first) have at the absolute ``path``."""
    rel = path.lstrip("/")
    for lower in lowers:
        try:
            info = os.lstat(os.path.join(lower, rel))
        except OSError:
            continue
        if _is_whiteout(info):
            return None
        return "dir" if stat.S_ISDIR(info.st_mode) else "file"
    return None


def overlay_changes(upper: str, lowers: list[str]):
    """``docker diff`` from an overlay's folders: yields (path, kind, is_dir). A whiteout is a
    deletion; an opaque folder hides the image's content below it (reported as deleted, then
    what is in it as added)."""
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(upper, rel) if rel else upper))
        except OSError:
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            path = "/" + child
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if _is_whiteout(info):
                yield path, 2, None
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            in_image = lower_kind(lowers, path) is not None
            if is_dir and in_image and _opaque(entry.path):
                yield path, 2, True
                yield path, 1, True
            else:
                yield path, 0 if in_image else 1, is_dir
            if is_dir:
                stack.append(child)


def _opaque(folder: str) -> bool:
    try:
        return os.getxattr(folder, _OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False
