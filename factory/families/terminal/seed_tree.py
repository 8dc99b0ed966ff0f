"""Trees of files for terminal tasks, shipped as one deterministic tarball (``seed.tar.gz``) that
the Dockerfile unpacks with GNU tar: owners, modes, modification times, symbolic and hard links
are exactly what the draft decided, byte for byte the same for the same seed. Also archives
(tar, zip, compressed) built the same way, and dates as the tasks show them."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import posixpath
import tarfile
import time
import zipfile
from dataclasses import dataclass

# --- shared helpers ------------------------------------------------------------------------

DAY = 86400
EPOCH_2022 = 1640995200  # 2022-01-01 00:00:00 UTC


@dataclass
class Entry:
    """One member of a generated archive or seed tree."""

    path: str
    kind: str = "file"
    """file, dir, symlink or hardlink."""
    data: bytes = b""
    mode: int = 0o644
    mtime: int = EPOCH_2022
    user: str = "root"
    uid: int = 0
    target: str = ""
    """Symlink target, or the member a hard link points to."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def utc_text(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def day_text(epoch: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


def tar_bytes(entries: list[Entry]) -> bytes:
    """An uncompressed GNU tar of ``entries`` (deterministic)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, encoding="utf-8") as tf:
        for e in entries:
            info = tarfile.TarInfo(e.path)
            info.mode = e.mode
            info.mtime = e.mtime
            info.uid = info.gid = e.uid
            info.uname = info.gname = e.user
            if e.kind == "file":
                info.size = len(e.data)
                tf.addfile(info, io.BytesIO(e.data))
                continue
            if e.kind == "dir":
                info.type = tarfile.DIRTYPE
            elif e.kind == "symlink":
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, e.target, 0o777
            elif e.kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, e.target
            else:
                raise ValueError(e.kind)
            tf.addfile(info)
    return buf.getvalue()


def compressed(raw: bytes, kind: str) -> bytes:
    if kind in ("gz", "tgz"):
        return gzip.compress(raw, compresslevel=9, mtime=0)
    if kind == "xz":
        return lzma.compress(raw)
    if kind == "bz2":
        return bz2.compress(raw, 9)
    return raw


def zip_bytes(entries: list[Entry]) -> bytes:
    """A zip of the file entries, Unix modes and (even-second) mtimes recorded."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for e in entries:
            if e.kind != "file":
                continue
            info = zipfile.ZipInfo(e.path, date_time=time.gmtime(e.mtime)[:6])
            info.create_system = 3
            info.external_attr = (0o100000 | e.mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, e.data)
    return buf.getvalue()


def archive_bytes(entries: list[Entry], fmt: str) -> bytes:
    if fmt == "zip":
        return zip_bytes(entries)
    return compressed(tar_bytes(entries), fmt.rsplit(".", 1)[-1])


def seed_tarball(entries: list[Entry]) -> bytes:
    """The tree as a gzipped tarball rooted at / (member names without the leading slash)."""
    return compressed(tar_bytes([rooted(e) for e in entries]), "gz")


def rooted(e: Entry) -> Entry:
    target = e.target.lstrip("/") if e.kind == "hardlink" else e.target
    return Entry(e.path.lstrip("/"), e.kind, e.data, e.mode, e.mtime, e.user, e.uid, target)


def dirs_of(paths: list[str], root: str) -> list[str]:
    """Every directory strictly between ``root`` and the given paths (root included)."""
    out = {root}
    for p in paths:
        d = posixpath.dirname(p)
        while d.startswith(root) and d not in out:
            out.add(d)
            d = posixpath.dirname(d)
    return sorted(out)


def words_text(rng, lines: int, words: list[str]) -> str:
    out = []
    for _ in range(lines):
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))))
    return "\n".join(out) + "\n"


def inode_data(nodes: dict[str, Entry], rel: str) -> str:
    """The path holding the data of ``rel`` (itself, or the member a hard link points to)."""
    e = nodes[rel]
    return e.target if e.kind == "hardlink" else rel


def dirs_rel(nodes: dict[str, Entry], extra: list[str]) -> list[str]:
    out: set[str] = set(extra)
    for rel in [*nodes, *extra]:
        parts = rel.split("/")[:-1] if rel not in extra else rel.split("/")
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return sorted(out)
