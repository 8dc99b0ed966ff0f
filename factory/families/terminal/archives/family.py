"""archives: extract selected members from an archive, or build a release tarball, to spec."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from shlex import quote as shlex_quote
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, Trap, register
from factory.families.slots import Slots, Word
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
    stat_lines,
    tree_lines,
)
from factory.families.terminal.words import FWORDS, USERS, WORDS
from factory.vocabulary import Difficulty

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
EXTS = ["csv", "json", "yaml", "txt", "md", "sql", "xml", "ini", "tsv", "html"]
VENDOR_DIRS = ["vendor", "third_party", "bundles", "deps", "packages"]
LIBS = ["zlibng", "tinyxml", "yamlcpp", "fmtlib", "cjson", "lz4", "miniz", "inih", "utf8proc"]
LANDINGS = ["/etc/cron.d", "/usr/local/bin", "/root", "/etc/profile.d", "/var/spool/cron"]
SRC_EXCLUDE_SUFFIXES = ["~", ".log", ".tmp", ".swp", ".bak", ".orig"]

#: Hard: a restore from a delivery that composes two to four of these (the instruction states the
#: goal only). split: the archive arrived cut into pieces; bad-copy: the copy under the archive's
#: name is damaged, a good one was sent again into retry/ (the delivery's SHA256SUMS tells
#: which); wrapper: every member sits under one leading folder; second-lib: two vendored library
#: archives to unpack instead of one; delta: a later archive changes files and lists in REMOVED
#: those deleted since; stale-target: the target holds a failed earlier restore; target-link: the
#: target path is a symbolic link to an old restore kept elsewhere; owner: the tree must belong
#: to the service account; second-archive: one selected folder ships in an archive of its own.
AR_FAULTS = (
    "split",
    "bad-copy",
    "wrapper",
    "second-lib",
    "delta",
    "stale-target",
    "target-link",
    "owner",
    "second-archive",
)
AR_EXCLUSIVE = ({"split", "bad-copy"}, {"stale-target", "target-link"})
AR_TRAPS = {
    "split": ("the archive arrived in pieces", ("split", "pieces", "chunks", "part", "parts")),
    "bad-copy": (
        "the copy under the archive's name is damaged; a good one was sent again",
        ("checksum", "SHA256SUMS", "corrupt", "corrupted", "damaged", "resent", "retry"),
    ),
    "wrapper": (
        "every member sits under one leading folder",
        ("strip-components", "leading folder", "wrapper", "wrapped"),
    ),
    "delta": (
        "a later archive changes files and deletes some",
        ("delta", "incremental", "REMOVED", "deleted", "removed", "update"),
    ),
    "stale-target": (
        "the target holds a failed earlier restore",
        ("leftover", "leftovers", "earlier", "previous", "stale", "already exists"),
    ),
    "target-link": (
        "the target path is a symbolic link to an old restore",
        ("symbolic link", "symlink", "link"),
    ),
    "second-archive": (
        "one selected folder ships in an archive of its own",
        ("second archive", "separate archive", "two archives", "another archive"),
    ),
}
#: Every hard task: members with a `..` name, in the export and in a vendored library.
AR_UNSAFE_TRAP = Trap(
    "members with unsafe names that would land outside the target",
    ("unsafe", "traversal", "absolute path", "escape"),
)
TAR_FMTS = ["tar.gz", "tgz", "tar.xz", "tar.bz2"]
TAR_FLAG = {"tar.gz": "z", "tgz": "z", "tar.xz": "J", "tar.bz2": "j"}


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
            return self._hard(rng)
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
        stem = f"{proj}-{rng.choice(['export', 'snapshot', 'bundle', 'dump', 'handover'])}-{day_text(stamp)}"
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
        tops = rng.sample(self.filled("folders", TOPS), {"easy": 4, "medium": 5}[level])
        n_rules = 1 if level == "easy" else 2
        rules = [[d, e] for d, e in zip(tops[:n_rules], rng.sample(EXTS, n_rules), strict=True)]
        members: dict[str, Entry] = {}
        modes = [0o644]

        def fname(ext: str) -> str:
            word = rng.choice(FWORDS)
            tail = rng.choice(["", f"-{rng.randint(1, 99)}", f"_{rng.choice(SUBS)}", "-final"])
            return f"{word}{tail}.{ext}"

        def add(path: str) -> None:
            if path in members or any(
                p == path or p.startswith(path + "/") or path.startswith(p + "/") for p in members
            ):
                return
            body = f"# {proj}: {path}\n" + words_text(rng, rng.randint(2, 30), WORDS)
            members[path] = Entry(
                path,
                data=body.encode(),
                mode=rng.choice(modes),
                mtime=stamp - rng.randint(1, 400) * DAY - 2 * rng.randint(0, 40000),
            )

        def subdir(depth: int) -> str:
            return "".join(s + "/" for s in rng.sample(SUBS, depth))

        for _ in range({"easy": 18, "medium": 26}[level]):
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
                body = f"/* {lib}: {rel} */\n" + words_text(rng, rng.randint(2, 12), WORDS)
                nested_entries.append(
                    Entry(
                        rel,
                        data=body.encode(),
                        mode=rng.choice(modes),
                        mtime=stamp - rng.randint(500, 900) * DAY - 2 * rng.randint(0, 40000),
                    )
                )

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
            dirs = sorted({posixpath.dirname(e.path) for e in entries if ".." not in e.path} - {""})
            dirs = sorted(
                {"/".join(d.split("/")[: i + 1]) for d in dirs for i in range(len(d.split("/")))}
            )
            entries = [Entry(d, "dir", mode=0o755, mtime=stamp) for d in dirs] + entries
        blob = archive_bytes(entries, fmt)

        expected = {}
        for p, e in members.items():
            if any(p.startswith(d + "/") and p.endswith("." + x) for d, x in rules):
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

    @staticmethod
    def _draw_faults(rng) -> list[str]:
        """Two to four faults of :data:`AR_FAULTS`, never two of one exclusive group."""
        want = rng.choice([2, 3, 3, 4])
        faults: list[str] = []
        for fault in rng.sample(AR_FAULTS, len(AR_FAULTS)):
            if len(faults) < want and not any(
                fault in group and group & set(faults) for group in AR_EXCLUSIVE
            ):
                faults.append(fault)
        return sorted(faults)

    def _hard(self, rng) -> Draft:
        """Restore selected files of an export from a delivery folder that composes faults of
        :data:`AR_FAULTS`; the reference is the commands a person types for these faults."""
        faults = self._draw_faults(rng)
        proj = self.filled("project", None) or rng.choice(PROJECTS)
        fmt = rng.choice(TAR_FMTS)
        stamp = EPOCH_2022 + rng.randint(0, 900) * DAY
        stem = f"{proj}-{rng.choice(['export', 'snapshot', 'bundle', 'dump', 'handover'])}-{day_text(stamp)}"
        name = f"{stem}.{fmt}"
        workdir = f"{rng.choice(['/srv/incoming', '/var/tmp/uploads', '/data/inbox', '/opt/drop'])}/{stem}"
        target = rng.choice(
            [
                f"/opt/{proj}/restore",
                f"/srv/{proj}/extracted",
                f"/var/lib/{proj}/import",
                f"/data/{proj}/selected",
            ]
        )
        tops = rng.sample(self.filled("folders", TOPS), 6)
        rules = [[d, e] for d, e in zip(tops[:2], rng.sample(EXTS, 2), strict=True)]
        modes = [0o644, 0o640, 0o600, 0o755, 0o664, 0o750]
        members: dict[str, Entry] = {}
        taken: set[str] = set()

        def free(path: str) -> bool:
            return not any(
                p == path or p.startswith(path + "/") or path.startswith(p + "/") for p in taken
            )

        def fname(ext: str) -> str:
            word = rng.choice(FWORDS)
            tail = rng.choice(["", f"-{rng.randint(1, 99)}", f"_{rng.choice(SUBS)}", "-final"])
            return f"{word}{tail}.{ext}"

        def body(path: str, lines: int) -> bytes:
            return (f"# {proj}: {path}\n" + words_text(rng, lines, WORDS)).encode()

        def add(path: str) -> None:
            if not free(path):
                return
            taken.add(path)
            members[path] = Entry(
                path,
                data=body(path, rng.randint(2, 30)),
                mode=rng.choice(modes),
                mtime=stamp - rng.randint(1, 400) * DAY - 2 * rng.randint(0, 40000),
            )

        def subdir(depth: int) -> str:
            return "".join(s + "/" for s in rng.sample(SUBS, depth))

        for _ in range(34):
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

        def selected(path: str) -> bool:
            return any(path.startswith(d + "/") and path.endswith("." + e) for d, e in rules)

        wrapper = "wrapper" in faults
        pre = f"{stem}/" if wrapper else ""
        landings: list[str] = []

        def unsafe(base: str, at: str, ext: str) -> Entry:
            """A member named ``base`` + enough ``../`` to climb from ``at`` (where it would
            be extracted) to the root, then a path outside the target."""
            landing = f"{rng.choice(LANDINGS)}/{rng.choice(FWORDS)}-{rng.randint(10, 99)}.{ext}"
            ups = len(at.strip("/").split("/")) + base.count("/")
            rel = base + "../" * ups + landing.lstrip("/")
            assert posixpath.normpath(posixpath.join(at, rel)) == landing
            landings.append(landing)
            return Entry(rel, data=b"#!/bin/sh\necho pwned\n", mode=0o755, mtime=stamp)

        # the vendored libraries, each with a member that climbs out of its folder
        vendor = rng.choice([v for v in VENDOR_DIRS if v not in tops])
        libs = []
        expected: dict[str, list] = {}
        for lib in rng.sample(LIBS, 2 if "second-lib" in faults else 1):
            lfmt = rng.choice(TAR_FMTS)
            dest = f"{vendor}/{lib}"
            inner = ["README.md", "LICENSE", f"include/{lib}.h"]
            inner += [f"src/{w}.c" for w in rng.sample(WORDS, rng.randint(2, 4))]
            inner += [f"cmake/{rng.choice(WORDS)}.cmake"]
            lib_entries = []
            for rel in inner:
                e = Entry(
                    rel,
                    data=(
                        f"/* {lib}: {rel} */\n" + words_text(rng, rng.randint(2, 12), WORDS)
                    ).encode(),
                    mode=rng.choice(modes),
                    mtime=stamp - rng.randint(500, 900) * DAY - 2 * rng.randint(0, 40000),
                )
                lib_entries.append(e)
                expected[f"{dest}/{rel}"] = [sha256_hex(e.data), oct(e.mode), e.mtime]
            bad = unsafe("", f"{target}/{dest}", "sh")
            lib_entries.insert(rng.randint(1, len(lib_entries) - 1), bad)
            libs.append(
                {
                    "member": f"{pre}{vendor}/{lib}-{rng.randint(1, 4)}.{rng.randint(0, 12)}.{lfmt}",
                    "dest": dest,
                    "flag": TAR_FLAG[lfmt],
                    "blob": archive_bytes(lib_entries, lfmt),
                }
            )
        outer_bad = unsafe(f"{rules[0][0]}/", target, rules[0][1])

        # what the export holds now: the selected members, then the delta applied
        state = {p: e for p, e in members.items() if selected(p)}
        delta_entries: dict[str, Entry] = {}
        removed: list[str] = []
        later = stamp + rng.randint(2, 20) * DAY
        if "delta" in faults:
            for d, ext in rules:
                mine = sorted(p for p in state if p.startswith(d + "/"))
                for p in rng.sample(mine, 1):
                    delta_entries[p] = Entry(
                        p,
                        data=body(p, rng.randint(2, 30)),
                        mode=state[p].mode,
                        mtime=later - rng.randint(0, 40000),
                    )
                for _ in range(5):
                    new = f"{d}/{subdir(rng.choice([0, 1]))}{fname(ext)}"
                    if free(new):
                        taken.add(new)
                        delta_entries[new] = Entry(
                            new,
                            data=body(new, rng.randint(2, 20)),
                            mode=rng.choice(modes),
                            mtime=later - rng.randint(0, 40000),
                        )
                        break
            unselected = sorted(p for p in members if not selected(p))
            for p in rng.sample(unselected, 2):
                delta_entries[p] = Entry(p, data=body(p, 4), mode=members[p].mode, mtime=later)
            pool = sorted(p for p in state if p not in delta_entries)
            removed = sorted(
                rng.sample(pool, 2)
                + rng.sample([p for p in unselected if p not in delta_entries], 1)
            )
            state.update({p: e for p, e in delta_entries.items() if selected(p)})
            for p in removed:
                state.pop(p, None)
        for p, e in state.items():
            expected[p] = [sha256_hex(e.data), oct(e.mode), e.mtime]

        def tar_of(items: list[Entry], fmt_: str, extra: list[Entry] = ()) -> bytes:
            names = sorted({posixpath.dirname(e.path) for e in items} - {""})
            dirs = sorted(
                {"/".join(d.split("/")[: i + 1]) for d in names for i in range(len(d.split("/")))}
            )
            order = list(items)
            rng.shuffle(order)
            for e in extra:
                order.insert(rng.randint(1, len(order) - 1), e)
            every = [Entry(d, "dir", mode=0o755, mtime=stamp) for d in dirs] + order
            return archive_bytes([self._moved(e, pre) for e in every], fmt_)

        second = None
        d2 = rules[1][0]
        in_second = (
            {p for p in members if p.startswith(d2 + "/")} if "second-archive" in faults else set()
        )
        lib_members = [
            Entry(lib["member"][len(pre) :], data=lib["blob"], mtime=stamp - 3 * DAY)
            for lib in libs
        ]
        outer_items = [members[p] for p in sorted(members) if p not in in_second] + lib_members
        blob = tar_of(outer_items, fmt, [outer_bad])
        delivery: dict[str, bytes] = {}
        if in_second:
            fmt2 = rng.choice(TAR_FMTS)
            second = {"name": f"{stem}-{d2}.{fmt2}", "rules": [rules[1]]}
            delivery[second["name"]] = tar_of([members[p] for p in sorted(in_second)], fmt2)
        delta = None
        if delta_entries:
            fmtd = rng.choice(TAR_FMTS)
            delta = {"name": f"{stem}-delta-{day_text(later)}.{fmtd}", "removed": f"{pre}REMOVED"}
            note = Entry("REMOVED", data="".join(p + "\n" for p in removed).encode(), mtime=later)
            delivery[delta["name"]] = tar_of([*delta_entries.values(), note], fmtd)
        main = f"{workdir}/{name}"
        unfixed_main = main
        sums = {}
        if "split" in faults:
            cut = sorted(rng.sample(range(1, len(blob)), 2))
            bounds = [0, *cut, len(blob)]
            for i, tag in enumerate(["aa", "ab", "ac"]):
                delivery[f"{name}.part-{tag}"] = blob[bounds[i] : bounds[i + 1]]
            main, unfixed_main = f"/tmp/{name}", f"{workdir}/{name}.part-aa"
        elif "bad-copy" in faults:
            victim = rng.choice(
                sorted(
                    p
                    for p in state
                    if p in members and p not in delta_entries and p not in in_second
                )
            )
            data = bytearray(members[victim].data)
            at = rng.randrange(len(f"# {proj}: {victim}\n"), len(data) - 1)
            data[at] = data[at] ^ 0x20 if chr(data[at]).isalpha() else ord("x")
            broken = {
                **members,
                victim: Entry(
                    victim, data=bytes(data), mode=members[victim].mode, mtime=members[victim].mtime
                ),
            }
            items = [broken[p] for p in sorted(broken) if p not in in_second] + lib_members
            delivery[name] = tar_of(items, fmt, [outer_bad])
            delivery[f"retry/{name}"] = blob
            sums[name] = sha256_hex(blob)
            main = f"{workdir}/retry/{name}"
        else:
            delivery[name] = blob
        for rel, data in delivery.items():
            if "/" not in rel:
                sums.setdefault(rel, sha256_hex(data))
        delivery["SHA256SUMS"] = "".join(f"{h}  {n}\n" for n, h in sorted(sums.items())).encode()

        # what is already at the target path
        seeded: list[Entry] = []
        old = None
        old_files: list[str] = []
        if "stale-target" in faults:
            seeded.append(Entry(target, "dir", mode=0o755, mtime=stamp))
            picks = rng.sample(sorted(p for p in members if not selected(p)), 2)
            truncated = rng.choice(sorted(expected))
            for p in picks:
                seeded.append(Entry(f"{target}/{p}", data=members[p].data, mode=0o644, mtime=stamp))
            seeded.append(
                Entry(f"{target}/{truncated}", data=b"# partial\n", mode=0o644, mtime=stamp)
            )
        if "target-link" in faults:
            old = f"/var/backups/{proj}-restore-{day_text(stamp - rng.randint(30, 200) * DAY)}"
            seeded.append(Entry(old, "dir", mode=0o755, mtime=stamp))
            for p in rng.sample(sorted(p for p in members if selected(p)), 3):
                seeded.append(
                    Entry(f"{old}/{p}", data=body(p, 3), mode=0o644, mtime=stamp - 40 * DAY)
                )
                old_files.append(p)
            seeded.append(Entry(target, "symlink", target=old, mtime=stamp))
        if seeded:
            paths = [e.path for e in seeded]
            roots = sorted({posixpath.dirname(target)} | ({old} if old else set()))
            dirs = sorted({d for r in roots for d in dirs_of(paths, r)} - set(paths))
            seeded = [Entry(d, "dir", mode=0o755, mtime=stamp) for d in dirs] + seeded
        svc = f"{proj}-svc" if "owner" in faults else None
        svc_id = 1500 + rng.randint(0, 400)

        kept = {f"{workdir}/{rel}": sha256_hex(data) for rel, data in sorted(delivery.items())}
        snapshots = {
            "target.tree": tree_lines(target),
            "landed.list": present_lines(landings),
            "target.stat": stat_lines([target]),
        }
        if svc:
            snapshots["owner.list"] = f"find {shlex_quote(target)} -exec stat -c '%u %g %n' {{}} +"
        if old:
            snapshots["old.tree"] = tree_lines(old)
        context = {
            "mode": "extract",
            "hard": True,
            "preserve": True,
            "faults": faults,
            "proj": proj,
            "stem": stem,
            "workdir": workdir,
            "target": target,
            "rules": rules,
            "main_rules": [r for r in rules if not (second and r in second["rules"])],
            "pre": pre,
            "main": main,
            "unfixed_main": unfixed_main,
            "name": name,
            "libs": [{k: v for k, v in lib.items() if k != "blob"} for lib in libs],
            "second": second,
            "delta": delta,
            "svc": svc,
            "svc_id": svc_id,
            "old": old,
            "old_files": sorted(old_files),
            "old_mtime": stamp - 40 * DAY,
            "stale": "stale-target" in faults,
            "seeded": bool(seeded),
            "landings": landings,
            "expected": dict(sorted(expected.items())),
            "kept": kept,
            "state_dir": STATE_DIR,
        }
        solve = self.template("solution/solve.sh.j2")
        files = {f"environment/delivery/{rel}": data for rel, data in delivery.items()}
        if seeded:
            files["environment/seed.tar.gz"] = seed_tarball(seeded)
        traps = [Trap(*AR_TRAPS[f]) for f in faults if f in AR_TRAPS] + [AR_UNSAFE_TRAP]
        return Draft(
            context=context,
            files=files,
            outputs=[target + "/"],
            separate_verifier=True,
            kept=sorted(kept),
            artifacts=[STATE_DIR],
            collect=[snapshot_hook(snapshots)],
            mutations={
                f"unfixed-{f}": solve.render(**context, variant=f"unfixed-{f}") for f in faults
            },
            faults=faults,
            traps=traps,
            agent_timeout_sec=900.0,
            tags=["tar", "extract", "path-traversal", "restore"],
        )

    @staticmethod
    def _moved(e: Entry, pre: str) -> Entry:
        """``e`` under the leading folder ``pre`` (an export packed inside one folder)."""
        if not pre:
            return e
        return Entry(pre + e.path, e.kind, e.data, e.mode, e.mtime, e.user, e.uid, e.target)

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
