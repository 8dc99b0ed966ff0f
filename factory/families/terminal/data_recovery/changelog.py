"""data-recovery's changelog kind: a CSV table rebuilt from a gzipped snapshot and a rotated
JSON-lines change log whose operations are not idempotent."""

from __future__ import annotations

import json
from typing import Any

from factory.families.base import Draft
from factory.families.terminal.seed_tree import (
    DAY,
    EPOCH_2022,
    Entry,
    compressed,
    seed_tarball,
    sha256_hex,
)
from factory.families.terminal.words import CLEAN_APPS, WORDS
from factory.vocabulary import Difficulty

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


def changelog_draft(rng, difficulty: Difficulty) -> Draft:
    """The changelog kind (easy and medium): a table from its newest snapshot before the loss
    and the rotated change log after it, every shortcut through the log making other rows.
    Hard tasks are always the patches kind, so ``difficulty`` is easy or medium here."""
    if difficulty is Difficulty.HARD:
        raise ValueError("the changelog kind has no hard level (hard is the patches kind)")
    level = difficulty.value
    app = rng.choice(CLEAN_APPS)
    table = rng.choice(sorted(TABLES))
    schema = TABLES[table]
    columns = ["id"] + [c for c, _ in schema]
    int_col = schema[-1][0]
    other = rng.choice([t for t in sorted(TABLES) if t != table])
    other_schema = TABLES[other]
    n_ops = {"easy": 36, "medium": 60}[level]
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
        use = snaps[-1]
        log_start = max(1, snaps[0] - rng.randint(5, 9))
        logged = [op for op in ops if op["seq"] >= log_start]
        medium_files = rng.randint(3, 4)
        rng.randint(4, 5)  # unused; drawn so that every seed still renders the task it always has
        n_files = medium_files if level == "medium" else 2
        cuts = sorted(rng.sample(range(1, len(logged)), n_files - 1))
        chunks = [logged[a:b] for a, b in zip([0, *cuts], [*cuts, len(logged)], strict=True)]
        names = ["changes.log"] + [
            f"changes.log.{i}" + (".gz" if i > 1 and level != "easy" else "")
            for i in range(1, n_files)
        ]
        files_in_order = list(zip(reversed(names), chunks, strict=True))  # oldest first
        snap_state = _apply_changes(state0, [o for o in ops if o["seq"] <= use], table, 0, int_col)
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
        if all(w != expected for w in wrong) and chunks[-1] and len(chunks[0]) > 1 and all(chunks):
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
        if int(r[0]) not in snap_state or [snap_state[int(r[0])][c] for c in columns[1:]] != r[1:]
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
            "hard": False,
            "others": level != "easy",
            "rows": rows,
            "expected": _csv(columns, expected),
        },
        files={"environment/seed.tar.gz": seed_tarball(entries)},
        secrets=changed[:2],
        outputs=[live],
        separate_verifier=True,
        tags=["csv", "json-lines", "change-log", "backup"],
    )
