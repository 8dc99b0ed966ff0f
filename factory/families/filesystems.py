"""Filesystem chores: archives, disk clean-up, data recovery and file search.

Every tree the agent works on is shipped as one deterministic tarball (``seed.tar.gz``) that
the Dockerfile unpacks with GNU tar, so owners, modes, modification times, symbolic links and
hard links are exactly what the draft decided, byte for byte the same for the same seed.
"""

from __future__ import annotations

import bz2
import difflib
import gzip
import hashlib
import io
import json
import lzma
import posixpath
import re
import tarfile
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from factory.families.base import Draft, Family, register
from factory.vocabulary import Difficulty

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


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _utc(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def _day(epoch: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


def _tar(entries: list[Entry]) -> bytes:
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


def _compress(raw: bytes, kind: str) -> bytes:
    if kind in ("gz", "tgz"):
        return gzip.compress(raw, compresslevel=9, mtime=0)
    if kind == "xz":
        return lzma.compress(raw)
    if kind == "bz2":
        return bz2.compress(raw, 9)
    return raw


def _zip(entries: list[Entry]) -> bytes:
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


def _archive(entries: list[Entry], fmt: str) -> bytes:
    if fmt == "zip":
        return _zip(entries)
    return _compress(_tar(entries), fmt.rsplit(".", 1)[-1])


def _seed(entries: list[Entry]) -> bytes:
    """The tree as a gzipped tarball rooted at / (member names without the leading slash)."""
    return _compress(_tar([_rooted(e) for e in entries]), "gz")


def _rooted(e: Entry) -> Entry:
    target = e.target.lstrip("/") if e.kind == "hardlink" else e.target
    return Entry(e.path.lstrip("/"), e.kind, e.data, e.mode, e.mtime, e.user, e.uid, target)


def _dirs_of(paths: list[str], root: str) -> list[str]:
    """Every directory strictly between ``root`` and the given paths (root included)."""
    out = {root}
    for p in paths:
        d = posixpath.dirname(p)
        while d.startswith(root) and d not in out:
            out.add(d)
            d = posixpath.dirname(d)
    return sorted(out)


def _wordlist(text: str) -> list[str]:
    return text.split()


def _words_text(rng, lines: int, words: list[str]) -> str:
    out = []
    for _ in range(lines):
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))))
    return "\n".join(out) + "\n"


WORDS = _wordlist(
    "alpha bravo cedar delta ember frost gamma harbor island jasper kernel lotus maple "
    "nectar orbit pixel quill river signal timber ultra velvet willow yonder zenith amber "
    "beacon copper dune echo falcon garnet hollow indigo jungle koala lagoon meadow nova "
    "opal prairie quartz rapid summit tango umber vertex walnut xenon yarrow zircon"
)
PROJECTS = [
    "aurora",
    "basalt",
    "cinder",
    "deltaops",
    "ember",
    "fjord",
    "granite",
    "helix",
    "ionic",
    "juniper",
    "kestrel",
    "lumen",
    "magpie",
    "nimbus",
    "onyx",
    "prism",
    "quartz",
    "raven",
    "sable",
    "tundra",
    "umbra",
    "vortex",
    "willow",
    "zephyr",
]
USERS = ["alice", "bob", "carmen", "dmitri", "erin", "farid", "grace", "hiro", "ines", "jonas"]


# --- archives ------------------------------------------------------------------------------

TOPS = [
    "config",
    "data",
    "docs",
    "reports",
    "scripts",
    "assets",
    "logs",
    "exports",
    "templates",
    "migrations",
    "fixtures",
    "metrics",
    "schemas",
    "notebooks",
]
SUBS = [
    "2022",
    "2023",
    "2024",
    "q1",
    "q2",
    "q3",
    "q4",
    "eu",
    "us",
    "apac",
    "daily",
    "weekly",
    "raw",
    "clean",
    "v1",
    "v2",
    "staging",
    "prod",
    "shared",
    "team",
]
FWORDS = [
    "summary",
    "orders",
    "users",
    "billing",
    "inventory",
    "usage",
    "errors",
    "audit",
    "schema",
    "routes",
    "settings",
    "backlog",
    "roadmap",
    "invoices",
    "payroll",
    "traffic",
    "latency",
    "signups",
    "churn",
    "forecast",
    "budget",
    "alerts",
    "contacts",
    "vendors",
    "shipments",
    "tickets",
]
EXTS = ["csv", "json", "yaml", "txt", "md", "sql", "xml", "ini", "tsv", "html"]
VENDOR_DIRS = ["vendor", "third_party", "bundles", "deps", "packages"]
LIBS = ["zlibng", "tinyxml", "yamlcpp", "fmtlib", "cjson", "lz4", "miniz", "inih", "utf8proc"]
LANDINGS = ["/etc/cron.d", "/usr/local/bin", "/root", "/etc/profile.d", "/var/spool/cron"]
SRC_EXCLUDE_SUFFIXES = ["~", ".log", ".tmp", ".swp", ".bak", ".orig"]


