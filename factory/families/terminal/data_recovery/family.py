"""data-recovery: rebuild a table from a damaged live file, a full backup and a chain of
incremental change logs, and prove it with checksums."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, Trap, register
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.seed_tree import (
    DAY,
    EPOCH_2022,
    Entry,
    compressed,
    seed_tarball,
    sha256_hex,
    tar_bytes,
    words_text,
)
from factory.families.terminal.state_snapshot import STATE_DIR, snapshot_hook, stat_lines
from factory.families.terminal.words import CLEAN_APPS, WORDS
from factory.vocabulary import Difficulty

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


#: Hard (config patches): the sub-problems a task composes (two to four of them), besides the
#: base (a torn live file, a chain of diffs crossing 9 -> 10, some gzipped, checked by SHA256SUMS).
DR_FAULTS = [
    "corrupt-full",  # the newest full backup fails its checksum: start from the older one
    "corrupt-diff",  # a diff of the chain fails its checksum: its offsite copy is intact
    "missing-diff",  # a diff of the chain is gone from the backup folder: only offsite has it
    "bundled-diffs",  # the newest diffs exist only inside a bundle tarball
    "owner",  # the file belongs to the service's account (as the full backups record)
    "mode",  # the file's permission bits in the backups differ from the stub's
    "second-file",  # a second file of the service was lost too: restore it from a full backup
]
#: The unannounced ones: what each is, and the words that would give it away.
DR_TRAPS = {
    "corrupt-full": (
        "the newest full backup fails its checksum",
        ("newest full backup", "latest full backup", "bit rot", "full backup is corrupt"),
    ),
    "corrupt-diff": (
        "a diff of the chain fails its checksum (the offsite copy is intact)",
        ("corrupted diff", "damaged diff", "bad diff", "bit rot"),
    ),
    "missing-diff": (
        "a diff of the chain is missing from the backup folder",
        ("missing diff", "gap", "missing from", "not in the backup folder"),
    ),
}
SERVICE_ACCOUNTS = ["svc", "app", "daemon-user", "runner", "service"]


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
    backups, some diffs gzipped, permission bits to restore. Hard (always this kind): the live
    file is a damaged stub, and two to four sub-problems of :data:`DR_FAULTS` are composed: the
    newest full backup or a diff fails its checksum (an offsite copy of the diff is intact), a
    diff is gone from the backup folder (only offsite), the newest diffs only in a bundle, an
    owner and permission bits to restore, a second lost file. Each has an ``unfixed-<fault>``
    near miss; the reference is the commands for the task's own sub-problems.

    changelog (easy and medium): a CSV table from a gzipped snapshot plus a rotated JSON-lines
    change log with non-idempotent ops (replaying the overlap double counts). Medium: other
    tables in the log, more rotations."""

    name = "data-recovery"
    title = "Recover a lost file from backups, incremental diffs or a rotated change log"
    category = "data-recovery"

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        # hard: always the config patches, with a grammar of sub-problems (DR_FAULTS)
        if difficulty is Difficulty.HARD or rng.random() < 0.5:
            return self._patches(rng, difficulty)
        return self._changelog(rng, difficulty)

    # patches -------------------------------------------------------------------------------

    def _patches(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        faults = sorted(rng.sample(DR_FAULTS, rng.randint(2, 4))) if hard else []
        app = rng.choice(CLEAN_APPS)
        conf = rng.choice([f"{app}.conf", "settings.ini", "service.conf", "pool.cfg", "main.conf"])
        live = f"/etc/{app}/{conf}"
        bdir = f"/var/backups/{app}"
        mode = rng.choice([0o640, 0o600, 0o644]) if level != "easy" else 0o644
        if hard:  # the stub left at the live path has the default bits; the backups, maybe others
            mode = rng.choice([0o640, 0o600, 0o440]) if "mode" in faults else 0o644
        account = rng.choice(SERVICE_ACCOUNTS) if "owner" in faults else None
        uid = rng.randint(901, 990) if account else 0
        second = rng.choice(["hosts.allow", "env", "limits.conf"]) if hard else None
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
        corrupt = fulls[-1] if "corrupt-full" in faults else None
        now = EPOCH_2022 + rng.randint(300, 900) * DAY
        step = DAY
        start = now - (k_total + 1) * step
        entries: list[Entry] = [Entry(bdir, "dir", mode=0o750, mtime=now)]
        sums: dict[str, str] = {}
        seconds: dict[int, bytes] = {}  # full backup -> the second file it holds
        owner = {"user": account, "uid": uid} if account else {}
        for n in fulls:
            members = [
                Entry(f"etc/{app}", "dir", mode=0o755, mtime=start + n * step),
                Entry(
                    f"etc/{app}/{conf}",
                    data=states[n].encode(),
                    mode=mode,
                    mtime=start + n * step,
                    **owner,
                ),
                Entry(
                    f"etc/{app}/{second or rng.choice(['hosts.allow', 'env', 'limits.conf'])}",
                    data=words_text(rng, 3, WORDS).encode(),
                    mode=0o640 if hard else 0o644,
                    mtime=start + n * step,
                    **owner,
                ),
            ]
            seconds[n] = members[2].data
            blob = compressed(tar_bytes(members), "gz")
            sums[f"full-{n}.tar.gz"] = sha256_hex(blob)
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
                    **owner,
                )
                blob = compressed(tar_bytes(members), "gz")
            entries.append(
                Entry(
                    f"{bdir}/full-{n}.tar.gz", data=blob, mode=0o640, mtime=start + n * step + 3600
                )
            )
        gz_some = level != "easy"
        base = fulls[0] if corrupt else fulls[-1]  # the newest full backup that is intact
        chain = list(range(base + 1, k_total + 1))
        bundled: list[int] = []
        if "bundled-diffs" in faults:  # the newest diffs only inside a bundle
            bundled = chain[-min(rng.randint(2, 3), len(chain) - 2) :]
        loose = [n for n in chain if n not in bundled]
        diffs: dict[int, bytes] = {}
        for n in range(1, k_total + 1):
            diffs[n] = "".join(
                difflib.unified_diff(
                    states[n - 1].splitlines(keepends=True),
                    states[n].splitlines(keepends=True),
                    f"a/{conf}",
                    f"b/{conf}",
                )
            ).encode()
        # a diff whose added lines carry a setting, to corrupt (its offsite copy stays intact)
        rotten = None
        if "corrupt-diff" in faults:

            def added(n: int) -> list[bytes]:
                return [
                    ln
                    for ln in diffs[n].splitlines()
                    if ln.startswith(b"+") and not ln.startswith(b"+++")
                ]

            candidates = [n for n in loose if any(b" = " in ln for ln in added(n))]
            rotten = rng.choice(candidates or [n for n in loose if added(n)])
        lost = None
        if "missing-diff" in faults:
            lost = rng.choice([n for n in loose if n != rotten])
        offsite = f"/mnt/offsite/{app}" if rotten or lost else None
        names: dict[int, str] = {}
        for n in range(1, k_total + 1):
            diff = diffs[n]
            name = f"incr-{n}.diff"
            if gz_some and rng.random() < 0.4:
                name, diff = name + ".gz", compressed(diff, "gz")
            names[n] = name
            if n in bundled:
                continue
            sums[name] = sha256_hex(diff)
            if offsite and (n in (rotten, lost) or n <= base and rng.random() < 0.3):
                entries.append(
                    Entry(f"{offsite}/{name}", data=diff, mode=0o640, mtime=start + n * step + 9000)
                )
            if n == lost:
                continue
            if n == rotten:
                lines = diffs[n].split(b"\n")
                at = [
                    i
                    for i, ln in enumerate(lines)
                    if ln.startswith(b"+") and not ln.startswith(b"+++")
                ]
                k = rng.choice([i for i in at if b" = " in lines[i]] or at)
                lines[k] = lines[k] + str(rng.randint(2, 9)).encode()
                diff = b"\n".join(lines)
                if name.endswith(".gz"):
                    diff = compressed(diff, "gz")
            entries.append(
                Entry(f"{bdir}/{name}", data=diff, mode=0o640, mtime=start + n * step + 7200)
            )
        bundle = None
        if bundled:
            bundle = f"incr-{bundled[0]}-{bundled[-1]}.tar.gz"
            members = [
                Entry(f"incr-{n}.diff", data=diffs[n], mode=0o640, mtime=start + n * step + 7200)
                for n in bundled
            ]
            blob = compressed(tar_bytes(members), "gz")
            sums[bundle] = sha256_hex(blob)
            entries.append(Entry(f"{bdir}/{bundle}", data=blob, mode=0o640, mtime=now - 3600))
        if offsite:
            entries.insert(0, Entry(offsite, "dir", mode=0o750, mtime=now))
        if level != "easy":
            body = "".join(f"{sums[k]}  {k}\n" for k in sorted(sums))
            entries.append(Entry(f"{bdir}/SHA256SUMS", data=body.encode(), mode=0o644, mtime=now))
        if hard:  # what is left of the live file: a torn copy
            torn = final[: len(final) // 3]
            entries.append(Entry(f"/etc/{app}", "dir", mode=0o755, mtime=now))
            # the stub has the default bits (the backups may record others)
            entries.append(Entry(live, data=torn.encode(), mode=0o644, mtime=now))
        second_path = f"/etc/{app}/{second}" if "second-file" in faults else None
        context = {
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
            "expected_sha": sha256_hex(final.encode()),
            "torn": hard,
            "state": f"{STATE_DIR}/live.stat",
        }
        stats = [live]
        outputs = [live]
        mutations = {}
        if hard:
            context.update(
                {
                    "faults": faults,
                    "base": base,
                    "corrupt": corrupt,
                    "last": k_total,
                    "bundle": bundle,
                    "offsite": offsite,
                    "rotten_name": names[rotten] if rotten else None,
                    "lost_name": names[lost] if lost else None,
                    "account": account,
                    "uid": uid,
                    "second": second_path,
                    "second_sha": sha256_hex(seconds[base]) if second_path else None,
                    "second_mode": "0o640",
                }
            )
            if second_path:
                stats.append(second_path)
                outputs.append(second_path)
            mutations = near_misses(self, context, faults, key="variant", value="unfixed-{}")
        return Draft(
            context=context,
            files={"environment/seed.tar.gz": seed_tarball(entries)},
            secrets=secrets,
            outputs=outputs,
            separate_verifier=True,
            artifacts=[STATE_DIR],
            collect=[snapshot_hook({"live.stat": stat_lines(stats)})],
            tags=["backup", "patch", "diff"] + (["checksums"] if hard else []),
            faults=faults,
            traps=[Trap(*DR_TRAPS[f]) for f in faults if f in DR_TRAPS],
            mutations=mutations,
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
            blob = compressed(text.encode(), "gz")
            sums[f"{table}-{s}.csv.gz"] = sha256_hex(blob)
            if hard and s == snaps[-1]:
                ids = sorted(st)
                for i in rng.sample(ids, 2):
                    st[i][int_col] = str(int(st[i][int_col]) + rng.randint(5, 90))
                blob = compressed(_csv(columns, st).encode(), "gz")
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
            data = compressed(text.encode(), "gz") if name.endswith(".gz") else text.encode()
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
            files={"environment/seed.tar.gz": seed_tarball(entries)},
            secrets=changed[:2],
            outputs=[live],
            separate_verifier=True,
            tags=["csv", "json-lines", "change-log", "backup"] + (["checksums"] if hard else []),
        )
