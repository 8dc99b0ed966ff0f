"""disk-cleanup: free disk space by a retention policy (old releases, rotated logs, caches,
duplicates) without touching what must stay."""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, register
from factory.families.slots import Slots, Slug, Word
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.seed_tree import (
    DAY,
    EPOCH_2022,
    Entry,
    compressed,
    day_text,
    dirs_rel,
    inode_data,
    seed_tarball,
    sha256_hex,
    utc_text,
    words_text,
)
from factory.families.terminal.state_snapshot import snapshot_path, tree_hook
from factory.families.terminal.traps import load_traps, traps_for
from factory.families.terminal.words import CLEAN_APPS, FWORDS, WORDS, WordTable
from factory.vocabulary import Difficulty

SERVICES = ["api", "worker", "ingest", "auth", "web", "cron", "mailer", "gateway", "billing"]
_WORDS = WordTable(Path(__file__).parent / "words.toml")
CORE_LOOKALIKES: list[str] = _WORDS["core_lookalikes"]
EXPORT_KINDS = ["sales", "usage", "audit", "invoices", "traffic", "payouts"]
UPLOAD_DIRS = ["avatars", "docs", "inbox", "scans", "attachments", "imports"]
REPORT_KINDS = ["summary", "usage", "billing", "capacity", "uptime", "quota"]

#: Hard: the sub-problems a task composes (two to four of them), besides the base rules
#: (releases, core dumps, rotated logs, cache) and protections (keep-list, cut-off).
DC_FAULTS = [
    "rolled-back",  # `current` points to an older release, which must stay
    "dedupe",  # duplicate uploads to replace by hard links (announced rule)
    "budget",  # exports to delete, oldest first, just until under the budget (announced rule)
    "trash",  # a trash folder to empty; some of what it holds are dot files a glob skips
    "debug-logging",  # debug logging left on: a setting to turn back, a live log to empty in place
    "archive-reports",  # a past year's reports to pack into an archive on another disk, then delete
    "logrotate",  # the log rotation policy that filled the disk: keeps too many, uncompressed
]
#: The unannounced ones: what each is, and the words that would give it away (traps.toml).
DC_TRAPS = load_traps(Path(__file__).parent / "traps.toml", DC_FAULTS)


