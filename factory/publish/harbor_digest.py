"""Harbor's own content digest of a task package (what ``harbor publish`` pins a task by).

Harbor (checked against harbor 0.26.0, ``harbor/publisher/packager.py``) hashes the files it
publishes: ``task.toml``, ``instruction.md``, ``README.md`` and ``trajectory.json`` when present,
and every file under ``environment/``, ``tests/``, ``solution/`` and ``steps/``, minus its
default ignores (``__pycache__/``, ``*.pyc``, ``.DS_Store``, ``*.swp``, ``*.swo``, ``*~``) and
``.harborignore`` files; sorted by relative path, the digest is sha256 over
``"<path>\\0<sha256 of the file>\\n"`` records.

Harbor also applies a task's ``.gitignore`` and the ``.harborignore`` rules under
``tests/``, ``solution/`` and ``steps/``, and follows symbolic links; those cases are not
reproduced here: :func:`harbor_digest` returns None for such a task (and says why), rather
than a digest Harbor would not agree with.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from pathlib import Path

SINGLE_FILES = ("task.toml", "instruction.md", "README.md", "trajectory.json")
TREES = ("environment", "tests", "solution", "steps")
IGNORE_SCOPES = ("tests", "solution", "steps")
HARBORIGNORE = ".harborignore"
_IGNORED_NAMES = ("*.pyc", ".DS_Store", "*.swp", "*.swo", "*~")


class NotReproducible(Exception):
    """The task uses a feature whose effect on Harbor's digest is not reproduced."""


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _ignored(rel: str) -> bool:
    parts = rel.split("/")
    if "__pycache__" in parts[:-1]:
        return True
    return any(fnmatch.fnmatchcase(parts[-1], pattern) for pattern in _IGNORED_NAMES)


def package_files(task_dir: Path) -> list[str]:
    """The relative paths Harbor would publish, sorted; NotReproducible when unsure."""
    if (task_dir / ".gitignore").exists():
        raise NotReproducible("the task has a .gitignore, which Harbor applies")
    found = [name for name in SINGLE_FILES if (task_dir / name).is_file()]
    for tree in TREES:
        top = task_dir / tree
        if top.is_symlink():
            raise NotReproducible(f"{tree}/ is a symbolic link")
        if not top.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            here = Path(dirpath)
            for name in dirnames + filenames:
                path = here / name
                rel = path.relative_to(task_dir).as_posix()
                if path.is_symlink():
                    raise NotReproducible(f"{rel} is a symbolic link")
                if name == HARBORIGNORE:
                    if tree in IGNORE_SCOPES:
                        raise NotReproducible(f"{rel} holds ignore rules Harbor applies")
                    continue
                if name in filenames and path.is_file():
                    found.append(rel)
    return sorted(rel for rel in found if not _ignored(rel))


def harbor_digest(task_dir: Path) -> str:
    """``sha256:<hex>`` as Harbor computes it for ``task_dir`` (NotReproducible if unsure)."""
    outer = hashlib.sha256()
    for rel in package_files(task_dir):
        outer.update(f"{rel}\0{_file_hash(task_dir / rel)}\n".encode())
    return f"sha256:{outer.hexdigest()}"


def try_harbor_digest(task_dir: Path) -> tuple[str | None, str | None]:
    """(digest, None), or (None, why not)."""
    try:
        return harbor_digest(task_dir), None
    except NotReproducible as exc:
        return None, str(exc)
