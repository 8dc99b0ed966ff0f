"""archives at hard: a restore from a delivery folder composed from a fault grammar
(:data:`AR_FAULTS`, two to four of them, the instruction stating the goal only), with the
reference commands for the task's faults and an unfixed-<fault> near miss for each."""

from __future__ import annotations

import posixpath
from pathlib import Path
from shlex import quote as shlex_quote

from factory.families.base import Draft, Family, Trap
from factory.families.terminal.archives.export import (
    DROP_DIRS,
    EXPORT_KINDS,
    Export,
    folders_of,
    restore_targets,
)
from factory.families.terminal.archives.words import (
    LANDINGS,
    LIBS,
    PROJECTS,
    TAR_FLAG,
    TAR_FMTS,
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
)
from factory.families.terminal.state_snapshot import (
    STATE_DIR,
    present_lines,
    snapshot_hook,
    stat_lines,
    tree_lines,
)
from factory.families.terminal.traps import load_traps, traps_for
from factory.families.terminal.words import FWORDS

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
AR_TRAPS = load_traps(Path(__file__).parent / "traps.toml", AR_FAULTS)
"""The faults the instruction does not name: fault -> Trap fields (traps.toml)."""
#: Every hard task: members with a `..` name, in the export and in a vendored library.
AR_UNSAFE_TRAP = Trap(
    "members with unsafe names that would land outside the target",
    ("unsafe", "traversal", "absolute path", "escape"),
)


def draw_faults(rng) -> list[str]:
    """Two to four faults of :data:`AR_FAULTS`, never two of one exclusive group."""
    want = rng.choice([2, 3, 3, 4])
    faults: list[str] = []
    for fault in rng.sample(AR_FAULTS, len(AR_FAULTS)):
        if len(faults) < want and not any(
            fault in group and group & set(faults) for group in AR_EXCLUSIVE
        ):
            faults.append(fault)
    return sorted(faults)


def hard_draft(family: Family, rng) -> Draft:
    """Restore selected files of an export from a delivery folder that composes faults of
    :data:`AR_FAULTS`; the reference is the commands a person types for these faults."""
    faults = draw_faults(rng)
    proj = family.filled("project", None) or rng.choice(PROJECTS)
    fmt = rng.choice(TAR_FMTS)
    stamp = EPOCH_2022 + rng.randint(0, 900) * DAY
    stem = f"{proj}-{rng.choice(EXPORT_KINDS)}-{day_text(stamp)}"
    name = f"{stem}.{fmt}"
    workdir = f"{rng.choice(DROP_DIRS)}/{stem}"
    target = rng.choice(restore_targets(proj))
    tops = rng.sample(family.filled("folders", TOPS), 6)
    modes = [0o644, 0o640, 0o600, 0o755, 0o664, 0o750]
    export = Export(rng, proj, stamp, modes)
    export.draw(tops, 2, 34)
    members, rules, selected = export.members, export.rules, export.selected
    fname, subdir, body = export.fname, export.subdir, export.body

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
        lib_entries = export.library(lib)
        for e in lib_entries:
            expected[f"{dest}/{e.path}"] = [sha256_hex(e.data), oct(e.mode), e.mtime]
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
                if export.free(new):
                    export.taken.add(new)
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
            rng.sample(pool, 2) + rng.sample([p for p in unselected if p not in delta_entries], 1)
        )
        state.update({p: e for p, e in delta_entries.items() if selected(p)})
        for p in removed:
            state.pop(p, None)
    for p, e in state.items():
        expected[p] = [sha256_hex(e.data), oct(e.mode), e.mtime]

    def tar_of(items: list[Entry], fmt_: str, extra: list[Entry] = ()) -> bytes:
        dirs = folders_of(e.path for e in items)
        order = list(items)
        rng.shuffle(order)
        for e in extra:
            order.insert(rng.randint(1, len(order) - 1), e)
        every = [Entry(d, "dir", mode=0o755, mtime=stamp) for d in dirs] + order
        return archive_bytes([moved(e, pre) for e in every], fmt_)

    second = None
    d2 = rules[1][0]
    in_second = (
        {p for p in members if p.startswith(d2 + "/")} if "second-archive" in faults else set()
    )
    lib_members = [
        Entry(lib["member"][len(pre) :], data=lib["blob"], mtime=stamp - 3 * DAY) for lib in libs
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
                p for p in state if p in members and p not in delta_entries and p not in in_second
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
        seeded.append(Entry(f"{target}/{truncated}", data=b"# partial\n", mode=0o644, mtime=stamp))
    if "target-link" in faults:
        old = f"/var/backups/{proj}-restore-{day_text(stamp - rng.randint(30, 200) * DAY)}"
        seeded.append(Entry(old, "dir", mode=0o755, mtime=stamp))
        for p in rng.sample(sorted(p for p in members if selected(p)), 3):
            seeded.append(Entry(f"{old}/{p}", data=body(p, 3), mode=0o644, mtime=stamp - 40 * DAY))
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
    solve = family.template("solution/solve.sh.j2")
    files = {f"environment/delivery/{rel}": data for rel, data in delivery.items()}
    if seeded:
        files["environment/seed.tar.gz"] = seed_tarball(seeded)
    traps = traps_for(AR_TRAPS, faults) + [AR_UNSAFE_TRAP]
    return Draft(
        context=context,
        files=files,
        outputs=[target + "/"],
        separate_verifier=True,
        kept=sorted(kept),
        artifacts=[STATE_DIR],
        collect=[snapshot_hook(snapshots)],
        mutations={f"unfixed-{f}": solve.render(**context, variant=f"unfixed-{f}") for f in faults},
        faults=faults,
        traps=traps,
        agent_timeout_sec=900.0,
        tags=["tar", "extract", "path-traversal", "restore"],
    )


def moved(e: Entry, pre: str) -> Entry:
    """``e`` under the leading folder ``pre`` (an export packed inside one folder)."""
    if not pre:
        return e
    return Entry(pre + e.path, e.kind, e.data, e.mode, e.mtime, e.user, e.uid, e.target)
