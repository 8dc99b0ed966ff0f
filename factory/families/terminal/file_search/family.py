"""file-search: find the files that match a set of rules (names, sizes, times, contents) in a
large tree, past hidden folders, links and look-alikes, and report them exactly."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from factory.families.base import Draft, Family, Trap, register
from factory.families.slots import Slots, Slug, Word, not_system_account
from factory.families.terminal.file_search.snapshot import SNAPSHOT, snapshot_hook
from factory.families.terminal.seed_tree import (
    DAY,
    EPOCH_2022,
    Entry,
    dirs_of,
    seed_tarball,
    sha256_hex,
    utc_text,
)
from factory.families.terminal.traps import load_traps, traps_for
from factory.families.terminal.words import FWORDS, USERS, WORDS, WordTable
from factory.vocabulary import Difficulty

# --- file-search ---------------------------------------------------------------------------

SHARES = ["fileshare", "projects", "archive", "media", "teamdrive", "research", "exports", "scans"]
SEARCH_BASES = ["/srv", "/data", "/mnt/storage", "/home/shared"]
_WORDS = WordTable(Path(__file__).parent / "words.toml")
DIR_WORDS: list[str] = _WORDS["dir_words"]
SEARCH_EXTS = ["log", "csv", "txt", "json", "dat", "xml", "md", "cfg"]
EXCLUDE_DIRS = [".snapshot", "backup", "_archive", "old-copies", ".trash"]
WEIRD: list[str] = _WORDS["weird"]
MARKERS = ["CASE", "TICKET", "REF", "INC", "PRJ"]

#: Hard: besides the search and the move, two to four chores of tidying the share, each a goal
#: the instruction states; what makes each one tricky it does not say (the traps).
FS_CHORES = (
    "editor-junk",
    "dangling-links",
    "empty-dirs",
    "world-writable",
    "orphans",
    "group-dirs",
    "total-size",
    "largest",
)
FS_TRAPS = load_traps(Path(__file__).parent / "traps.toml", FS_CHORES)
"""What makes a chore tricky: chore -> Trap (traps.toml)."""
#: Every hard task: matches in hidden places, a link to a match, a link loop and one out of the
#: share, sizes just off whole KiB, names with blanks and quotes.
FS_SEARCH_TRAPS = (
    Trap("hidden matches", ("hidden", "dot files", "dotfiles")),
    Trap("links to a match, back up the tree and out of it", ("follow", "loop", "-L")),
    Trap("sizes a KiB-rounding search gets wrong", ("rounding", "rounded", "-size")),
    Trap("names with blanks, quotes and a leading dash", ("spaces", "quotes", "leading dash")),
)
ORPHAN_UID = 2999
"""The owner of the orphaned files: an account since removed (no passwd entry)."""


def _sized(rng, size: int, marker: str | None) -> bytes:
    """Text of exactly ``size`` bytes (cheap: a few random lines, repeated)."""
    lines = [" ".join(rng.sample(WORDS, rng.randint(4, 9))) + "\n" for _ in range(6)]
    body = "".join(lines[i % 6] for i in range(size // 20 + 8)).encode()
    if marker:
        at = rng.randint(0, max(0, min(size - len(marker) - 2, len(body))))
        body = body[:at] + f"\n{marker}\n".encode() + body[at:]
    return body[:size]


class SearchSlots(Slots):
    """A shared folder of a team's files: the share's name, the people who own files in it
    (their login names) and what the files are called."""

    share: Slug = Field(description="the shared folder's name", examples=["harbour-docs"])
    users: list[Slug] = Field(
        min_length=3,
        max_length=5,
        description="login names of the people who own files there",
        examples=[["marta", "oskar", "ilse"]],
    )
    file_words: list[Word] = Field(
        min_length=6,
        max_length=8,
        description="one-word names for the files",
        examples=[["timetable", "permit", "manifest", "invoice", "roster", "chart"]],
    )

    @field_validator("users")
    @classmethod
    def _new_accounts(cls, value: list[str]) -> list[str]:
        return [not_system_account(user) for user in value]


@register
class FileSearch(Family):
    """Find regular files by criteria in a generated tree, list them (relative, sorted),
    and (medium) copy or (hard) move them preserving structure and mtimes. Every level has
    size boundaries that `find -size Nk` rounding gets wrong, a symlink to a match, a hidden
    match and name look-alikes. Medium adds a size range, an mtime bound and an excluded
    subtree; hard adds owner and content criteria, odd file names, a symlink loop and a
    directory link leading out of the tree, none of which its instruction announces
    (:data:`FS_SEARCH_TRAPS`), and two to four chores of tidying the share once the matches
    are moved (:data:`FS_CHORES`: editors' leftovers, links the move breaks, folders it
    empties, modes, files of a removed account, setgid folders, the moved bytes, the largest
    file left), each with its own trap (:data:`FS_TRAPS`) and an unfixed-<chore> near miss."""

    name = "file-search"
    title = "Find files by name, size, time, owner and content; list, copy or move them"
    category = "file-management"
    slots = SearchSlots

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        share = self.filled("share", None) or rng.choice(SHARES)
        fwords = self.filled("file_words", FWORDS)
        root = f"{rng.choice(SEARCH_BASES)}/{share}"
        users = rng.sample(self.filled("users", USERS), 3)
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
            return f"{rng.choice(fwords)}{tail}.{e}"

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
                parent = posixpath.dirname(rel)
                if parent in files:  # a file already has the name this folder needs
                    parent = f"{posixpath.dirname(parent)}/{rng.randint(100, 999)}-{posixpath.basename(parent)}"
                    rel = f"{parent}/{posixpath.basename(rel)}".lstrip("/")
                else:
                    rel = f"{parent}/{rng.randint(100, 999)}-{posixpath.basename(rel)}".lstrip("/")
            elif any(d.startswith(rel + "/") for d in files):  # a folder has this file's name
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
        match(f"{where()}/{rng.choice(fwords)}_{ext}")
        match(f"{where()}/{rng.choice(fwords)}.{ext}/{rng.choice(fwords)}.txt")
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

        chores: list[str] = []
        empty: list[str] = []  # folders with nothing in them from the start
        dir_meta: dict[str, tuple[int, str, int]] = {}  # folder -> mode, user, uid
        if hard:
            want = rng.choice([2, 3, 3, 4])
            chores = sorted(rng.sample(FS_CHORES, want))

            def is_match(rel: str) -> bool:
                return self._matches(
                    rel, files[rel], ext, lo, hi, before, after, owner, marker, exclude
                )

            def others(k: int) -> list[str]:
                pool = sorted(r for r in files if not is_match(r) and "mode" not in files[r])
                pool = [r for r in pool if "uid" not in files[r] and r not in junk]
                return rng.sample(pool, k)

            junk: list[str] = []
            if "editor-junk" in chores:
                for rel in [
                    f"{where()}/{name()}~",
                    f"{where()}/.{name()}.swp",
                    f"{hidden_dir}/{rng.choice(fwords)}.txt.swp",
                ]:
                    junk.append(add(rel, rng.randint(200, 3000), now - DAY, rng.choice(users)))
                add(f"{where()}/{rng.choice(fwords)}.swp.txt", 900, now - DAY, users[1])
                add(f"{where()}/drafts~/{name(e='txt')}", 700, now - DAY, users[2])
            if "empty-dirs" in chores:
                lone = f"{rng.choice(dirs)}/{rng.choice(['inbox', 'scratch', 'staging'])}-{rng.randint(10, 99)}"
                match(f"{lone}/{name()}")
                empty.append(
                    f"{where()}/{rng.choice(['tmp', 'spare', 'unused'])}-{rng.randint(10, 99)}".lstrip(
                        "/"
                    )
                )
            if "dangling-links" in chores:
                stale = f"{where()}/{rng.choice(fwords)}-old.{ext}".lstrip("/")
                if stale not in files:
                    links[stale] = f"gone-{rng.randint(100, 999)}.{ext}"
            if "world-writable" in chores:
                for rel in others(3):
                    files[rel]["mode"] = rng.choice([0o666, 0o646, 0o662, 0o777])
            if "orphans" in chores:
                legacy = f"{rng.choice(dirs)}/legacy-{rng.randint(10, 99)}"
                kept = add(f"{legacy}/{name(e='txt')}", 1500, now - 90 * DAY, users[0])
                dir_meta[posixpath.dirname(kept)] = (0o755, "former", ORPHAN_UID)
                for rel in [kept, *others(2)]:
                    files[rel]["uid"] = ORPHAN_UID
            if "largest" in chores:
                biggest = max(len(f["data"]) for f in files.values())
                other_ext = rng.choice([e for e in SEARCH_EXTS if e != ext])
                big = add(
                    f"{rng.choice([hidden_dir, where()])}/{rng.choice(fwords)}-full.{other_ext}",
                    biggest + rng.randint(1000, 9000),
                    now - 5 * DAY,
                    rng.choice(users),
                )
                outside_files[f"{outside}/{rng.choice(fwords)}-all.{other_ext}"] = {
                    "data": _sized(rng, len(files[big]["data"]) + 20000, None),
                    "mtime": now,
                    "user": users[1],
                }

        expected = sorted(
            r
            for r in files
            if self._matches(r, files[r], ext, lo, hi, before, after, owner, marker, exclude)
        )
        all_dirs = dirs_of(
            [f"{root}/{r}" for r in [*files, *links, *(e + "/x" for e in empty)]], root
        )
        entries = []
        for d in all_dirs:
            mode, user, uid = dir_meta.get(posixpath.relpath(d, root), (0o755, "root", 0))
            entries.append(Entry(d, "dir", mode=mode, mtime=now - DAY, user=user, uid=uid))
        for rel, f in sorted(files.items()):
            entries.append(
                Entry(
                    f"{root}/{rel}",
                    data=f["data"],
                    mode=f.get("mode", 0o644),
                    mtime=f["mtime"],
                    user="former" if "uid" in f else f["user"],
                    uid=f.get("uid", uids[f["user"]]),
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
        context: dict[str, Any] = {}
        if hard:
            dangling, dirs_left = _after_move(
                chores, files, links, {posixpath.relpath(d, root) for d in all_dirs}, expected, junk
            )
            admin = users[2]
            context = {
                "chores": chores,
                "junk": sorted(junk),
                "dangling": dangling if "dangling-links" in chores else [],
                "dirs_left": dirs_left,
                "writable": {
                    r: oct(f["mode"] & ~0o002) for r, f in sorted(files.items()) if "mode" in f
                },
                "orphans": sorted(
                    [r for r, f in files.items() if "uid" in f]
                    + [d for d, (_, _, uid) in dir_meta.items() if uid == ORPHAN_UID]
                ),
                "orphan_uid": ORPHAN_UID,
                "admin": admin,
                "admin_uid": uids[admin],
                "total": sum(len(files[r]["data"]) for r in expected),
                **(
                    {"size_out": f"/root/{share}-moved-bytes.txt"} if "total-size" in chores else {}
                ),
                **({"largest_out": f"/root/{share}-largest.txt"} if "largest" in chores else {}),
                "outside": outside,
                "hard": True,
            }
            if "largest" in chores:
                context["biggest"] = big
        meta_files = [r for r in sorted(files) if r not in context.get("junk", [])]
        draft = Draft(
            context={
                **context,
                "root": root,
                "share": share,
                "users": [[u, uids[u]] for u in users],
                "ext": ext,
                "min_k": min_k,
                "lo": lo,
                "max_k": max_k,
                "hi": hi,
                "before": before,
                "before_utc": utc_text(before) if before else None,
                "after": after,
                "after_utc": utc_text(after) if after else None,
                "owner": owner,
                "marker": marker,
                "exclude": exclude,
                "action": action,
                "listing": listing,
                "dest": dest,
                "expected": expected,
                "meta": {r: [sha256_hex(files[r]["data"]), files[r]["mtime"]] for r in meta_files},
                "links": {r: t for r, t in links.items() if r not in context.get("dangling", [])},
                "snapshot": SNAPSHOT,
            },
            files={"environment/seed.tar.gz": seed_tarball(entries)},
            secrets=[posixpath.basename(r) for r in expected if " " not in r][:3],
            outputs=[listing]
            + ([dest + "/"] if action != "list" else [])
            + [context[k] for k in ("size_out", "largest_out") if k in context],
            separate_verifier=True,
            artifacts=[SNAPSHOT],
            collect=[snapshot_hook(root, dest, sorted({*files, *links}), everything=hard)],
            tags=["find", "search"] + {"list": [], "copy": ["copy"], "move": ["move"]}[action],
            **(self._hard_draft(chores) if hard else {}),
        )
        if hard:
            solve = self.template("solution/solve.sh.j2")
            draft.mutations = {
                f"unfixed-{c}": solve.render(**draft.context, variant=f"unfixed-{c}")
                for c in chores
            }
        return draft

    @staticmethod
    def _hard_draft(chores: list[str]) -> dict[str, Any]:
        traps = traps_for(FS_TRAPS, chores)
        return {
            "faults": chores,
            "traps": traps + list(FS_SEARCH_TRAPS),
            "agent_timeout_sec": 900.0,
        }

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


def _after_move(chores, files, links, dirs, expected, junk) -> tuple[list[str], list[str]]:
    """What the hard chores leave of the share once the matches (and the editors' leftovers,
    ``junk``, drawn only with that chore) are gone: the links that then point to nothing, and the folders
    (relative to the share, ``dirs``) that remain, emptied ones removed when a chore says so."""
    kept = {r for r in files if r not in {*expected, *junk}}

    def dangles(rel: str, target: str) -> bool:
        """Whether the link points to nothing once the matches are moved."""
        if target.startswith("/"):
            return False  # the mirror out of the share exists
        at = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        return at not in kept and at not in dirs

    dangling = sorted(r for r, t in links.items() if dangles(r, t))
    left_links = {r for r in links if not ("dangling-links" in chores and r in dangling)}
    dirs = dirs - {"."}
    if "empty-dirs" in chores:
        while True:
            full = {posixpath.dirname(p) for p in [*kept, *left_links, *dirs]}
            empty = {d for d in dirs if d not in full}
            if not empty:
                break
            dirs -= empty
    return dangling, sorted(dirs)
