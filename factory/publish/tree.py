"""A task directory as a list of :class:`FileEntry` and back, and safe copies.

Reading skips the same cache and VCS folders as :func:`factory.tasks.hashing.hash_tree`, so a
rebuilt directory hashes to the value the export recorded. Writing refuses entries that would
land outside the destination: absolute paths, '..', paths through a symbolic link, and links
whose target leads outside the task.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path, PurePosixPath

from factory.publish.errors import UnsafePathError
from factory.publish.models import FileEntry
from factory.tasks.hashing import _SKIP_DIRS

_PERM = 0o777


def read_tree(root: Path) -> list[FileEntry]:
    """Every directory, file and symbolic link under ``root`` (sorted; ``root`` excluded)."""
    entries: list[FileEntry] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        names = sorted(filenames + [d for d in dirnames if (here / d).is_symlink()])
        for name in dirnames:
            path = here / name
            if not path.is_symlink():
                entries.append(
                    FileEntry(path=_rel(path, root), kind="dir", mode=path.stat().st_mode & _PERM)
                )
        for name in names:
            path = here / name
            rel = _rel(path, root)
            if path.is_symlink():
                entries.append(FileEntry(path=rel, kind="symlink", link_target=os.readlink(path)))
            elif path.is_file():
                entries.append(
                    FileEntry(path=rel, content=path.read_bytes(), mode=path.stat().st_mode & _PERM)
                )
    return sorted(entries, key=lambda e: e.path)


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def safe_relpath(path: str, where: Path | str, field: str | None = None) -> PurePosixPath:
    """``path`` as a relative POSIX path that stays inside its folder, or UnsafePathError."""
    posix = PurePosixPath(path.replace("\\", "/"))
    if not path or posix.is_absolute() or ".." in posix.parts or posix.parts[:1] == ("",):
        raise UnsafePathError(where, f"'{path}' leaves the task directory", field)
    if any(part in ("", ".") for part in posix.parts) or str(posix) == ".":
        raise UnsafePathError(where, f"'{path}' is not a plain relative path", field)
    return posix


def link_stays_inside(link: PurePosixPath, target: str) -> bool:
    """Whether a link at ``link`` (relative to the task root) with ``target`` resolves inside
    the task, judged on the text alone (an absolute target never does)."""
    if target.startswith("/") or "\\" in target:
        return False
    depth = len(link.parts) - 1
    for part in PurePosixPath(target).parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return False
        elif part != ".":
            depth += 1
    return True


def write_tree(entries: list[FileEntry], dest: Path, *, where: Path | str) -> None:
    """Create ``dest`` (empty or missing) holding exactly ``entries``.

    ``where`` names the file the entries came from, for errors. Directories come first, then
    files, then links; directory modes are set last (deepest first) so a read-only directory
    does not block its own contents.
    """
    links: set[PurePosixPath] = set()
    seen: set[PurePosixPath] = set()
    for index, entry in enumerate(entries):
        rel = safe_relpath(entry.path, where, f"files[{index}].path")
        if rel in seen:
            raise UnsafePathError(where, f"'{entry.path}' appears twice", f"files[{index}].path")
        seen.add(rel)
        if entry.kind == "symlink":
            if not entry.link_target:
                raise UnsafePathError(
                    where, f"link '{entry.path}' has no target", f"files[{index}].link_target"
                )
            links.add(rel)
    for index, entry in enumerate(entries):
        rel = PurePosixPath(entry.path)
        if any(parent in links for parent in rel.parents):
            raise UnsafePathError(
                where, f"'{entry.path}' lies under a symbolic link", f"files[{index}].path"
            )
    for index, entry in enumerate(entries):
        rel = PurePosixPath(entry.path)
        if entry.kind == "symlink" and not link_stays_inside(rel, entry.link_target or ""):
            raise UnsafePathError(
                where,
                f"link '{entry.path}' points to '{entry.link_target}', outside the task",
                f"files[{index}].link_target",
            )
    dest.mkdir(parents=True, exist_ok=True)
    ordered = sorted(entries, key=lambda e: ({"dir": 0, "file": 1, "symlink": 2}[e.kind], e.path))
    for entry in ordered:
        target = dest / entry.path
        if entry.kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry.kind == "file":
            target.write_bytes(entry.content)
            os.chmod(target, entry.mode & _PERM)
        else:
            os.symlink(entry.link_target or "", target)
    for entry in sorted(
        (e for e in entries if e.kind == "dir"), key=lambda e: e.path.count("/"), reverse=True
    ):
        os.chmod(dest / entry.path, entry.mode & _PERM)


def copy_task_dir(src: Path, dest: Path) -> None:
    """Copy a task directory: links stay links, modes are kept, cache folders are left out."""
    shutil.copytree(
        src,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns(*_SKIP_DIRS),
        copy_function=_copy_file,
    )


def _copy_file(src: str, dst: str) -> None:
    shutil.copyfile(src, dst, follow_symlinks=False)
    if not os.path.islink(dst):
        os.chmod(dst, stat.S_IMODE(os.lstat(src).st_mode) & _PERM)


def tree_stats(root: Path) -> tuple[int, int]:
    """(files, bytes) of the regular files under ``root`` (contents are not read)."""
    count = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        for name in filenames:
            path = Path(dirpath) / name
            if not path.is_symlink() and path.is_file():
                count += 1
                size += path.stat().st_size
    return count, size
