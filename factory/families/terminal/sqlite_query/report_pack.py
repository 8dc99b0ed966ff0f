"""sqlite-query at hard: a pack of reports over data that is not all in the database.

A hard task composes two or three questions (medium and hard ones, each with its own output
file) with one to three data sources besides the database: the oldest events moved, with their
lines, to an **archive** database, the newest still **incoming** as CSV exports, and one month
lost from the database and **restored** from a backup only as a gzip-compressed SQL dump. Its
faults are ``report-<kind>`` for each question and the sources. Each question computes its
answer in pure Python right after planting its traps; since the questions share one shop, a
later one's planted rows can change an earlier answer, so the final answers are the questions'
SQL run on the complete data, once that SQL has been checked against the Python answer on the
data as it stood. A near miss leaves one source out, or gets one report's query slightly wrong
(only the wrong queries that give a different answer on this data)."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import random
import sqlite3
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from factory.families.base import Draft, Family
from factory.families.terminal.near_miss import near_misses

from .questions import Question, q_monthly_groups, q_parent_groups, q_parent_revenue
from .questions_hard import q_net_having, q_quarter_grid, q_top_per_group
from .shop import Shop

REPORTS: dict[str, Callable[[random.Random, Shop, int], Question]] = {
    "net-having": q_net_having,
    "top-per-group": q_top_per_group,
    "quarter-grid": q_quarter_grid,
    "parent-revenue": q_parent_revenue,
    "monthly-groups": q_monthly_groups,
    "parent-groups": q_parent_groups,
}
SOURCES = ("archive", "restored", "incoming")


def _answer(conn: sqlite3.Connection, sql: str) -> list[list[str]]:
    """A query's rows as the CSV holds them (NULL as an empty field)."""
    return [["" if v is None else str(v) for v in row] for row in conn.execute(sql)]


def _database(shop: Shop, keep: Callable[[datetime], bool]) -> sqlite3.Connection:
    """The shop in memory, with only the events (and their lines) whose time ``keep`` takes."""
    t = shop.theme
    when = {eid: at for eid, _, at, _ in shop.events}
    conn = sqlite3.connect(":memory:")
    conn.executescript(shop.schema())
    for table, (cols, rows) in shop.tables().items():
        if table == t.event:
            rows = [r for r in rows if keep(when[r[0]])]
        elif table == t.line:
            rows = [r for r in rows if keep(when[r[1]])]
        marks = ", ".join("?" for _ in cols)
        conn.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", rows)
    return conn


def _cutoff(
    rng: random.Random,
    shop: Shop,
    questions: list[Question],
    full: list[list[list[str]]],
    candidates: list[datetime],
    missing: Callable[[datetime, datetime], bool],
) -> datetime | None:
    """The first cut-off (in random order) at which leaving out the events that ``missing``
    takes changes at least one report: a source that matters (None: none does)."""
    rng.shuffle(candidates)
    for cut in candidates:
        conn = _database(shop, lambda at, cut=cut: not missing(at, cut))
        if any(_answer(conn, q.sql) != rows for q, rows in zip(questions, full, strict=True)):
            return cut
    return None


