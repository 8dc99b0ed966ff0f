"""What a task directory may hold: regular files, folders, and symbolic links that stay inside
the task. Checked before factory reads, hashes, copies or uploads anything from it.

* A symbolic link that leads outside the task (``tests/requirements.txt -> /etc/passwd``, an
  absolute link, ``../../secret``) is refused: following it would put a host file into the
  image, the instruction or an export. Links inside the task are kept as links everywhere.
* A FIFO, socket or device node is refused: opening a FIFO blocks forever (hashing, tar and
  upload used to hang on one), and a device node has no business in a task.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from factory.errors import UnsafeTaskFileError
from factory.inputs import special_file_kind

MAX_TASK_ENTRIES = 200_000
"""Files and folders in one task directory (a bound on the walk itself)."""


def link_escapes(link: Path, root: Path) -> bool:
    """Whether the symbolic link ``link`` resolves to a path outside ``root`` (resolved)."""
    target = Path(os.path.realpath(link))
    return not target.is_relative_to(root)


def check_task_tree(root: Path) -> None:
    """Raise :class:`UnsafeTaskFileError` (naming the file) for the first entry of ``root``
    that is a special file or a link leading outside it. ``root`` itself may be a link."""
    real_root = Path(os.path.realpath(root))
    if not real_root.is_dir():
        return
    seen = 0
    for dirpath, dirnames, filenames in os.walk(real_root):
        here = Path(dirpath)
        for name in sorted(dirnames) + sorted(filenames):
            seen += 1
            if seen > MAX_TASK_ENTRIES:
                raise UnsafeTaskFileError(
                    root, f"holds more than {MAX_TASK_ENTRIES} files and folders"
                )
            path = here / name
            shown = root / path.relative_to(real_root)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                if link_escapes(path, real_root):
                    raise UnsafeTaskFileError(
                        shown,
                        f"symbolic link to {os.readlink(path)!r}, outside the task; put the "
                        "file itself there (or create the link in environment/Dockerfile)",
                    )
                continue
            kind = special_file_kind(mode)
            if kind:
                raise UnsafeTaskFileError(
                    shown, f"{kind}; a task may hold only regular files, folders and links"
                )
