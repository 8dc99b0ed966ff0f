"""archives: extract selected members from an archive, or build a release tarball, to spec."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, register
from factory.families.slots import Slots, Word
from factory.families.terminal.archives.export import (
    DROP_DIRS,
    EXPORT_KINDS,
    Export,
    folders_of,
    restore_targets,
)
from factory.families.terminal.archives.hard import hard_draft
from factory.families.terminal.archives.words import (
    LIBS,
    PROJECTS,
    SRC_EXCLUDE_SUFFIXES,
    TOPS,
    VENDOR_DIRS,
)
from factory.families.terminal.seed_tree import (
    DAY,
    EPOCH_2022,
    Entry,
    archive_bytes,
    day_text,
    dirs_of,
    seed_tarball,
    sha256_hex,
    words_text,
)
from factory.families.terminal.state_snapshot import (
    STATE_DIR,
    present_lines,
    snapshot_hook,
    tree_lines,
)
from factory.families.terminal.words import FWORDS, USERS, WORDS
from factory.vocabulary import Difficulty


class ArchiveSlots(Slots):
    """A project whose files travel as archives: the project's name (also its Python
    package's) and the top-level folders of its exports."""

    project: Word = Field(description="the project's name, one word", examples=["tidewater"])
    folders: list[Word] = Field(
        min_length=6,
        max_length=8,
        description="one-word names of the top-level folders of its exports",
        examples=[["charts", "permits", "rosters", "manifests", "invoices", "surveys"]],
    )


@register
class Archives(Family):
    """Archive chores. Easy and medium pick one of two kinds by the seed:

    extract: pull selected members (top-level directory + extension rules) of a tar/zip into
    a target directory keeping their paths, past near-miss decoys. Medium adds a nested archive
    to unpack in place.

    create: package a source tree as a release tarball under a top-level directory, excluding
    VCS/build/junk (one exclusion anchored at the top only). Medium adds symlinks, an empty
    directory and names with spaces.

    Hard is a restore from a delivery folder: selected files of an export (two rules and one
    or two vendored library archives to unpack, members with `..` names that must not land,
    modes and mtimes kept) composed with two to four faults of :data:`AR_FAULTS` that the
    instruction does not name (the archive in pieces, a damaged copy beside a good one, one
    leading folder around every member, a later archive that changes and deletes files, a
    target path holding a failed restore or a link to an old one, a selected folder in an
    archive of its own) or states as a goal (the tree owned by a service account). The
    reference is the commands for that task's faults; each fault has an unfixed-<fault>
    near miss."""

    name = "archives"
    title = "Extract selected members from an archive, or build a release tarball, to spec"
    category = "archives"
    slots = ArchiveSlots

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        if difficulty is Difficulty.HARD:
            return hard_draft(self, rng)
        if rng.random() < 0.5:
            return self._extract(rng, difficulty)
        return self._create(rng, difficulty)

    # extract ------------------------------------------------------------------------------

    def _extract(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        proj = self.filled("project", None) or rng.choice(PROJECTS)
        fmt = rng.choice(
            ["tar.gz", "zip"] if level == "easy" else ["tar.gz", "tgz", "tar.xz", "tar.bz2", "zip"]
        )
        stamp = EPOCH_2022 + rng.randint(0, 900) * DAY
        stem = f"{proj}-{rng.choice(EXPORT_KINDS)}-{day_text(stamp)}"
        archive = f"{rng.choice(DROP_DIRS)}/{stem}.{fmt}"
        target = rng.choice([*restore_targets(proj), f"/home/{rng.choice(USERS)}/{proj}-picked"])
        tops = rng.sample(self.filled("folders", TOPS), {"easy": 4, "medium": 5}[level])
        export = Export(rng, proj, stamp, [0o644])
        export.draw(tops, 1 if level == "easy" else 2, {"easy": 18, "medium": 26}[level])
        members, rules = export.members, export.rules

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
            nested_entries = export.library(lib)

        order = sorted(members)
        rng.shuffle(order)
        entries = [members[p] for p in order]
        if nested:
            blob = archive_bytes(nested_entries, nested_fmt)
            entries.insert(
                rng.randint(0, len(entries)),
                Entry(nested, data=blob, mtime=stamp - 3 * DAY),
            )
        if fmt != "zip":
            dirs = folders_of(e.path for e in entries if ".." not in e.path)
            entries = [Entry(d, "dir", mode=0o755, mtime=stamp) for d in dirs] + entries
        blob = archive_bytes(entries, fmt)

        expected = {}
        for p, e in members.items():
            if export.selected(p):
                expected[p] = [sha256_hex(e.data), oct(e.mode), e.mtime]
        for e in nested_entries:
            if ".." not in e.path:
                expected[f"{nested_dest}/{e.path}"] = [sha256_hex(e.data), oct(e.mode), e.mtime]
        return Draft(
            context={
                "mode": "extract",
                "proj": proj,
                "archive": archive,
                "archive_name": posixpath.basename(archive),
                "archive_sha": sha256_hex(blob),
                "fmt": fmt,
                "target": target,
                "rules": rules,
                "nested": nested,
                "nested_dest": nested_dest,
                "nested_fmt": nested_fmt,
                "preserve": False,
                "landings": [],
                "expected": dict(sorted(expected.items())),
                "workdir": posixpath.dirname(archive),
                "tree_state": f"{STATE_DIR}/target.tree",
                "landed_state": f"{STATE_DIR}/landed.list",
            },
            files={f"environment/{posixpath.basename(archive)}": blob},
            outputs=[target + "/"],
            separate_verifier=True,
            kept=[archive],
            artifacts=[STATE_DIR],
            collect=[
                snapshot_hook({"target.tree": tree_lines(target), "landed.list": present_lines([])})
            ],
            tags=["tar", "zip", "extract"],
        )

    # hard: a restore from a delivery -----------------------------------------------------

    # create -------------------------------------------------------------------------------

    def _create(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        proj = self.filled("project", None) or rng.choice(PROJECTS)
        pkg = proj
        user = rng.choice(USERS)
        ver = f"{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        src = rng.choice([f"/home/{user}/src/{proj}", f"/home/{user}/{proj}", f"/srv/build/{proj}"])
        comp = rng.choice(["gz", "xz", "bz2"])
        out_dir = rng.choice(["/srv/releases", "/var/www/dist", "/opt/artifacts", "/srv/dist"])
        prefix = f"{proj}-{ver}"
        out = f"{out_dir}/{prefix}.tar.{comp}"
        now = EPOCH_2022 + rng.randint(200, 900) * DAY

        files: dict[str, tuple[bytes, int]] = {}

        def text(rel: str, n: int) -> bytes:
            return (f"# {proj}/{rel}\n" + words_text(rng, n, WORDS)).encode()

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
            f".git/objects/{rng.randint(10, 99)}/{sha256_hex(proj.encode())[:38]}": (
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
        for d in dirs_of(all_paths, src):
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
        expected = {rel: sha256_hex(data) for rel, (data, _) in files.items()}
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
                "clamp": None,
                "expected": dict(sorted(expected.items())),
                "modes": dict(sorted(modes.items())),
                "excluded_dirs": excluded_dirs,
                "keep_dirs": keep_dirs,
                "workdir": src,
            },
            files={"environment/seed.tar.gz": seed_tarball(entries)},
            outputs=[out],
            separate_verifier=True,
            tags=["tar", "compression", "create"],
        )
