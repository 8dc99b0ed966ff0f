"""sqlite-migration: migrate a live SQLite schema (split, normalise, clean dirty values) without
losing a row."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.base import Draft, Family, Trap, register
from factory.families.names import FIRST_NAMES, LAST_NAMES
from factory.families.terminal.knobs import fresh
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.sql_rows import COMPANY_SUFFIX, COMPANY_WORDS, insert_sql, sql_time
from factory.vocabulary import Difficulty


class _Entity(BaseModel):
    """A table of a live database and the names its migration uses (entities.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    app: str
    table: str
    one: str
    name: str
    renamed: tuple[str, ...]
    email: str
    group: str
    groups: tuple[str, ...]
    lookup: str
    fk: str
    amount: str
    date: str
    child: str
    child_cols: tuple[str, str]
    """A date column and an integer column of the child table."""


class _Entities(BaseModel):
    """The live databases a task draws from (entities.toml)."""

    model_config = ConfigDict(extra="forbid")

    mail_domains: list[str]
    """The domains of the rows' email addresses."""
    entity: list[_Entity]


_ENTITIES = load_toml_model(
    Path(__file__).parent / "entities.toml", _Entities, "sqlite-migration entities"
)
ENTITIES = _ENTITIES.entity
MAIL_DOMAINS = _ENTITIES.mail_domains


def _dirty_amount(rng: random.Random, cents: int) -> str:
    whole, frac = divmod(cents, 100)
    plain = f"{whole}.{frac:02d}"
    forms = [plain, f" {plain} ", f"${whole:,}.{frac:02d}", f"{whole:,}.{frac:02d}"]
    if frac % 10 == 0:
        forms.append(f"{whole}.{frac // 10}")
    if frac == 0:
        forms.append(str(whole))
    return rng.choice(forms)


def _dirty_word(rng: random.Random, word: str) -> str:
    return rng.choice(
        [word, word.capitalize(), word.upper(), f" {word}", f"{word} ", f"  {word.capitalize()} "]
    )


#: What a hard migration meets on the way, 2 to 4 of them per task (the instruction is the same
#: whichever are planted: it states what the result must be, never what is wrong with the data).
SM_FAULTS = [
    "dirty-emails",  # emails stored with stray case and padding
    "dirty-groups",  # the grouping column in mixed case and padded
    "money-text",  # amounts typed with a currency sign, thousands separators, spaces
    "mixed-dates",  # some dates written day-first
    "dependent-view",  # a view reads the column that is dropped
    "audit-trigger",  # a trigger logs changes of that column (and would log the cleanup too)
    "report-script",  # the app's report script queries the old columns
    "orphans",  # child rows whose parent is gone (inserted with foreign keys off)
]


def _trap(fault: str, ctx: Mapping[str, Any]) -> Trap:
    """The unannounced part of a planted fault, and the words that would give it away."""
    ent = ctx["ent"]
    traps = {
        "dirty-emails": ("emails stored in mixed case or padded", ("upper-case", "mixed case")),
        "dirty-groups": (
            f"{ent['group']} values in mixed case or padded",
            ("dirty", "upper/lower", "variants like"),
        ),
        "money-text": (
            "amounts typed with a currency sign and thousands separators",
            ("$", "thousands separator", "currency sign"),
        ),
        "mixed-dates": ("dates written day-first", ("DD/MM/YYYY", "day-first", "day first")),
        "dependent-view": ("a view that reads the dropped column", (ctx["view"],)),
        "audit-trigger": (
            "a trigger that logs every change of the dropped column, the cleanup's too",
            (ctx["trigger"], ctx["log"], "audit", "trigger that logs"),
        ),
        "report-script": (
            "a report script that queries the old columns",
            ("no such column", "its query", "QUERY"),
        ),
        "orphans": (
            f"{ent['child']} rows whose {ent['one']} is gone",
            ("orphans exist", "foreign keys were off", f"{ent['child']}_orphans holds"),
        ),
    }
    name, tells = traps[fault]
    return Trap(name, tuple(tells))


def _report_script(ctx: Mapping[str, Any]) -> str:
    """The application's nightly report, written against the schema before the migration."""
    ent = ctx["ent"]
    query = (
        f"SELECT lower(trim({ent['group']})), COUNT(*) FROM {ent['table']} "
        f"WHERE {ent['group']} IS NOT NULL GROUP BY 1 ORDER BY 1"
    )
    return (
        "#!/usr/bin/env python3\n"
        f'"""{ent["app"]} nightly report: {ent["one"]}s per {ent["group"]}, and the newest '
        f'{ent["one"]}."""\n\n'
        "import sqlite3\n\n"
        f"DB = {ctx['db']!r}\n"
        f"QUERY = {query!r}\n\n"
        'db = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)\n'
        "for name, count in db.execute(QUERY):\n"
        '    print(f"{name}\\t{count}")\n'
        f"(newest,) = db.execute(\n"
        f'    "SELECT {ent["name"]} FROM {ent["table"]} ORDER BY id DESC LIMIT 1"\n'
        ").fetchone()\n"
        'print(f"newest\\t{newest}")\n'
    )


@register
class SqliteMigration(Family):
    """Migrate a live SQLite database in place. easy: rename a column, add a backfilled derived
    column, add an index; medium: also move a repeated text column into a lookup table with a
    foreign key and bump a schema_version table; hard: also store emails clean and unique,
    amounts as exact cents, dates as YYYY-MM-DD, and meet 2-4 faults of :data:`SM_FAULTS`
    that the instruction (the same whichever are planted) does not announce: dirty emails,
    group names or amounts, day-first dates, a view or a logging trigger on the dropped
    column, the app's report script querying the old columns (the one fault the instruction
    names, as a goal: the report must keep working), child rows whose parent is gone. The
    reference applies the migration with the sqlite3 shell, one change at a time, only the
    repairs this task's faults need; each fault left unfixed is a near miss."""

    name = "sqlite-migration"
    title = "Apply a schema migration to a live SQLite database without losing data"
    category = "databases"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        ent = rng.choice(ENTITIES)
        hard, medium_up = level == "hard", level != "easy"
        n = {"easy": 40, "medium": 80, "hard": 140}[level] + rng.randint(0, 30)
        rows: list[dict[str, Any]] = []
        emails: set[str] = set()
        for i in range(1, n + 1):
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            if ent.table == "suppliers":
                name = f"{rng.choice(COMPANY_WORDS)} {rng.choice(COMPANY_SUFFIX)}"
            else:
                name = f"{first} {last}"
            user = f"{first.lower()}.{last.lower()}"
            email = fresh(
                lambda u=user: f"{u}{rng.randint(1, 99)}@{rng.choice(MAIL_DOMAINS)}", emails
            )
            group = rng.choice(ent.groups) if rng.random() > (0.1 if medium_up else 0) else None
            cents = rng.randint(1000, 900000)
            if i % 7 == 3:  # values that float arithmetic gets wrong (19.99 * 100 = 1998.99...)
                cents = rng.randint(10, 9000) * 100 + rng.choice([29, 57, 58, 99, 15, 1])
            day = datetime(2015, 1, 1) + timedelta(days=rng.randint(0, 3600))
            rows.append(
                {
                    "id": i,
                    "name": name,
                    "email": email,
                    "group": group,
                    "cents": cents,
                    "date": day,
                    "raw_email": email,
                    "raw_group": group,
                    "raw_amount": f"{cents // 100}.{cents % 100:02d}",
                    "raw_date": f"{day:%Y-%m-%d}",
                }
            )
        faults: list[str] = []
        if hard:
            faults = sorted(rng.sample(SM_FAULTS, rng.randint(2, 4)))
            if params.get("faults"):  # chosen by the caller (tests), the draws kept the same
                faults = sorted(params["faults"])
        # the faults' own draws come from a generator of their own, so that the rest of the
        # task (names, paths, the instruction) is the same whichever faults are planted
        frng = random.Random(rng.getrandbits(64)) if hard else rng
        if hard:
            for r in rows:
                if "dirty-emails" in faults and frng.random() < 0.3:
                    r["raw_email"] = frng.choice(
                        [r["email"].upper(), f" {r['email']}", r["email"].capitalize() + " "]
                    )
                if "dirty-groups" in faults and r["group"] and frng.random() < 0.5:
                    r["raw_group"] = _dirty_word(frng, r["group"])
                if "money-text" in faults and frng.random() < 0.5:
                    r["raw_amount"] = _dirty_amount(frng, r["cents"])
                if "mixed-dates" in faults and frng.random() < 0.3:
                    r["raw_date"] = f"{r['date']:%d/%m/%Y}"
            # each planted kind of dirt at least once
            if "dirty-groups" in faults:
                rows[1]["group"] = rows[1]["group"] or ent.groups[0]
                rows[1]["raw_group"] = rows[1]["group"].upper()
            if "money-text" in faults:
                rows[2]["raw_amount"] = (
                    f"${rows[2]['cents'] // 100 + 1000:,}.{rows[2]['cents'] % 100:02d}"
                )
                rows[2]["cents"] += 100000
            if "mixed-dates" in faults:
                rows[3]["raw_date"] = f"{rows[3]['date']:%d/%m/%Y}"
            if "dirty-emails" in faults:
                rows[4]["raw_email"] = " " + rows[4]["email"].upper()
        children = []
        for r in rng.sample(rows, n // 2):
            for _ in range(rng.randint(1, 3)):
                when = r["date"] + timedelta(days=rng.randint(1, 400))
                children.append((r["id"], f"{when:%Y-%m-%d}", rng.randint(1, 480)))
        if "orphans" in faults:  # rows left behind by deleted parents (foreign keys were off)
            for _ in range(frng.randint(2, 5)):
                when = datetime(2016, 1, 1) + timedelta(days=frng.randint(0, 3000))
                children.append((n + frng.randint(1, 60), f"{when:%Y-%m-%d}", frng.randint(1, 480)))
        children.sort()
        children = [(i + 1, *c) for i, c in enumerate(children)]
        orphan_rows = [list(c) for c in children if c[1] > n]
        kept_children = [c for c in children if c[1] <= n]
        new_name = rng.choice(ent.renamed)
        derive = rng.choice(["year", "cents", "domain"])
        if hard:
            derive = rng.choice(["year", "domain"])  # cents is a cleanup step of its own
        stem = ent.date.removesuffix("_on").removesuffix("_start")
        derived_col = {
            "year": f"{stem}_year",
            "cents": f"{ent.amount}_cents",
            "domain": "email_domain",
        }[derive]
        version = rng.randint(3, 17)
        history = []
        when = datetime(2019, 1, 1) + timedelta(days=rng.randint(0, 400))
        for v in range(1, version + 1):
            history.append((v, sql_time(when)))
            when += timedelta(days=rng.randint(20, 200), seconds=rng.randint(0, 86399))
        old_index = f"idx_{ent.table}_{ent.date}"
        group_index = f"idx_{ent.table}_{ent.group}"
        view = f"{ent.one}_overview"
        # the index the migration adds
        index_col = ent.fk if medium_up else rng.choice([derived_col, ent.email, new_name])
        index_name = f"idx_{ent.table}_{index_col}"
        unique_email = f"ux_{ent.table}_{ent.email}"

        # --- the database before
        cols = [
            ("id", "INTEGER PRIMARY KEY"),
            (ent.name, "TEXT NOT NULL"),
            (ent.email, "TEXT NOT NULL"),
            (ent.group, "TEXT"),
            (ent.amount, "TEXT NOT NULL"),
            (ent.date, "TEXT NOT NULL"),
        ]
        ddl = [
            f"CREATE TABLE {ent.table} (\n" + ",\n".join(f"    {c} {t}" for c, t in cols) + "\n);",
            f"CREATE INDEX {old_index} ON {ent.table}({ent.date});",
            f"CREATE TABLE {ent.child} (\n    id INTEGER PRIMARY KEY,\n"
            f"    {ent.one}_id INTEGER NOT NULL REFERENCES {ent.table}(id),\n"
            f"    {ent.child_cols[0]} TEXT NOT NULL,\n    {ent.child_cols[1]} INTEGER NOT NULL\n);",
        ]
        if medium_up:
            ddl.append(
                "CREATE TABLE schema_version (\n    version INTEGER NOT NULL,\n"
                "    applied_at TEXT NOT NULL\n);"
            )
        if hard:
            ddl.append(f"CREATE INDEX {group_index} ON {ent.table}({ent.group});")
        if "dependent-view" in faults:
            ddl.append(
                f"CREATE VIEW {view} AS\n    SELECT id, {ent.email}, {ent.group} AS {ent.lookup[:-1]}"
                f"\n    FROM {ent.table};"
            )
        log, trigger = f"{ent.one}_{ent.group}_log", f"trg_{ent.table}_{ent.group}_log"
        log_cols = ["id", f"{ent.one}_id", f"old_{ent.group}", f"new_{ent.group}", "changed_at"]
        log_rows: list[tuple[Any, ...]] = []
        if "audit-trigger" in faults:  # a trigger that logs every change of a row's group
            ddl.append(
                f"CREATE TABLE {log} (\n    id INTEGER PRIMARY KEY,\n"
                f"    {ent.one}_id INTEGER NOT NULL,\n    old_{ent.group} TEXT,\n"
                f"    new_{ent.group} TEXT,\n    changed_at TEXT NOT NULL\n);"
            )
            ddl.append(
                f"CREATE TRIGGER {trigger} AFTER UPDATE OF {ent.group} ON {ent.table}\n"
                f"WHEN old.{ent.group} IS NOT new.{ent.group}\nBEGIN\n"
                f"    INSERT INTO {log} ({', '.join(log_cols[1:])})\n"
                f"    VALUES (new.id, old.{ent.group}, new.{ent.group}, datetime('now'));\nEND;"
            )
            when = datetime(2021, 1, 1) + timedelta(days=frng.randint(0, 300))
            for i in range(1, frng.randint(3, 7) + 1):
                old, new = frng.sample(ent.groups, 2)
                who = frng.choice(rows)["id"]
                when += timedelta(days=frng.randint(1, 90), seconds=frng.randint(0, 86399))
                log_rows.append((i, who, old, new, sql_time(when)))
        before_rows = [
            (r["id"], r["name"], r["raw_email"], r["raw_group"], r["raw_amount"], r["raw_date"])
            for r in rows
        ]
        fk_pragma = "OFF" if "orphans" in faults else "ON"  # how the orphans got in
        seed = [f"PRAGMA foreign_keys = {fk_pragma};", "BEGIN;", *ddl]
        seed += insert_sql(ent.table, [c for c, _ in cols], before_rows)
        seed += insert_sql(
            ent.child, ["id", f"{ent.one}_id", *ent.child_cols], [tuple(c) for c in children]
        )
        if medium_up:
            seed += insert_sql("schema_version", ["version", "applied_at"], history)
        if log_rows:
            seed += insert_sql(log, log_cols, log_rows)
        seed.append("COMMIT;")

        # --- the database after
        lookup_names = sorted({r["group"] for r in rows if r["group"]})
        lookup_ids = {g: i for i, g in enumerate(lookup_names, 1)}
        after_cols: dict[str, str] = {"id": "INTEGER", new_name: "TEXT"}
        after_cols[ent.email] = "TEXT"
        if not medium_up:
            after_cols[ent.group] = "TEXT"
        else:
            after_cols[ent.fk] = "INTEGER"
        if hard:
            after_cols[f"{ent.amount}_cents"] = "INTEGER"
        else:
            after_cols[ent.amount] = "TEXT"
        after_cols[ent.date] = "TEXT"
        after_cols[derived_col] = "TEXT" if derive == "domain" else "INTEGER"
        expected_rows = []
        for r in rows:
            e = {"id": r["id"], new_name: r["name"]}
            e[ent.email] = r["email"] if hard else r["raw_email"]
            if medium_up:
                e[ent.fk] = lookup_ids[r["group"]] if r["group"] else None
            else:
                e[ent.group] = r["raw_group"]
            if hard:
                e[f"{ent.amount}_cents"] = r["cents"]
            else:
                e[ent.amount] = r["raw_amount"]
            e[ent.date] = f"{r['date']:%Y-%m-%d}"
            e[derived_col] = {
                "year": r["date"].year,
                "cents": r["cents"],
                "domain": r["email"].split("@")[1],
            }[derive]
            expected_rows.append(e)

        # --- the instruction's steps
        steps = [
            f"Rename the column `{ent.table}.{ent.name}` to `{new_name}` (same type and "
            "constraints, same values)."
        ]
        if medium_up:
            lookup_step = (
                f"Move `{ent.table}.{ent.group}` into a new lookup table `{ent.lookup}` with "
                f"exactly the columns `id INTEGER PRIMARY KEY` and `name TEXT NOT NULL UNIQUE`, "
                f"one row per distinct {ent.group}"
            )
            if hard:
                lookup_step += (
                    f", where {ent.group}s that differ only in letter case or surrounding spaces "
                    f"are the same {ent.group}: `name` is the value trimmed and lower-cased"
                )
            lookup_step += (
                f". Number the `{ent.lookup}` rows 1, 2, 3, ... in alphabetical order of "
                f"`name`. Add the column `{ent.fk} INTEGER REFERENCES {ent.lookup}(id)` to "
                f"`{ent.table}`, set it for every {ent.one} (NULL where `{ent.group}` is NULL), "
                f"then drop the column `{ent.group}`."
            )
            steps.append(lookup_step)
        if hard:
            steps.append(
                f"Store every `{ent.email}` trimmed and lower-cased, and make emails unique with "
                f"a unique index named `{unique_email}` on `{ent.email}`."
            )
            steps.append(
                f"Replace the text column `{ent.amount}` by `{ent.amount}_cents INTEGER NOT NULL`"
                f": the amount it holds (in currency units) as exact cents (`19.99` is 1999 "
                f"cents, `12.5` is 1250, `12` is 1200). Drop `{ent.amount}` afterwards."
            )
            steps.append(
                f"Every `{ent.date}` must be written `YYYY-MM-DD` afterwards, naming the same day "
                "as before."
            )
        derive_text = {
            "year": f"the year of `{ent.date}` as a number (e.g. 2019)",
            "cents": f"the amount of `{ent.amount}` (currency units, text) in cents, exactly "
            "(e.g. `19.99` is 1999)",
            "domain": f"the part of `{ent.email}` after the `@`",
        }[derive]
        steps.append(
            f"Add the column `{derived_col} {after_cols[derived_col]}` to `{ent.table}` and fill "
            f"it for every existing row with {derive_text}."
        )
        steps.append(f"Add an index named `{index_name}` on `{ent.table}({index_col})`.")
        if medium_up:
            steps.append(
                f"Record the migration in `schema_version`: add one row with version "
                f"{version + 1} (the database is at version {version}) and the current time "
                "as `applied_at`; keep the existing rows."
            )
        # outside the code roots (/usr/local/bin ...), which the verifier restores from the image
        report = f"/opt/{ent.app}/bin/{ent.app}-report"
        if "report-script" in faults:
            steps.append(
                f"The nightly report `{report}` reads this database. It must keep working: "
                "run after the migration, it prints exactly what it printed before."
            )
        counts = Counter(r["group"] for r in rows if r["group"])
        report_lines = [f"{g}\t{counts[g]}" for g in sorted(counts)]
        report_lines.append(f"newest\t{rows[-1]['name']}")
        view_rows = [[r["id"], r["email"], r["group"]] for r in rows]
        child_digest = hashlib.sha256(repr([tuple(c) for c in kept_children]).encode()).hexdigest()
        db_dir = rng.choice(["/srv", "/var/lib", "/opt"])
        db = f"{db_dir}/{ent.app}/{ent.app}.{rng.choice(['db', 'sqlite3'])}"
        ctx = {
            "ent": ent.__dict__,
            "db": db,
            "level": level,
            "hard": hard,
            "medium_up": medium_up,
            "new_name": new_name,
            "derive": derive,
            "derived_col": derived_col,
            "index_name": index_name,
            "index_col": index_col,
            "old_index": old_index,
            "group_index": group_index,
            "unique_email": unique_email,
            "view": view,
            "version": version,
            "history": history,
            "steps": steps,
            "after_cols": after_cols,
            "expected_rows": expected_rows,
            "lookup": [[i, g] for g, i in lookup_ids.items()],
            "view_rows": view_rows,
            "child_count": len(kept_children),
            "child_digest": child_digest,
            "child_cols": ["id", f"{ent.one}_id", *ent.child_cols],
            "row_count": n,
            "faults": faults,
            "orphans": orphan_rows,
            "child": ent.child,
            "log": log,
            "log_cols": log_cols,
            "log_rows": [list(r) for r in log_rows],
            "trigger": trigger,
            "report": report,
            "report_lines": report_lines,
        }
        files = {"environment/seed.sql": "\n".join(seed) + "\n"}
        mutations = {}
        if "report-script" in faults:
            files["environment/report.py"] = _report_script(ctx)
        if hard:
            mutations.update(near_misses(self, ctx, faults))
        return Draft(
            context=ctx,
            files=files,
            outputs=[db] + ([report] if "report-script" in faults else []),
            separate_verifier=True,
            # a WAL, its index or a hot journal the agent leaves holds part of the database
            artifacts=[f"{db}-wal", f"{db}-shm", f"{db}-journal"],
            tags=["sqlite", "migration", "schema"] + (["data-cleaning"] if hard else []),
            faults=faults,
            traps=[_trap(f, ctx) for f in faults],
            mutations=mutations,
        )