def _csv(cols: list[str], rows: list[tuple[Any, ...]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    writer.writerows(rows)
    return buf.getvalue()


def draft_hard(
    family: Family, rng: random.Random, shop: Shop, year: int, params: Mapping[str, Any]
) -> Draft:
    """The hard draft of ``family`` (sqlite-query) on ``shop``."""
    t = shop.theme
    kinds = rng.sample(sorted(REPORTS), rng.randint(2, 3))
    sources = rng.choice(
        [[s] for s in SOURCES] + [[a, b] for a in SOURCES for b in SOURCES if a < b] + [SOURCES]
    )
    sources = [s for s in SOURCES if s in sources]
    questions = []
    for kind in kinds:
        q = REPORTS[kind](rng, shop, year)
        # the question's SQL against its Python answer, on the data as it stands now
        assert _answer(_database(shop, lambda at: True), q.sql) == q.rows, kind
        questions.append(q)
    every = _database(shop, lambda at: True)
    full = [_answer(every, q.sql) for q in questions]
    for q, rows in zip(questions, full, strict=True):
        q.rows = rows
    archive_until = incoming_from = restored_month = None
    for _ in range(2):  # a source that changes no report is left out, the others taken
        if "archive" in sources:
            months = [datetime(year, m, 1) for m in range(2, 8)]
            archive_until = _cutoff(rng, shop, questions, full, months, lambda at, cut: at < cut)
        if "incoming" in sources:
            start = archive_until.month + 1 if archive_until else 4
            months = [datetime(year, m, 1) for m in range(max(start, 4), 13)]
            months += [datetime(year + 1, m, 1) for m in (1, 2, 3)]
            incoming_from = _cutoff(rng, shop, questions, full, months, lambda at, cut: at >= cut)
        if "restored" in sources:  # one month between the other two, lost and restored
            first = archive_until or datetime(year, 1, 1)
            months = [
                m
                for m in (datetime(year, k, 1) for k in range(1, 13))
                if m >= first and (not incoming_from or _next_month(m) <= incoming_from)
            ]
            restored_month = _cutoff(
                rng, shop, questions, full, months, lambda at, cut: cut <= at < _next_month(cut)
            )
        cuts = (archive_until, restored_month, incoming_from)
        found = [s for s, cut in zip(SOURCES, cuts, strict=True) if cut]
        if found:
            break
        sources = [s for s in SOURCES if s not in sources]
    assert found, "no source changes a report"
    sources = found

    def where(at: datetime) -> str:
        if archive_until and at < archive_until:
            return "archive"
        if incoming_from and at >= incoming_from:
            return "incoming"
        if restored_month and restored_month <= at < _next_month(restored_month):
            return "restored"
        return "db"

    when = {eid: at for eid, _, at, _ in shop.events}
    tables = shop.tables()
    parts: dict[str, dict[str, list[tuple[Any, ...]]]] = {
        "db": {},
        "archive": {},
        "incoming": {},
        "restored": {},
    }
    for table, (_, rows) in tables.items():
        for part in parts:
            parts[part][table] = []
        for row in rows:
            if table == t.event:
                parts[where(when[row[0]])][table].append(row)
            elif table == t.line:
                parts[where(when[row[1]])][table].append(row)
            else:
                parts["db"][table].append(row)
    event_cols, line_cols = tables[t.event][0], tables[t.line][0]

    # near misses: each report's wrong queries that give a different answer on this data
    wrongs = [
        [i, j]
        for i, q in enumerate(questions)
        for j, sql in enumerate(q.wrong)
        if _answer(every, sql) != full[i]
    ]
    assert len(wrongs) >= 3, wrongs

    db_dir = rng.choice(["/data", "/srv/db", f"/var/lib/{t.key}"])
    db = f"{db_dir}/{t.key}.{rng.choice(['db', 'sqlite', 'sqlite3'])}"
    out_dir = rng.choice(["/srv/reports", "/home/analyst/out", "/opt/reports", "/var/reports"])
    archive = f"{db_dir}/archive/{t.key}-until-{archive_until:%Y-%m}.db" if archive_until else None
    incoming = f"{db_dir}/incoming" if incoming_from else None
    restored = (
        f"{db_dir}/restored/{t.event}-{restored_month:%Y-%m}.sql.gz" if restored_month else None
    )
    reports = [
        {**q.__dict__, "out": f"{out_dir}/{q.slug}.csv", "kind": kind}
        for kind, q in zip(kinds, questions, strict=True)
    ]
    files: dict[str, str | bytes] = {}
    seed = ["PRAGMA foreign_keys = ON;", "BEGIN;", shop.schema()]
    seed += _inserts(parts["db"], tables)
    seed.append("COMMIT;")
    files["environment/seed.sql"] = "\n".join(seed) + "\n"
    kept = [db]
    digests = {"db": _digests(parts["db"])}
    if archive:
        ddl = [s.strip() + ";" for s in shop.schema().split(";") if s.strip()]
        ddl = [s for s in ddl if f"TABLE {t.event} " in s or f"TABLE {t.line} " in s]
        archived = {k: v for k, v in parts["archive"].items() if k in (t.event, t.line)}
        lines = ["PRAGMA foreign_keys = OFF;", "BEGIN;", *ddl, *_inserts(archived, tables)]
        files["environment/archive.sql"] = "\n".join([*lines, "COMMIT;"]) + "\n"
        kept.append(archive)
        digests["archive"] = _digests(archived)
    csv_files: dict[str, str] = {}  # path -> sha256 of the files the tests check unchanged
    if restored:
        dump = "\n".join(["BEGIN;", *_inserts(parts["restored"], tables), "COMMIT;"]) + "\n"
        data = gzip.compress(dump.encode(), mtime=0)
        files[f"environment/restored/{restored.rsplit('/', 1)[1]}"] = data
        csv_files[restored] = hashlib.sha256(data).hexdigest()
        kept.append(restored)
    if incoming:
        for table, cols in ((t.event, event_cols), (t.line, line_cols)):
            text = _csv(cols, parts["incoming"][table])
            files[f"environment/incoming/{table}.csv"] = text
            csv_files[f"{incoming}/{table}.csv"] = hashlib.sha256(text.encode()).hexdigest()
            kept.append(f"{incoming}/{table}.csv")
    secrets = [
        row[-1] for r in reports for row in r["rows"][:3] if "." in row[-1] and row[-1] != "1234.50"
    ]
    context = {
        "theme": t.__dict__,
        "hard": True,
        "db": db,
        "db_dir": db_dir,
        "out_dir": out_dir,
        "reports": reports,
        "sources": sources,
        "archive": archive,
        "archive_until": f"{archive_until:%Y-%m-%d}" if archive_until else None,
        "incoming": incoming,
        "incoming_from": f"{incoming_from:%Y-%m-%d}" if incoming_from else None,
        "restored": restored,
        "restored_month": f"{restored_month:%B %Y}" if restored_month else None,
        "counts": {name: len(rows) for name, rows in parts["db"].items()},
        "columns": {name: cols for name, (cols, _) in tables.items()},
        "digests": digests,
        "file_digests": csv_files,
        "wrongs": wrongs,
        "work": f"/tmp/{t.key}-all.db",
        "faults": [f"report-{k}" for k in sorted(kinds)] + sources,
        "with_disc": shop.with_disc,
        # what the level's shared templates read (the first report stands for the question)
        "q": reports[0],
        "out": reports[0]["out"],
    }
    mutations = near_misses(family, context, sources)
    solve = family.template("solution/solve.sh.j2")
    for i, j in wrongs[3:]:
        mutations[f"wrong-{reports[i]['kind']}-{j + 1}"] = solve.render(**context, swap=[i, j])
    return Draft(
        context=context,
        files=files,
        secrets=secrets,
        outputs=[r["out"] for r in reports],
        separate_verifier=True,
        kept=kept,
        tags=["sqlite", "sql", "csv", *sources],
        faults=context["faults"],
        mutations=mutations,
    )


def _next_month(m: datetime) -> datetime:
    return datetime(m.year + m.month // 12, m.month % 12 + 1, 1)


def _inserts(part: dict[str, list[tuple[Any, ...]]], tables: dict) -> list[str]:
    from factory.families.terminal.sql_rows import insert_sql

    out = []
    for table, rows in part.items():
        if rows:
            out += insert_sql(table, tables[table][0], rows)
    return out


def _digests(part: dict[str, list[tuple[Any, ...]]]) -> dict[str, str]:
    return {table: hashlib.sha256(repr(rows).encode()).hexdigest() for table, rows in part.items()}