def _blob(rng, size: int) -> bytes:
    """``size`` bytes, compressible but unique to this call."""
    chunk = rng.randbytes(64) + b"\n" + " ".join(rng.sample(WORDS, 12)).encode() + b"\n"
    return (chunk * (size // len(chunk) + 1))[:size]


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.search(r"(\d+)\.(\d+)\.(\d+)$", name).groups())


class CleanupSlots(Slots):
    """An application's data folder that has grown too large: the application's name and
    what the files it stores are called."""

    app: Slug = Field(description="the application's short name", examples=["ferry-desk"])
    file_words: list[Word] = Field(
        min_length=6,
        max_length=8,
        description="one-word names of the files it stores (uploads, databases)",
        examples=[["ticket", "timetable", "manifest", "receipt", "route", "crew"]],
    )


@register
class DiskCleanup(Family):
    """A service tree over its disk budget: old releases, core dumps, rotated logs and cache
    to delete under keep-list protection. Versions cross 9 -> 10 so name order lies, and
    `core.*` look-alikes punish greedy globs. Medium adds an mtime cut-off protection and a
    rolled-back `current` release; hard adds hard links shared between releases, an old release
    rebuilt recently and a cache whose directory structure must survive, and composes two to
    four sub-problems of :data:`DC_FAULTS` (a rolled-back `current`, deduplication of uploads
    by hard links, a budget-driven last step deleting the oldest exports just until under
    budget, a trash to empty, debug logging to turn off with its live log emptied in place, a
    year of reports to archive on another disk, a log rotation policy to repair). Each has an
    ``unfixed-<fault>`` near miss; the reference is the commands for the task's own rules."""

    name = "disk-cleanup"
    title = "Free disk space under a budget while honouring protection rules"
    category = "system-administration"
    slots = CleanupSlots

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        faults = sorted(rng.sample(DC_FAULTS, rng.randint(2, 4))) if hard else []
        app = self.filled("app", None) or rng.choice(CLEAN_APPS)
        fwords = self.filled("file_words", FWORDS)
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
        if level == "medium" or "rolled-back" in faults:
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
        settings = f"etc/{app}.yaml"
        add(settings, words_text(rng, 6, WORDS).encode(), old_time())
        add(f"data/{rng.choice(fwords)}.db", _blob(rng, rng.randint(8000, 30000)), now - 3600)

        # logs
        rotated = []
        services = rng.sample(SERVICES, {"easy": 2, "medium": 3, "hard": 4}[level])
        for svc in services:
            add(f"logs/{svc}.log", words_text(rng, rng.randint(30, 200), WORDS).encode(), now - 60)
            step = rng.randint(2, 6) * DAY
            for i in range(1, rng.randint(3, 5)):
                text = words_text(rng, rng.randint(40, 250), WORDS).encode()
                name = f"logs/{svc}.log.{i}" + (".gz" if i > 1 else "")
                add(
                    name,
                    compressed(text, "gz") if i > 1 else text,
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
                rel = f"uploads/{rng.choice(subdirs)}/{rng.choice(fwords)}-{rng.randint(100, 999)}.{rng.choice(['pdf', 'png', 'jpg', 'docx'])}"
                if rel not in nodes:
                    uploads.append(rel)
                    add(rel, data, now - rng.randint(1, 90) * DAY)

        # exports (budget-driven at hard)
        exports = []
        if "budget" in faults:
            days = rng.sample(range(1, 200), rng.randint(6, 8))
            for d in days:
                stamp = now - d * DAY - rng.randint(0, 86399)
                rel = f"exports/{rng.choice(EXPORT_KINDS)}-{day_text(stamp)}.csv.gz"
                if rel not in nodes:
                    exports.append(rel)
                    add(rel, _blob(rng, rng.randint(15000, 50000)), stamp)
            # The budget needs at least three exports to choose from after the oldest goes on
            # the keep-list: a draw with fewer older than the cut-off (or whose names collided)
            # gets older ones added. Only such draws take more from rng: the others stay as they were.
            while sum(cutoff is None or nodes[r].mtime < cutoff for r in exports) < 4:
                stamp = (cutoff or now) - rng.randint(1, 60) * DAY - rng.randint(0, 86399)
                rel = f"exports/{rng.choice(EXPORT_KINDS)}-{day_text(stamp)}.csv.gz"
                if rel not in nodes:
                    exports.append(rel)
                    add(rel, _blob(rng, rng.randint(15000, 50000)), stamp)

        # hard sub-problems beyond the base rules
        final: dict[str, bytes] = {}  # rel path -> the contents it must end with (edited files)
        trash: list[str] = []
        if "trash" in faults:  # deleted uploads waiting to be purged, dot files among them
            for _ in range(rng.randint(3, 5)):
                name = f"{rng.choice(fwords)}-{rng.randint(100, 999)}.{rng.choice(['pdf', 'png', 'docx'])}"
                trash.append(f".trash/{name}")
            trash.append(f".trash/.{rng.choice(fwords)}-{rng.randint(100, 999)}.partial")
            trash.append(f".trash/.~lock.{rng.choice(fwords)}-{rng.randint(100, 999)}.docx#")
            trash.append(
                f".trash/.{rng.choice(['thumbs', 'previews', 'versions'])}/{rng.getrandbits(64):016x}"
            )
            trash = sorted(set(trash))
            for rel in trash:
                add(rel, _blob(rng, rng.randint(3000, 20000)), old_time())
        noisy = None
        if "debug-logging" in faults:  # debug logging left on: one live log grew large
            text = nodes[settings].data.decode()
            nodes[settings].data = f"log_level: debug\n{text}".encode()
            final[settings] = f"log_level: info\n{text}".encode()
            noisy = f"logs/{services[0]}.log"
            nodes[noisy].data = words_text(rng, rng.randint(3000, 6000), WORDS).encode()
            final[noisy] = b""
        reports: list[str] = []
        archive = None
        # the last full year before the cut-off (every report of it is older than the cut-off)
        year = int(day_text(cutoff or now)[:4]) - 1
        if "archive-reports" in faults:  # monthly reports: a past year's go to another disk
            kind = rng.choice(REPORT_KINDS)
            y, m = year, 1
            while (y, m) < (int(day_text(now)[:4]), int(day_text(now)[5:7])):
                # written in the last hour of its month
                stamp = calendar.timegm((y + (m == 12), m % 12 + 1, 1, 0, 0, 0)) - 3600
                rel = f"reports/{kind}-{y}-{m:02d}.csv"
                add(rel, words_text(rng, rng.randint(20, 80), WORDS).encode(), stamp)
                if y == year:
                    reports.append(rel)
                y, m = y + (m == 12), m % 12 + 1
            archive = f"/mnt/archive/{app}/reports-{year}.tar.gz"

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

        def size(rel: str) -> int:
            return len(final.get(rel, nodes[rel].data))

        def total(paths) -> int:
            seen = {inode[p] for p in paths}
            return sum(size(c) for c in seen)

        remaining = [
            r
            for r in nodes
            if not any(r.startswith(f"releases/{d}/") for d in deleted_releases)
            and not (deletable(r) and not protected(r))
            and r not in trash
            and r not in reports
        ]
        dedupe = []
        if "dedupe" in faults:
            by_content: dict[bytes, list[str]] = {}
            for rel in uploads:
                by_content.setdefault(nodes[rel].data, []).append(rel)
            for group in by_content.values():
                if len(group) > 1:
                    group.sort()
                    dedupe.append(group)
                    for rel in group[1:]:
                        inode[rel] = group[0]
        removed_exports: list[str] = []
        if "budget" in faults:
            # the export that would go first is on the keep-list
            first = min((r for r in exports if not protected(r)), key=lambda r: nodes[r].mtime)
            keep.append(first)
            candidates = sorted(
                (r for r in exports if not protected(r)), key=lambda r: nodes[r].mtime
            )
            assert len(candidates) >= 3, candidates
            totals = [total(remaining)]
            for rel in candidates:
                totals.append(totals[-1] - size(rel))
            k = rng.randint(2, len(candidates) - 1)
            gap = totals[k - 1] - totals[k]
            budget = totals[k] + rng.randint(0, min(gap - 1, 4096))
            removed_exports = candidates[:k]
            remaining = [r for r in remaining if r not in removed_exports]
        else:
            before = total(list(nodes))
            budget = total(remaining) + rng.randint(0, (before - total(remaining)) // 8)
        assert total(remaining) <= budget

        rotation = None
        if "logrotate" in faults:  # the policy that let the logs pile up
            keep_rot = rng.randint(3, 8)
            rotation = {
                "conf": f"/etc/logrotate.d/{app}",
                "pattern": f"{root}/logs/*.log",
                "rotate": keep_rot,
                "bad": rng.choice([90, 180, 365, 400, 1000]),
                "period": rng.choice(["daily", "weekly"]),
            }

        entries = [
            Entry(f"{root}/{d}", "dir", mode=0o755, mtime=now - DAY)
            for d in dirs_rel(nodes, empty_dirs)
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
        if rotation:
            body = (
                f"{rotation['pattern']} {{\n    {rotation['period']}\n    missingok\n"
                f"    rotate {rotation['bad']}\n    nocompress\n    notifempty\n"
                f"    create 0640 root root\n}}\n"
            )
            entries.append(Entry(rotation["conf"], data=body.encode(), mtime=now - 200 * DAY))

        expected = {
            r: sha256_hex(final.get(r, nodes[inode_data(nodes, r)].data)) for r in sorted(remaining)
        }

        def protected_now(rel: str) -> bool:  # by the cut-off alone (the keep-list aside)
            return cutoff is not None and nodes[rel].mtime >= cutoff

        context = {
            "app": app,
            "root": root,
            "keep_list": keep_list,
            "keep_n": keep_n,
            "cutoff": cutoff,
            "cutoff_utc": utc_text(cutoff) if cutoff else None,
            "hard": hard,
            "budget": budget,
            "current": f"releases/{current}",
            "expected": expected,
            "gone": [f"releases/{r}" for r in deleted_releases],
            "cache_dirs": cache_dirs if hard else ["cache"],
            "dedupe": dedupe,
            "snapshot": snapshot_path("tree.json"),
            "faults": faults,
        }
        outputs = [root + "/"]
        mutations = {}
        if hard:
            lexical = set(sorted(releases)[-keep_n:]) | {current}
            context.update(
                {
                    "releases": sorted(deleted_releases, key=_version_key),
                    "lexical_releases": sorted(
                        (r for r in releases if r not in lexical), key=_version_key
                    ),
                    "cores": sorted(r for r in cores if not protected(r)),
                    "cores_unkept": sorted(r for r in cores if not protected_now(r)),
                    "lookalikes": sorted(r for r in nodes if r in CORE_LOOKALIKES),
                    "rotated": sorted(r for r in rotated if not protected(r)),
                    "rotated_unkept": sorted(r for r in rotated if not protected_now(r)),
                    "cache_keep": sorted(r for r in keep if r.startswith("cache/")),
                    "trash": trash,
                    "settings": settings,
                    "noisy": noisy,
                    "year": year,
                    "reports": reports,
                    "archive": archive,
                    "archive_members": {r: sha256_hex(nodes[r].data) for r in reports},
                    "rotation": rotation,
                    "removed_exports": removed_exports,
                }
            )
            if archive:
                outputs.append(archive)
            mutations = near_misses(self, context, faults, key="variant", value="unfixed-{}")
        return Draft(
            context=context,
            files={"environment/seed.tar.gz": seed_tarball(entries)},
            outputs=outputs,
            # Hard links (inode numbers) and links out of the tree do not survive the copy to
            # the verifier's container: a hook snapshots the tree in the agent's (and the text
            # of the log rotation policy, outside it).
            separate_verifier=True,
            artifacts=[snapshot_path("tree.json")],
            collect=[tree_hook("tree.json", [root], [], [rotation["conf"]] if rotation else [])],
            tags=["disk-usage", "find", "retention"]
            + (["hard-links", "dedupe"] if "dedupe" in faults else [])
            + (["logrotate"] if rotation else [])
            + (["tar"] if archive else []),
            faults=faults,
            traps=traps_for(DC_TRAPS, faults),
            mutations=mutations,
        )