@register
class Archives(Family):
    """Two kinds of archive chores, picked by the seed.

    extract: pull selected members (top-level directory + extension rules) of a tar/zip into
    a target directory keeping their paths, past near-miss decoys. Medium adds a nested archive
    to unpack in place; hard adds members with ``..`` names that must not escape, and
    permission bits and mtimes to preserve.

    create: package a source tree as a release tarball under a top-level directory, excluding
    VCS/build/junk (one exclusion anchored at the top only). Medium adds symlinks, an empty
    directory and names with spaces; hard asks for a reproducible tarball (uid/gid 0, a fixed
    mtime, name-ordered members)."""

    name = "archives"
    title = "Extract selected members from an archive, or build a release tarball, to spec"
    category = "archives"

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        if rng.random() < 0.5:
            return self._extract(rng, difficulty)
        return self._create(rng, difficulty)

    # extract ------------------------------------------------------------------------------

    def _extract(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        proj = rng.choice(PROJECTS)
        fmt = rng.choice(
            ["tar.gz", "zip"] if level == "easy" else ["tar.gz", "tgz", "tar.xz", "tar.bz2", "zip"]
        )
        stamp = EPOCH_2022 + rng.randint(0, 900) * DAY
        stem = f"{proj}-{rng.choice(['export', 'snapshot', 'bundle', 'dump', 'handover'])}-{_day(stamp)}"
        archive = f"{rng.choice(['/srv/incoming', '/var/tmp/uploads', '/data/inbox', '/opt/drop'])}/{stem}.{fmt}"
        target = rng.choice(
            [
                f"/opt/{proj}/restore",
                f"/srv/{proj}/extracted",
                f"/var/lib/{proj}/import",
                f"/data/{proj}/selected",
                f"/home/{rng.choice(USERS)}/{proj}-picked",
            ]
        )
        tops = rng.sample(TOPS, {"easy": 4, "medium": 5, "hard": 6}[level])
        n_rules = 1 if level == "easy" else 2
        rules = [[d, e] for d, e in zip(tops[:n_rules], rng.sample(EXTS, n_rules), strict=True)]
        members: dict[str, Entry] = {}
        modes = [0o644, 0o640, 0o600, 0o755, 0o664, 0o750] if hard else [0o644]

        def fname(ext: str) -> str:
            word = rng.choice(FWORDS)
            tail = rng.choice(["", f"-{rng.randint(1, 99)}", f"_{rng.choice(SUBS)}", "-final"])
            return f"{word}{tail}.{ext}"

        def add(path: str) -> None:
            if path in members or any(
                p == path or p.startswith(path + "/") or path.startswith(p + "/") for p in members
            ):
                return
            body = f"# {proj}: {path}\n" + _words_text(rng, rng.randint(2, 30), WORDS)
            members[path] = Entry(
                path,
                data=body.encode(),
                mode=rng.choice(modes),
                mtime=stamp - rng.randint(1, 400) * DAY - 2 * rng.randint(0, 40000),
            )

        def subdir(depth: int) -> str:
            return "".join(s + "/" for s in rng.sample(SUBS, depth))

        for _ in range({"easy": 18, "medium": 26, "hard": 34}[level]):
            add(
                f"{rng.choice(tops)}/{subdir(rng.choice([0, 0, 1, 1, 2]))}{fname(rng.choice(EXTS))}"
            )
        for d, ext in rules:
            for depth in [0, 1] + [rng.choice([0, 1, 2]) for _ in range(rng.randint(1, 3))]:
                add(f"{d}/{subdir(depth)}{fname(ext)}")
            other = rng.choice([t for t in tops if t != d])
            add(
                f"{d}/{subdir(rng.choice([0, 1]))}{fname(ext)}.{rng.choice(['bak', 'orig', 'old'])}"
            )
            add(f"{d}.{rng.choice(['old', 'prev', 'orig'])}/{fname(ext)}")
            add(f"{other}/{d}/{fname(ext)}")
            add(f"{d}/{subdir(rng.choice([0, 1]))}{fname(ext.upper())}")

        nested = None
        nested_dest = None
        nested_fmt = None
        nested_entries: list[Entry] = []
        if level != "easy":
            vendor = rng.choice([v for v in VENDOR_DIRS if v not in tops])
            lib = rng.choice(LIBS)
            nested_fmt = rng.choice(["tar.gz", "zip"])
            nested = f"{vendor}/{lib}-{rng.randint(1, 4)}.{rng.randint(0, 12)}.{nested_fmt}"
            nested_dest = f"{vendor}/{lib}"
            inner = ["README.md", "LICENSE", f"include/{lib}.h"]
            inner += [f"src/{w}.c" for w in rng.sample(WORDS, rng.randint(2, 4))]
            inner += [f"cmake/{rng.choice(WORDS)}.cmake"]
            for rel in inner:
                body = f"/* {lib}: {rel} */\n" + _words_text(rng, rng.randint(2, 12), WORDS)
                nested_entries.append(
                    Entry(
                        rel,
                        data=body.encode(),
                        mode=rng.choice(modes),
                        mtime=stamp - rng.randint(500, 900) * DAY - 2 * rng.randint(0, 40000),
                    )
                )

        landings: list[str] = []
        unsafe: list[Entry] = []
        depth = len(target.strip("/").split("/"))
        if hard:
            d, ext = rules[0]
            landing = f"{rng.choice(LANDINGS)}/{rng.choice(FWORDS)}-{rng.randint(10, 99)}.{ext}"
            name = f"{d}/" + "../" * (depth + 1) + landing.lstrip("/")
            assert posixpath.normpath(posixpath.join(target, name)) == landing
            landings.append(landing)
            unsafe.append(Entry(name, data=b"#!/bin/sh\necho pwned\n", mode=0o755, mtime=stamp))
            if nested:
                land2 = f"{rng.choice(LANDINGS)}/{rng.choice(WORDS)}-{rng.randint(10, 99)}.sh"
                ndepth = depth + len(nested_dest.split("/"))
                name2 = "../" * ndepth + land2.lstrip("/")
                assert posixpath.normpath(posixpath.join(target, nested_dest, name2)) == land2
                landings.append(land2)
                pos = rng.randint(1, len(nested_entries) - 1)
                nested_entries.insert(
                    pos, Entry(name2, data=b"#!/bin/sh\necho pwned\n", mode=0o755, mtime=stamp)
                )

        order = sorted(members)
        rng.shuffle(order)
        entries = [members[p] for p in order]
        if nested:
            blob = _archive(nested_entries, nested_fmt)
            entries.insert(
                rng.randint(0, len(entries)),
                Entry(nested, data=blob, mtime=stamp - 3 * DAY),
            )
        for e in unsafe:
            entries.insert(rng.randint(1, len(entries) - 1), e)
        if fmt != "zip":
            dirs = sorted({posixpath.dirname(e.path) for e in entries if ".." not in e.path} - {""})
            dirs = sorted(
                {"/".join(d.split("/")[: i + 1]) for d in dirs for i in range(len(d.split("/")))}
            )
            entries = [Entry(d, "dir", mode=0o755, mtime=stamp) for d in dirs] + entries
        blob = _archive(entries, fmt)

        expected = {}
        for p, e in members.items():
            if any(p.startswith(d + "/") and p.endswith("." + x) for d, x in rules):
                expected[p] = [_sha(e.data), oct(e.mode), e.mtime]
        for e in nested_entries:
            if ".." not in e.path:
                expected[f"{nested_dest}/{e.path}"] = [_sha(e.data), oct(e.mode), e.mtime]
        return Draft(
            context={
                "mode": "extract",
                "proj": proj,
                "archive": archive,
                "archive_name": posixpath.basename(archive),
                "archive_sha": _sha(blob),
                "fmt": fmt,
                "target": target,
                "rules": rules,
                "nested": nested,
                "nested_dest": nested_dest,
                "nested_fmt": nested_fmt,
                "preserve": hard,
                "landings": landings,
                "expected": dict(sorted(expected.items())),
                "workdir": posixpath.dirname(archive),
            },
            files={f"environment/{posixpath.basename(archive)}": blob},
            outputs=[target + "/"],
            tags=["tar", "zip", "extract"] + (["path-traversal"] if hard else []),
        )

    # create -------------------------------------------------------------------------------

    def _create(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        proj = rng.choice(PROJECTS)
        pkg = proj
        user = rng.choice(USERS)
        ver = f"{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        src = rng.choice([f"/home/{user}/src/{proj}", f"/home/{user}/{proj}", f"/srv/build/{proj}"])
        comp = rng.choice(["gz", "xz", "bz2"])
        out_dir = rng.choice(["/srv/releases", "/var/www/dist", "/opt/artifacts", "/srv/dist"])
        prefix = f"{proj}-{ver}"
        out = f"{out_dir}/{prefix}.tar.{comp}"
        now = EPOCH_2022 + rng.randint(200, 900) * DAY
        clamp = now - rng.randint(1, 30) * DAY + rng.randint(0, 86399) if hard else None

        files: dict[str, tuple[bytes, int]] = {}

        def text(rel: str, n: int) -> bytes:
            return (f"# {proj}/{rel}\n" + _words_text(rng, n, WORDS)).encode()

        mods = rng.sample(WORDS, rng.randint(3, 5))
        files["README.md"] = (text("README.md", 6), 0o644)
        files["LICENSE"] = (text("LICENSE", 4), 0o644)
        files[rng.choice(["pyproject.toml", "setup.cfg", "Makefile"])] = (text("build", 5), 0o644)
        files[f"src/{pkg}/__init__.py"] = (f'__version__ = "{ver}"\n'.encode(), 0o644)
        for m in mods:
            files[f"src/{pkg}/{m}.py"] = (text(m, rng.randint(4, 20)), 0o644)
            files[f"tests/test_{m}.py"] = (text(f"test_{m}", rng.randint(3, 8)), 0o644)
        files[f"src/{pkg}/build/__init__.py"] = (text("build/__init__", 2), 0o644)
        files[f"src/{pkg}/build/{rng.choice(WORDS)}.py"] = (text("build", 6), 0o644)
        for w in rng.sample(FWORDS, rng.randint(2, 3)):
            files[f"docs/{w}.md"] = (text(w, rng.randint(3, 9)), 0o644)
        for w in rng.sample(["deploy", "lint", "bootstrap", "release", "migrate"], 2):
            files[f"scripts/{w}.sh"] = (b"#!/bin/sh\nset -e\necho " + w.encode() + b"\n", 0o755)
        envs = rng.sample(["prod", "staging", "dev", "test"], 2)
        for env in envs:
            files[f"config/{env}.yaml"] = (text(env, 4), 0o644)
        if hard:
            files["config/secrets.yaml"] = (text("secrets", 3), 0o600)
        if level != "easy":
            files[f"docs/{rng.choice(['Release Notes', 'User Guide', 'How To'])}.md"] = (
                text("spaces", 4),
                0o644,
            )

        top_dirs = [".git", "build"] + (["dist"] if level != "easy" else [])
        any_dirs = ["__pycache__"] + (["node_modules"] if level != "easy" else [])
        suffixes = [".pyc"] + rng.sample(SRC_EXCLUDE_SUFFIXES, 2 if level == "easy" else 3)
        names = [".DS_Store"] if level != "easy" else []
        junk: dict[str, tuple[bytes, int]] = {
            ".git/HEAD": (b"ref: refs/heads/main\n", 0o644),
            ".git/config": (b"[core]\n\trepositoryformatversion = 0\n", 0o644),
            f".git/objects/{rng.randint(10, 99)}/{_sha(proj.encode())[:38]}": (
                rng.randbytes(200),
                0o444,
            ),
            f"build/lib/{pkg}/{mods[0]}.py": (text("built", 3), 0o644),
            f"build/{rng.choice(['bdist', 'temp'])}/{rng.choice(WORDS)}.o": (
                rng.randbytes(300),
                0o644,
            ),
            f"src/{pkg}/__pycache__/{mods[0]}.cpython-311.pyc": (rng.randbytes(150), 0o644),
            f"tests/__pycache__/test_{mods[1]}.cpython-311.pyc": (rng.randbytes(150), 0o644),
            f"src/{pkg}/{mods[-1]}.pyc": (rng.randbytes(120), 0o644),
        }
        for suffix in suffixes[1:]:
            base = rng.choice([r for r in files if "/" in r and not r.startswith("scripts")])
            junk[
                f"{base}{suffix}"
                if suffix in ("~", ".orig", ".bak")
                else f"{posixpath.dirname(base)}/{rng.choice(WORDS)}{suffix}"
            ] = (
                text("junk", 2),
                0o644,
            )
        if level != "easy":
            junk[f"dist/{prefix}.tar.gz"] = (rng.randbytes(400), 0o644)
            junk[f"docs/node_modules/{rng.choice(WORDS)}/index.js"] = (text("js", 3), 0o644)
            junk[".DS_Store"] = (rng.randbytes(64), 0o644)
            junk[f"src/{pkg}/.DS_Store"] = (rng.randbytes(64), 0o644)
        symlinks = {}
        empty_dirs = []
        if level != "easy":
            symlinks["config/current.yaml"] = f"{envs[0]}.yaml"
            empty_dirs.append(f"data/{rng.choice(['uploads', 'cache', 'spool'])}")

        uid = 1500 + rng.randint(0, 400)
        entries: list[Entry] = []
        all_paths = [f"{src}/{r}" for r in [*files, *junk, *symlinks]] + [
            f"{src}/{d}/x" for d in empty_dirs
        ]
        for d in _dirs_of(all_paths, src):
            entries.append(
                Entry(
                    d, "dir", mode=0o755, mtime=now - rng.randint(0, 50) * DAY, user=user, uid=uid
                )
            )
        for rel, (data, mode) in sorted({**files, **junk}.items()):
            entries.append(
                Entry(
                    f"{src}/{rel}",
                    data=data,
                    mode=mode,
                    mtime=now - rng.randint(1, 300) * DAY - rng.randint(0, 86399),
                    user=user,
                    uid=uid,
                )
            )
        for rel, tgt in symlinks.items():
            entries.append(
                Entry(f"{src}/{rel}", "symlink", target=tgt, mtime=now, user=user, uid=uid)
            )

        excluded_dirs = sorted(
            {d for d in top_dirs}
            | {
                "/".join(r.split("/")[: i + 1])
                for r in junk
                for i, part in enumerate(r.split("/")[:-1])
                if part in any_dirs
            }
        )
        expected = {rel: _sha(data) for rel, (data, _) in files.items()}
        modes = {rel: oct(mode) for rel, (_, mode) in files.items()}
        keep_dirs = sorted(
            {posixpath.dirname(r) for r in [*files, *symlinks]} - {""} | set(empty_dirs)
        )
        return Draft(
            context={
                "mode": "create",
                "proj": proj,
                "user": user,
                "uid": uid,
                "src": src,
                "out": out,
                "comp": comp,
                "comp_name": {"gz": "gzip", "xz": "xz", "bz2": "bzip2"}[comp],
                "prefix": prefix,
                "ver": ver,
                "top_dirs": top_dirs,
                "any_dirs": any_dirs,
                "suffixes": suffixes,
                "names": names,
                "symlinks": symlinks,
                "empty_dirs": empty_dirs,
                "clamp": clamp,
                "clamp_utc": _utc(clamp) if clamp else None,
                "expected": dict(sorted(expected.items())),
                "modes": dict(sorted(modes.items())),
                "excluded_dirs": excluded_dirs,
                "keep_dirs": keep_dirs,
                "workdir": src,
            },
            files={"environment/seed.tar.gz": _seed(entries)},
            outputs=[out],
            tags=["tar", "compression", "create"] + (["reproducible-build"] if hard else []),
        )


# --- disk-cleanup --------------------------------------------------------------------------

CLEAN_APPS = [
    "ledgerd",
    "mediahub",
    "tilestore",
    "pipeline",
    "metricsd",
    "gatekeeper",
    "searchd",
    "mailrelay",
    "reportgen",
    "imgproxy",
    "notifier",
    "scheduler",
]
SERVICES = ["api", "worker", "ingest", "auth", "web", "cron", "mailer", "gateway", "billing"]
CORE_LOOKALIKES = [
    "data/core.db",
    "data/core.sqlite",
    "etc/core.yaml",
    "scripts/core-sync.sh",
    "docs/core.md",
    "share/corefonts.tar",
    "data/core.1.json",
]
EXPORT_KINDS = ["sales", "usage", "audit", "invoices", "traffic", "payouts"]
UPLOAD_DIRS = ["avatars", "docs", "inbox", "scans", "attachments", "imports"]


def _blob(rng, size: int) -> bytes:
    """``size`` bytes, compressible but unique to this call."""
    chunk = rng.randbytes(64) + b"\n" + " ".join(rng.sample(WORDS, 12)).encode() + b"\n"
    return (chunk * (size // len(chunk) + 1))[:size]


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.search(r"(\d+)\.(\d+)\.(\d+)$", name).groups())


@register
class DiskCleanup(Family):
    """A service tree over its disk budget: old releases, core dumps, rotated logs and cache
    to delete under keep-list protection. Versions cross 9 -> 10 so name order lies, and
    `core.*` look-alikes punish greedy globs. Medium adds an mtime cut-off protection and a
    rolled-back `current` release; hard adds hard links shared between releases, deduplication
    of uploads by hard links, a cache whose directory structure must survive, and a
    budget-driven last step (delete oldest exports just until under budget)."""

    name = "disk-cleanup"
    title = "Free disk space under a budget while honouring protection rules"
    category = "system-administration"

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        app = rng.choice(CLEAN_APPS)
        root = f"{rng.choice(['/srv', '/var/lib', '/opt'])}/{app}"
        keep_list = rng.choice(
            [f"/etc/{app}/cleanup.keep", f"/etc/{app}/keep.list", f"/root/{app}-keep.txt"]
        )
        now = EPOCH_2022 + rng.randint(400, 1000) * DAY
        cutoff = now - rng.randint(6, 20) * DAY - rng.randint(0, 86399) if level != "easy" else None
        nodes: dict[str, Entry] = {}  # rel path -> entry (path relative to root)
        inode: dict[str, str] = {}  # rel path -> canonical rel path of its inode

        def add(rel: str, data: bytes, mtime: int, mode: int = 0o644) -> None:
            nodes[rel] = Entry(rel, data=data, mtime=mtime, mode=mode)
            inode[rel] = rel

        def link(rel: str, canon: str) -> None:
            nodes[rel] = Entry(rel, "hardlink", target=canon, mtime=nodes[canon].mtime)
            inode[rel] = canon

        # releases
        n_rel = {"easy": 5, "medium": 6, "hard": 8}[level]
        keep_n = {"easy": 2, "medium": 2, "hard": 3}[level]
        while True:
            minors = sorted(rng.sample(range(5, 16), n_rel))
            if minors[0] < 10 <= minors[-1]:
                break
        major = rng.randint(1, 6)
        style = rng.choice(["{v}", "v{v}", app + "-{v}"])
        releases = [style.format(v=f"{major}.{m}.{rng.randint(0, 6)}") for m in minors]
        numeric_top = releases[-keep_n:]
        current = releases[-1]
        if level != "easy":
            older = releases[:-keep_n]
            rng.shuffle(older)
            for cand in older:
                lexical = set(sorted(releases)[-keep_n:]) | {cand}
                if lexical != set(numeric_top) | {cand}:
                    current = cand
                    break
        assert set(sorted(releases)[-keep_n:]) | {current} != set(numeric_top) | {current}
        kept_releases = sorted(set(numeric_top) | {current}, key=_version_key)
        libs = rng.sample(WORDS, rng.randint(2, 3))
        date = now - rng.randint(380, 420) * DAY
        dates = []
        prev = None
        for name in releases:
            date += rng.randint(10, 40) * DAY
            dates.append(date)
            base = f"releases/{name}"
            add(f"{base}/bin/{app}", _blob(rng, rng.randint(12000, 40000)), date, 0o755)
            add(f"{base}/VERSION", f"{name}\n".encode(), date)
            add(f"{base}/share/{rng.choice(WORDS)}.json", _blob(rng, rng.randint(300, 3000)), date)
            for lib in libs:
                path = f"{base}/lib/lib{lib}.so"
                if hard and prev and rng.random() < 0.6:
                    link(path, inode[f"releases/{prev}/lib/lib{lib}.so"])
                else:
                    add(path, _blob(rng, rng.randint(6000, 24000)), date, 0o755)
            prev = name
        if hard:  # an old release rebuilt recently: mtime order is not version order
            old = rng.choice([r for r in releases if r not in kept_releases])
            stamp = dates[-1] + rng.randint(2, 12) * DAY
            for rel, e in nodes.items():
                if rel.startswith(f"releases/{old}/") and e.kind == "file":
                    e.mtime = stamp
        deleted_releases = [r for r in releases if r not in kept_releases]

        # core dumps and look-alikes
        def old_time() -> int:
            return (cutoff or now) - rng.randint(1, 60) * DAY - rng.randint(0, 86399)

        def new_time() -> int:
            return (cutoff or now) + rng.randint(0, (now - (cutoff or now)) or 1)

        spots = ["", "tmp/", "spool/", f"releases/{rng.choice(kept_releases)}/bin/"]
        cores = []
        for spot in rng.sample(spots, {"easy": 2, "medium": 3, "hard": 4}[level]):
            name = (
                rng.choice(["core", f"core.{rng.randint(1000, 65000)}"])
                if spot
                else f"core.{rng.randint(1000, 65000)}"
            )
            cores.append(spot + name)
            add(spot + name, _blob(rng, rng.randint(30000, 90000)), old_time(), 0o600)
        for rel in rng.sample(CORE_LOOKALIKES, 2):
            add(rel, _blob(rng, rng.randint(500, 6000)), old_time())
        add(f"etc/{app}.yaml", _words_text(rng, 6, WORDS).encode(), old_time())
        add(f"data/{rng.choice(FWORDS)}.db", _blob(rng, rng.randint(8000, 30000)), now - 3600)

        # logs
        rotated = []
        for svc in rng.sample(SERVICES, {"easy": 2, "medium": 3, "hard": 4}[level]):
            add(f"logs/{svc}.log", _words_text(rng, rng.randint(30, 200), WORDS).encode(), now - 60)
            step = rng.randint(2, 6) * DAY
            for i in range(1, rng.randint(3, 5)):
                text = _words_text(rng, rng.randint(40, 250), WORDS).encode()
                name = f"logs/{svc}.log.{i}" + (".gz" if i > 1 else "")
                add(
                    name,
                    _compress(text, "gz") if i > 1 else text,
                    now - i * step - rng.randint(0, 3000),
                )
                rotated.append(name)

        # cache
        cache_dirs = ["cache"]
        cache_files = []
        for _ in range({"easy": 6, "medium": 9, "hard": 12}[level]):
            a, b = f"{rng.getrandbits(8):02x}", f"{rng.getrandbits(8):02x}"
            rel = f"cache/{a}/{b}/{rng.getrandbits(80):020x}"
            cache_files.append(rel)
            add(
                rel,
                _blob(rng, rng.randint(1000, 12000)),
                now - rng.randint(0, 50) * DAY - rng.randint(0, 86399),
            )
            cache_dirs += [f"cache/{a}", f"cache/{a}/{b}"]
        empty_dirs = [f"cache/{rng.choice(['tmp', 'locks', 'staging'])}"]
        cache_dirs = sorted(set(cache_dirs + empty_dirs))

        # uploads (duplicates; only deduplicated at hard)
        uploads = []
        subdirs = rng.sample(UPLOAD_DIRS, 3)
        contents = [_blob(rng, rng.randint(2000, 15000)) for _ in range(rng.randint(4, 6))]
        for i, data in enumerate(contents):
            copies = rng.choice([1, 2, 3]) if i > 1 else rng.choice([2, 3])
            for _ in range(copies):
                rel = f"uploads/{rng.choice(subdirs)}/{rng.choice(FWORDS)}-{rng.randint(100, 999)}.{rng.choice(['pdf', 'png', 'jpg', 'docx'])}"
                if rel not in nodes:
                    uploads.append(rel)
                    add(rel, data, now - rng.randint(1, 90) * DAY)

        # exports (budget-driven at hard)
        exports = []
        if hard:
            days = rng.sample(range(1, 200), rng.randint(6, 8))
            for d in days:
                stamp = now - d * DAY - rng.randint(0, 86399)
                rel = f"exports/{rng.choice(EXPORT_KINDS)}-{_day(stamp)}.csv.gz"
                if rel not in nodes:
                    exports.append(rel)
                    add(rel, _blob(rng, rng.randint(15000, 50000)), stamp)

        # protections
        def deletable(rel: str) -> bool:
            return rel in cores or rel in rotated or rel in cache_files

        keep = [
            rng.choice(cores[1:] or cores),
            rng.choice(rotated),
        ]
        if level != "easy":
            keep.append(rng.choice(cache_files))
        for rel in keep:
            nodes[rel].mtime = min(nodes[rel].mtime, old_time())
        if cutoff:  # something the cut-off alone protects, in each category
            for group in (cores, rotated, cache_files):
                pick = rng.choice([r for r in group if r not in keep])
                nodes[pick].mtime = new_time()
            for rel in rotated + cache_files:
                if rel not in keep and nodes[rel].mtime >= cutoff and rng.random() < 0.3:
                    nodes[rel].mtime = old_time()
        # make sure something in each category really goes
        for group in (cores, rotated, cache_files):
            if all(r in keep or (cutoff and nodes[r].mtime >= cutoff) for r in group):
                pick = rng.choice([r for r in group if r not in keep])
                nodes[pick].mtime = old_time()

        def protected(rel: str) -> bool:
            return rel in keep or (cutoff is not None and nodes[rel].mtime >= cutoff)

        def total(paths) -> int:
            seen = {inode[p] for p in paths}
            return sum(len(nodes[c].data) for c in seen)

        remaining = [
            r
            for r in nodes
            if not any(r.startswith(f"releases/{d}/") for d in deleted_releases)
            and not (deletable(r) and not protected(r))
        ]
        dedupe = []
        if hard:
            by_content: dict[bytes, list[str]] = {}
            for rel in uploads:
                by_content.setdefault(nodes[rel].data, []).append(rel)
            for group in by_content.values():
                if len(group) > 1:
                    group.sort()
                    dedupe.append(group)
                    for rel in group[1:]:
                        inode[rel] = group[0]
            # the export that would go first is on the keep-list
            first = min((r for r in exports if not protected(r)), key=lambda r: nodes[r].mtime)
            keep.append(first)
            candidates = sorted(
                (r for r in exports if not protected(r)), key=lambda r: nodes[r].mtime
            )
            assert len(candidates) >= 3, candidates
            totals = [total(remaining)]
            for rel in candidates:
                totals.append(totals[-1] - len(nodes[rel].data))
            k = rng.randint(2, len(candidates) - 1)
            gap = totals[k - 1] - totals[k]
            budget = totals[k] + rng.randint(0, min(gap - 1, 4096))
            removed = set(candidates[:k])
            remaining = [r for r in remaining if r not in removed]
        else:
            before = total(list(nodes))
            budget = total(remaining) + rng.randint(0, (before - total(remaining)) // 8)
        assert total(remaining) <= budget

        entries = [
            Entry(f"{root}/{d}", "dir", mode=0o755, mtime=now - DAY)
            for d in _dirs_rel(nodes, empty_dirs)
        ]
        entries.append(Entry(root, "dir", mode=0o755, mtime=now - DAY))
        for rel, e in nodes.items():
            target = f"{root}/{e.target}" if e.kind == "hardlink" else ""
            entries.append(Entry(f"{root}/{rel}", e.kind, e.data, e.mode, e.mtime, target=target))
        entries.append(Entry(f"{root}/current", "symlink", target=f"releases/{current}", mtime=now))
        lines = [f"# {app}: never delete these (paths relative to {root})"]
        shuffled = list(keep)
        rng.shuffle(shuffled)
        lines += shuffled
        entries.append(
            Entry(keep_list, data=("\n".join(lines) + "\n").encode(), mtime=now - 30 * DAY)
        )

        expected = {r: _sha(nodes[inode_data(nodes, r)].data) for r in sorted(remaining)}
        return Draft(
            context={
                "app": app,
                "root": root,
                "keep_list": keep_list,
                "keep_n": keep_n,
                "cutoff": cutoff,
                "cutoff_utc": _utc(cutoff) if cutoff else None,
                "hard": hard,
                "budget": budget,
                "current": f"releases/{current}",
                "expected": expected,
                "gone": [f"releases/{r}" for r in deleted_releases],
                "cache_dirs": cache_dirs if hard else ["cache"],
                "dedupe": dedupe,
            },
            files={"environment/seed.tar.gz": _seed(entries)},
            outputs=[root + "/"],
            tags=["disk-usage", "find", "retention"] + (["hard-links", "dedupe"] if hard else []),
        )


def inode_data(nodes: dict[str, Entry], rel: str) -> str:
    """The path holding the data of ``rel`` (itself, or the member a hard link points to)."""
    e = nodes[rel]
    return e.target if e.kind == "hardlink" else rel


def _dirs_rel(nodes: dict[str, Entry], extra: list[str]) -> list[str]:
    out: set[str] = set(extra)
    for rel in [*nodes, *extra]:
        parts = rel.split("/")[:-1] if rel not in extra else rel.split("/")
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return sorted(out)


# --- data-recovery -------------------------------------------------------------------------

CITIES = ["Lisbon", "Osaka", "Denver", "Tallinn", "Recife", "Accra", "Perth", "Bergen", "Quito"]
TABLES: dict[str, list[tuple[str, Any]]] = {
    "customers": [
        ("name", "person"),
        ("city", "city"),
        ("tier", ["free", "pro", "team", "enterprise"]),
        ("balance", "int"),
    ],
    "products": [
        ("sku", "sku"),
        ("title", "word"),
        ("status", ["active", "discontinued", "backorder"]),
        ("stock", "int"),
    ],
    "accounts": [
        ("owner", "person"),
        ("region", ["eu", "us", "apac", "latam"]),
        ("state", ["open", "frozen", "closed"]),
        ("credit", "int"),
    ],
    "devices": [
        ("hostname", "host"),
        ("site", "city"),
        ("status", ["online", "offline", "maintenance"]),
        ("uptime_h", "int"),
    ],
    "employees": [
        ("name", "person"),
        ("team", ["infra", "web", "data", "sales", "support"]),
        ("level", ["junior", "mid", "senior", "lead"]),
        ("pto_days", "int"),
    ],
}
CONF_SECTIONS = ["server", "database", "cache", "logging", "auth", "queue", "metrics", "smtp"]
CONF_KEYS = [
    "host",
    "port",
    "timeout",
    "workers",
    "retries",
    "pool_size",
    "level",
    "ttl",
    "max_conn",
    "backlog",
    "buffer_kb",
    "interval",
    "user",
    "path",
    "enabled",
]


def _conf_value(rng, key: str) -> str:
    if key in ("host",):
        return f"{rng.choice(WORDS)}.internal"
    if key in ("user",):
        return rng.choice(WORDS)
    if key in ("path",):
        return f"/var/lib/{rng.choice(WORDS)}"
    if key in ("level",):
        return rng.choice(["debug", "info", "warning", "error"])
    if key in ("enabled",):
        return rng.choice(["true", "false"])
    return str(rng.randint(1, 9000))


def _cell(rng, kind: Any) -> str:
    if isinstance(kind, list):
        return rng.choice(kind)
    if kind == "person":
        return f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS).capitalize()}"
    if kind == "city":
        return rng.choice(CITIES)
    if kind == "sku":
        return f"SKU-{rng.randint(1000, 9999)}"
    if kind == "host":
        return f"{rng.choice(WORDS)}-{rng.randint(1, 99):02d}"
    if kind == "word":
        return rng.choice(WORDS).capitalize()
    return str(rng.randint(0, 500))


def _apply_changes(state: dict[int, dict[str, str]], ops, table: str, after: int, int_col: str):
    """Apply change-log entries (already in the order to use) with seq > after."""
    state = {k: dict(v) for k, v in state.items()}
    for op in ops:
        if op["table"] != table or op["seq"] <= after:
            continue
        i = op["id"]
        if op["op"] == "insert":
            state[i] = dict(op["row"])
        elif i not in state:
            continue
        elif op["op"] == "update":
            state[i].update(op["set"])
        elif op["op"] == "add":
            state[i][int_col] = str(int(state[i][int_col]) + op["delta"])
        elif op["op"] == "delete":
            del state[i]
    return state


def _csv(columns: list[str], state: dict[int, dict[str, str]]) -> str:
    lines = [",".join(columns)]
    for i in sorted(state):
        lines.append(",".join([str(i)] + [state[i][c] for c in columns[1:]]))
    return "\n".join(lines) + "\n"


@register
class DataRecovery(Family):
    """Rebuild a lost file from backups, two kinds picked by the seed.

    patches: a config file from a full backup tarball plus numbered unified diffs (numbering
    crosses 9 -> 10, older diffs already folded into the full backup). Medium: two full
    backups, some diffs gzipped, permission bits to restore. Hard: the newest full backup is
    silently corrupted (SHA256SUMS tells) and the live file is a damaged stub.

    changelog: a CSV table from a gzipped snapshot plus a rotated JSON-lines change log with
    non-idempotent ops (replaying the overlap double counts). Medium: other tables in the log,
    more rotations. Hard: corrupted newest snapshot and a torn last log line."""

    name = "data-recovery"
    title = "Recover a lost file from backups, incremental diffs or a rotated change log"
    category = "data-recovery"

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        if rng.random() < 0.5:
            return self._patches(rng, difficulty)
        return self._changelog(rng, difficulty)

    # patches -------------------------------------------------------------------------------

    def _patches(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        app = rng.choice(CLEAN_APPS)
        conf = rng.choice([f"{app}.conf", "settings.ini", "service.conf", "pool.cfg", "main.conf"])
        live = f"/etc/{app}/{conf}"
        bdir = f"/var/backups/{app}"
        mode = rng.choice([0o640, 0o600, 0o644]) if level != "easy" else 0o644
        sections: list[list[str]] = []
        for name in rng.sample(CONF_SECTIONS, rng.randint(4, 6)):
            keys = rng.sample(CONF_KEYS, rng.randint(4, 8))
            sections.append([name] + [f"{k} = {_conf_value(rng, k)}" for k in keys])

        def render(rev: int) -> str:
            out = [f"# {app} configuration (managed)", f"# revision: {rev}", ""]
            for sec in sections:
                out.append(f"[{sec[0]}]")
                out += sec[1:]
                out.append("")
            return "\n".join(out)

        k_total = {
            "easy": rng.randint(10, 11),
            "medium": rng.randint(11, 13),
            "hard": rng.randint(12, 14),
        }[level]
        states = [render(0)]
        for rev in range(1, k_total + 1):
            for _ in range(rng.randint(1, 3)):
                sec = rng.choice(sections)
                what = rng.random()
                if what < 0.5 and len(sec) > 2:
                    i = rng.randint(1, len(sec) - 1)
                    key = sec[i].split(" = ")[0]
                    sec[i] = f"{key} = {_conf_value(rng, key)}"
                elif what < 0.8:
                    key = rng.choice(CONF_KEYS)
                    sec.insert(
                        rng.randint(1, len(sec)),
                        f"{key}_{rng.choice(WORDS)} = {_conf_value(rng, key)}",
                    )
                elif len(sec) > 3:
                    sec.pop(rng.randint(1, len(sec) - 1))
                else:
                    sec.append(f"# note {rng.choice(WORDS)} {rng.randint(1, 99)}")
            states.append(render(rev))
        final = states[-1]
        first = set(states[0].splitlines())
        new_lines = [ln for ln in final.splitlines() if " = " in ln and ln not in first]
        secrets = new_lines[-2:]

        fulls = [rng.randint(2, 4)]
        if level != "easy":
            fulls.append(rng.randint(6, 8))
        corrupt = fulls[-1] if hard else None
        now = EPOCH_2022 + rng.randint(300, 900) * DAY
        step = DAY
        start = now - (k_total + 1) * step
        entries: list[Entry] = [Entry(bdir, "dir", mode=0o750, mtime=now)]
        sums: dict[str, str] = {}
        for n in fulls:
            members = [
                Entry(f"etc/{app}", "dir", mode=0o755, mtime=start + n * step),
                Entry(
                    f"etc/{app}/{conf}", data=states[n].encode(), mode=mode, mtime=start + n * step
                ),
                Entry(
                    f"etc/{app}/{rng.choice(['hosts.allow', 'env', 'limits.conf'])}",
                    data=_words_text(rng, 3, WORDS).encode(),
                    mtime=start + n * step,
                ),
            ]
            blob = _compress(_tar(members), "gz")
            sums[f"full-{n}.tar.gz"] = _sha(blob)
            if n == corrupt:
                lines = states[n].splitlines()
                idx = rng.choice([i for i, ln in enumerate(lines) if " = " in ln])
                key = lines[idx].split(" = ")[0]
                lines[idx] = f"{key} = {_conf_value(rng, key)}x"
                members[1] = Entry(
                    members[1].path,
                    data=("\n".join(lines) + "\n").encode(),
                    mode=mode,
                    mtime=members[1].mtime,
                )
                blob = _compress(_tar(members), "gz")
            entries.append(
                Entry(
                    f"{bdir}/full-{n}.tar.gz", data=blob, mode=0o640, mtime=start + n * step + 3600
                )
            )
        gz_some = level != "easy"
        for n in range(1, k_total + 1):
            diff = "".join(
                difflib.unified_diff(
                    states[n - 1].splitlines(keepends=True),
                    states[n].splitlines(keepends=True),
                    f"a/{conf}",
                    f"b/{conf}",
                )
            ).encode()
            name = f"incr-{n}.diff"
            if gz_some and rng.random() < 0.4:
                name, diff = name + ".gz", _compress(diff, "gz")
            sums[name] = _sha(diff)
            entries.append(
                Entry(f"{bdir}/{name}", data=diff, mode=0o640, mtime=start + n * step + 7200)
            )
        if level != "easy":
            body = "".join(f"{sums[k]}  {k}\n" for k in sorted(sums))
            entries.append(Entry(f"{bdir}/SHA256SUMS", data=body.encode(), mode=0o644, mtime=now))
        if hard:  # what is left of the live file: a torn copy
            torn = final[: len(final) // 3]
            entries.append(Entry(f"/etc/{app}", "dir", mode=0o755, mtime=now))
            entries.append(Entry(live, data=torn.encode(), mode=mode, mtime=now))
        return Draft(
            context={
                "kind": "patches",
                "app": app,
                "conf": conf,
                "live": live,
                "bdir": bdir,
                "mode": oct(mode),
                "check_mode": level != "easy",
                "gz_some": gz_some,
                "sums": level != "easy",
                "hard": hard,
                "expected": final,
                "expected_sha": _sha(final.encode()),
                "torn": hard,
            },
            files={"environment/seed.tar.gz": _seed(entries)},
            secrets=secrets,
            outputs=[live],
            tags=["backup", "patch", "diff"] + (["checksums"] if hard else []),
        )

    # changelog -----------------------------------------------------------------------------

    def _changelog(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        app = rng.choice(CLEAN_APPS)
        table = rng.choice(sorted(TABLES))
        schema = TABLES[table]
        columns = ["id"] + [c for c, _ in schema]
        int_col = schema[-1][0]
        other = rng.choice([t for t in sorted(TABLES) if t != table])
        other_schema = TABLES[other]
        n_ops = {"easy": 36, "medium": 60, "hard": 80}[level]
        for _attempt in range(50):
            state0 = {}
            next_id = 1
            for _ in range(rng.randint(14, 26)):
                next_id += rng.choice([1, 1, 1, 2])
                state0[next_id] = {c: _cell(rng, k) for c, k in schema}
            other_ids = list(range(1, 30))
            ops = []
            state = {k: dict(v) for k, v in state0.items()}
            for seq in range(1, n_ops + 1):
                if level != "easy" and rng.random() < 0.3:
                    col, kind = rng.choice(other_schema)
                    ops.append(
                        {
                            "seq": seq,
                            "table": other,
                            "op": "update",
                            "id": rng.choice(other_ids),
                            "set": {col: _cell(rng, kind)},
                        }
                    )
                    continue
                r = rng.random()
                i = rng.choice(sorted(state))
                if r < 0.12:
                    next_id += 1
                    op = {
                        "op": "insert",
                        "id": next_id,
                        "row": {c: _cell(rng, k) for c, k in schema},
                    }
                elif r < 0.2 and len(state) > 8:
                    op = {"op": "delete", "id": i}
                elif r < 0.55:
                    op = {
                        "op": "add",
                        "id": i,
                        "column": int_col,
                        "delta": rng.choice([-1, 1]) * rng.randint(1, 60),
                    }
                else:
                    col, kind = rng.choice(schema)
                    op = {"op": "update", "id": i, "set": {col: _cell(rng, kind)}}
                op = {"seq": seq, "table": table, **op}
                ops.append(op)
                state = _apply_changes(state, [op], table, 0, int_col)
            snaps = [rng.randint(n_ops // 5, n_ops // 3)]
            if level != "easy":
                snaps.append(rng.randint(n_ops // 2, 2 * n_ops // 3))
            use = snaps[0] if hard else snaps[-1]
            log_start = max(1, snaps[0] - rng.randint(5, 9))
            logged = [op for op in ops if op["seq"] >= log_start]
            n_files = {"easy": 2, "medium": rng.randint(3, 4), "hard": rng.randint(4, 5)}[level]
            cuts = sorted(rng.sample(range(1, len(logged)), n_files - 1))
            chunks = [logged[a:b] for a, b in zip([0, *cuts], [*cuts, len(logged)], strict=True)]
            names = ["changes.log"] + [
                f"changes.log.{i}" + (".gz" if i > 1 and level != "easy" else "")
                for i in range(1, n_files)
            ]
            files_in_order = list(zip(reversed(names), chunks, strict=True))  # oldest first
            snap_state = _apply_changes(
                state0, [o for o in ops if o["seq"] <= use], table, 0, int_col
            )
            expected = _apply_changes(snap_state, logged, table, use, int_col)
            assert expected == state
            by_name = sorted(files_in_order, key=lambda fc: fc[0])
            wrong = [
                snap_state,
                _apply_changes(snap_state, [o for _, c in by_name for o in c], table, use, int_col),
                _apply_changes(
                    snap_state,
                    [o for n, c in files_in_order if n != "changes.log" for o in c],
                    table,
                    use,
                    int_col,
                ),
                _apply_changes(snap_state, logged, table, log_start - 1, int_col),
            ]
            if (
                all(w != expected for w in wrong)
                and chunks[-1]
                and len(chunks[0]) > 1
                and all(chunks)
            ):
                break
        else:  # pragma: no cover - the loop practically always succeeds
            raise RuntimeError("could not draft a change log where every shortcut fails")

        now = EPOCH_2022 + rng.randint(300, 900) * DAY
        bdir = f"/var/backups/{app}"
        ldir = f"/var/log/{app}"
        live = f"/var/lib/{app}/{table}.csv"
        entries: list[Entry] = [
            Entry(bdir, "dir", mode=0o750, mtime=now),
            Entry(ldir, "dir", mode=0o755, mtime=now),
            Entry(f"/var/lib/{app}", "dir", mode=0o755, mtime=now),
        ]
        sums = {}
        for s in snaps:
            st = _apply_changes(state0, [o for o in ops if o["seq"] <= s], table, 0, int_col)
            text = _csv(columns, st)
            blob = _compress(text.encode(), "gz")
            sums[f"{table}-{s}.csv.gz"] = _sha(blob)
            if hard and s == snaps[-1]:
                ids = sorted(st)
                for i in rng.sample(ids, 2):
                    st[i][int_col] = str(int(st[i][int_col]) + rng.randint(5, 90))
                blob = _compress(_csv(columns, st).encode(), "gz")
            entries.append(
                Entry(
                    f"{bdir}/{table}-{s}.csv.gz",
                    data=blob,
                    mode=0o640,
                    mtime=now - (n_ops - s) * 3600,
                )
            )
        if level != "easy":
            body = "".join(f"{sums[k]}  {k}\n" for k in sorted(sums))
            entries.append(Entry(f"{bdir}/SHA256SUMS", data=body.encode(), mtime=now))
        for name, chunk in files_in_order:
            text = "".join(json.dumps(o, sort_keys=True) + "\n" for o in chunk)
            if hard and name == "changes.log":
                col, kind = rng.choice(schema)
                torn = json.dumps(
                    {
                        "seq": n_ops + 1,
                        "table": table,
                        "op": "update",
                        "id": rng.choice(sorted(state)),
                        "set": {col: _cell(rng, kind)},
                    },
                    sort_keys=True,
                )
                text += torn[: rng.randint(10, len(torn) - 5)]
            data = _compress(text.encode(), "gz") if name.endswith(".gz") else text.encode()
            entries.append(
                Entry(
                    f"{ldir}/{name}",
                    data=data,
                    mode=0o640,
                    mtime=now - 3600 * (n_ops - chunk[-1]["seq"]),
                )
            )
        rows = [[str(i)] + [expected[i][c] for c in columns[1:]] for i in sorted(expected)]
        changed = [
            ",".join(r)
            for r in rows
            if int(r[0]) not in snap_state
            or [snap_state[int(r[0])][c] for c in columns[1:]] != r[1:]
        ]
        return Draft(
            context={
                "kind": "changelog",
                "app": app,
                "table": table,
                "other": other,
                "columns": columns,
                "int_col": int_col,
                "live": live,
                "bdir": bdir,
                "ldir": ldir,
                "snaps": snaps,
                "use": use,
                "sums": level != "easy",
                "hard": hard,
                "others": level != "easy",
                "rows": rows,
                "expected": _csv(columns, expected),
            },
            files={"environment/seed.tar.gz": _seed(entries)},
            secrets=changed[:2],
            outputs=[live],
            tags=["csv", "json-lines", "change-log", "backup"] + (["checksums"] if hard else []),
        )


# --- file-search ---------------------------------------------------------------------------

SHARES = ["fileshare", "projects", "archive", "media", "teamdrive", "research", "exports", "scans"]
SEARCH_BASES = ["/srv", "/data", "/mnt/storage", "/home/shared"]
DIR_WORDS = [
    "reports",
    "drafts",
    "clients",
    "acme",
    "globex",
    "initech",
    "2023",
    "2024",
    "q1",
    "q2",
    "img",
    "raw",
    "final",
    "shared",
    "notes",
    "legal",
    "hr",
    "ops",
    "vendors",
    "minutes",
]
SEARCH_EXTS = ["log", "csv", "txt", "json", "dat", "xml", "md", "cfg"]
EXCLUDE_DIRS = [".snapshot", "backup", "_archive", "old-copies", ".trash"]
WEIRD = [
    "q3 report (final)",
    "it's done",
    "-leading-dash",
    "$HOME notes",
    "[draft] plan",
    "semi;colon",
    "ümlaut café",
    "two  spaces",
    "#hash tag",
    "50% off",
    "a&b",
    'quote"d',
]
MARKERS = ["CASE", "TICKET", "REF", "INC", "PRJ"]


def _sized(rng, size: int, marker: str | None) -> bytes:
    """Text of exactly ``size`` bytes (cheap: a few random lines, repeated)."""
    lines = [" ".join(rng.sample(WORDS, rng.randint(4, 9))) + "\n" for _ in range(6)]
    body = "".join(lines[i % 6] for i in range(size // 20 + 8)).encode()
    if marker:
        at = rng.randint(0, max(0, min(size - len(marker) - 2, len(body))))
        body = body[:at] + f"\n{marker}\n".encode() + body[at:]
    return body[:size]


@register
class FileSearch(Family):
    """Find regular files by criteria in a generated tree, list them (relative, sorted),
    and (medium) copy or (hard) move them preserving structure and mtimes. Every level has
    size boundaries that `find -size Nk` rounding gets wrong, a symlink to a match, a hidden
    match and name look-alikes. Medium adds a size range, an mtime bound and an excluded
    subtree; hard adds owner and content criteria, odd file names, a symlink loop and a
    directory link leading out of the tree."""

    name = "file-search"
    title = "Find files by name, size, time, owner and content; list, copy or move them"
    category = "file-management"

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        share = rng.choice(SHARES)
        root = f"{rng.choice(SEARCH_BASES)}/{share}"
        users = rng.sample(USERS, 3)
        uids = {u: 2100 + i for i, u in enumerate(users)}
        ext = rng.choice(SEARCH_EXTS)
        min_k = rng.randint(4, 20)
        lo = min_k * 1024
        max_k = min_k + rng.randint(6, 24) if level != "easy" else None
        hi = max_k * 1024 if max_k else None
        now = EPOCH_2022 + rng.randint(300, 900) * DAY
        bound = now - rng.randint(30, 120) * DAY + rng.randint(0, 86399)
        before = bound if level == "medium" else None
        after = bound if hard else None
        owner = users[0] if hard else None
        marker = f"{rng.choice(MARKERS)}-{rng.randint(1000, 8999)}" if hard else None
        exclude = [rng.choice(EXCLUDE_DIRS)] if level != "easy" else []
        action = {"easy": "list", "medium": "copy", "hard": "move"}[level]
        listing = rng.choice(
            ["/root/matches.txt", "/root/report/found-files.txt", f"/srv/audit/{share}-hits.txt"]
        )
        dest = rng.choice(
            [f"/srv/collected/{share}", f"/root/{share}-selection", f"/var/quarantine/{share}"]
        )

        dirs = set()
        for _ in range({"easy": 6, "medium": 10, "hard": 14}[level]):
            dirs.add("/".join(rng.sample(DIR_WORDS, rng.randint(1, 3))))
        dirs = sorted(dirs)
        hidden_dir = f".{rng.choice(['cache', 'config', 'local', 'meta'])}"
        files: dict[str, dict[str, Any]] = {}

        def name(weird: bool = False, e: str = ext) -> str:
            if weird:
                return f"{rng.choice(WEIRD)}.{e}"
            tail = rng.choice(["", f"-{rng.randint(1, 99)}", f"_{rng.choice(DIR_WORDS)}", "-v2"])
            return f"{rng.choice(FWORDS)}{tail}.{e}"

        def where() -> str:
            return rng.choice(dirs + [""])

        def good_size() -> int:
            return rng.randint(lo, (hi - 1) if hi else lo + 30000)

        def good_time() -> int:
            if before:
                return before - rng.randint(1, 200) * DAY
            if after:
                return after + rng.randint(0, (now - after))
            return now - rng.randint(0, 400) * DAY

        def add(rel: str, size: int, mtime: int, user: str, mark: str | None = None) -> str:
            rel = rel.lstrip("/")
            if rel in files or any(rel.startswith(d + "/") for d in files):
                rel = f"{posixpath.dirname(rel)}/{rng.randint(100, 999)}-{posixpath.basename(rel)}".lstrip(
                    "/"
                )
            files[rel] = {"data": _sized(rng, size, mark), "mtime": mtime, "user": user}
            return rel

        def match(rel: str | None = None, **over: Any) -> str:
            props = {
                "size": good_size(),
                "mtime": good_time(),
                "user": owner or rng.choice(users),
                "mark": marker,
            }
            props.update(over)
            rel = rel or f"{where()}/{name()}"
            return add(rel, props["size"], props["mtime"], props["user"], props["mark"])

        # matches, boundary ones included
        for _ in range({"easy": 4, "medium": 6, "hard": 7}[level]):
            match()
        match(size=lo)
        match(f"{hidden_dir}/{name()}")
        match(f"{where()}/.{name()}")
        if hi:
            match(size=hi - 1)
            match(size=hi - rng.randint(2, 1000))
        if after:
            match(mtime=after)
        if before:
            match(mtime=before - 1)
        if hard:
            for _ in range(3):
                match(f"{where()}/{name(weird=True)}")
        # near misses: one criterion wrong each
        match(size=lo - rng.randint(1, 1000))
        match(size=lo - 1)
        match(f"{where()}/{name()}.{rng.choice(['bak', 'old', 'orig'])}")
        match(f"{where()}/{name(e=ext.upper())}")
        match(f"{where()}/{rng.choice(FWORDS)}_{ext}")
        match(f"{where()}/{rng.choice(FWORDS)}.{ext}/{rng.choice(FWORDS)}.txt")
        if hi:
            match(size=hi)
            match(size=hi + rng.randint(1, 3000))
        if before:
            match(mtime=before)
            match(mtime=before + rng.randint(1, 30) * DAY)
        if after:
            match(mtime=after - 1)
            match(mtime=after - rng.randint(1, 30) * DAY)
        if owner:
            match(user=users[1])
            match(user=users[2])
        if marker:
            match(mark=marker.lower())
            match(mark=f"{marker[:-1]}{(int(marker[-1]) + 1) % 10}")
            match(mark=None)
        for ex in exclude:
            match(f"{ex}/{name()}")
            match(f"{ex}/{rng.choice(DIR_WORDS)}/{name()}")
        # filler
        for _ in range({"easy": 20, "medium": 35, "hard": 45}[level]):
            e = ext if rng.random() < 0.3 else rng.choice(SEARCH_EXTS)
            add(
                f"{where()}/{name(e=e)}",
                rng.randint(100, (hi or lo) + 8000),
                now - rng.randint(0, 400) * DAY - rng.randint(0, 86399),
                rng.choice(users),
            )

        links: dict[str, str] = {}
        targets = [
            r
            for r in files
            if self._matches(r, files[r], ext, lo, hi, before, after, owner, marker, exclude)
        ]
        pick = rng.choice(targets)
        link_dir = where()
        link_rel = f"{link_dir}/{rng.choice(['latest', 'current', 'newest'])}.{ext}".lstrip("/")
        if link_rel not in files:
            links[link_rel] = posixpath.relpath(pick, link_dir or ".")
        outside = None
        outside_files: dict[str, dict[str, Any]] = {}
        if hard:
            d = rng.choice(dirs)
            links[f"{d}/loop"] = ".."
            outside = f"/opt/{share}-mirror"
            links[f"{rng.choice(dirs)}/mirror"] = outside
            for _ in range(2):
                outside_files[f"{outside}/{name()}"] = {
                    "data": _sized(rng, good_size(), marker),
                    "mtime": good_time(),
                    "user": owner,
                }

        expected = sorted(
            r
            for r in files
            if self._matches(r, files[r], ext, lo, hi, before, after, owner, marker, exclude)
        )
        all_dirs = _dirs_of([f"{root}/{r}" for r in [*files, *links]], root)
        entries = [Entry(d, "dir", mode=0o755, mtime=now - DAY) for d in all_dirs]
        for rel, f in sorted(files.items()):
            entries.append(
                Entry(
                    f"{root}/{rel}",
                    data=f["data"],
                    mtime=f["mtime"],
                    user=f["user"],
                    uid=uids[f["user"]],
                )
            )
        for rel, target in sorted(links.items()):
            entries.append(Entry(f"{root}/{rel}", "symlink", target=target, mtime=now))
        if outside:
            entries.append(Entry(outside, "dir", mode=0o755, mtime=now))
            for path, f in outside_files.items():
                entries.append(
                    Entry(
                        path, data=f["data"], mtime=f["mtime"], user=f["user"], uid=uids[f["user"]]
                    )
                )
        return Draft(
            context={
                "root": root,
                "share": share,
                "users": [[u, uids[u]] for u in users],
                "ext": ext,
                "min_k": min_k,
                "lo": lo,
                "max_k": max_k,
                "hi": hi,
                "before": before,
                "before_utc": _utc(before) if before else None,
                "after": after,
                "after_utc": _utc(after) if after else None,
                "owner": owner,
                "marker": marker,
                "exclude": exclude,
                "action": action,
                "listing": listing,
                "dest": dest,
                "expected": expected,
                "meta": {r: [_sha(files[r]["data"]), files[r]["mtime"]] for r in sorted(files)},
                "links": links,
            },
            files={"environment/seed.tar.gz": _seed(entries)},
            secrets=[posixpath.basename(r) for r in expected if " " not in r][:3],
            outputs=[listing] + ([dest + "/"] if action != "list" else []),
            tags=["find", "search"] + {"list": [], "copy": ["copy"], "move": ["move"]}[action],
        )

    @staticmethod
    def _matches(rel, f, ext, lo, hi, before, after, owner, marker, exclude) -> bool:
        size = len(f["data"])
        return (
            not any(rel.startswith(e + "/") for e in exclude)
            and posixpath.basename(rel).endswith("." + ext)
            and size >= lo
            and (hi is None or size < hi)
            and (before is None or f["mtime"] < before)
            and (after is None or f["mtime"] >= after)
            and (owner is None or f["user"] == owner)
            and (marker is None or marker.encode() in f["data"])
        )
