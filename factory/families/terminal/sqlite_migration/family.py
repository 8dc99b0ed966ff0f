"""sqlite-migration: migrate a live SQLite schema (split, normalise, clean dirty values) without
losing a row."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.names import FIRST_NAMES, LAST_NAMES
from factory.families.terminal.sql_rows import COMPANY_SUFFIX, COMPANY_WORDS, insert_sql, sql_time
from factory.vocabulary import Difficulty


@dataclass(frozen=True)
class _Entity:
    """A table of a live database and the names its migration uses."""

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


ENTITIES = [
    _Entity(
        "staffdb", "employees", "employee", "full_name", ("display_name", "legal_name"),
        "email", "dept", ("sales", "finance", "legal", "support", "research", "marketing", "ops"),
        "departments", "department_id", "salary", "hired_on",
        "timesheets", ("week_start", "hours"),
    ),
    _Entity(
        "gymdesk", "members", "member", "name", ("member_name", "full_name"),
        "contact_email", "plan", ("basic", "premium", "student", "family", "corporate", "senior"),
        "plans", "plan_id", "monthly_fee", "joined_on",
        "checkins", ("checked_in_on", "minutes"),
    ),
    _Entity(
        "procure", "suppliers", "supplier", "company", ("company_name", "legal_name"),
        "contact_email", "region", ("north", "south", "east", "west", "central", "overseas"),
        "regions", "region_id", "credit_limit", "onboarded_on",
        "purchase_orders", ("ordered_on", "total_cents"),
    ),
    _Entity(
        "wardsys", "patients", "patient", "name", ("patient_name", "full_name"),
        "email", "ward", ("cardiology", "oncology", "pediatrics", "neurology", "orthopedics"),
        "wards", "ward_id", "balance", "admitted_on",
        "visits", ("visited_on", "duration_min"),
    ),
    _Entity(
        "leasebook", "tenants", "tenant", "tenant", ("tenant_name", "occupant"),
        "email", "building", ("harbor", "linden", "maple", "granite", "willow", "summit"),
        "buildings", "building_id", "rent", "lease_start",
        "payments", ("paid_on", "amount_cents"),
    ),
    _Entity(
        "campus", "students", "student", "full_name", ("display_name", "student_name"),
        "email", "major", ("physics", "history", "biology", "economics", "music", "chemistry"),
        "majors", "major_id", "tuition", "enrolled_on",
        "enrollments", ("enrolled_at", "credits"),
    ),
]  # fmt: skip
MAIL_DOMAINS = ["example.com", "mail.example", "corp.example", "post.example", "inbox.test"]


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


@register
class SqliteMigration(Family):
    """Migrate a live SQLite database in place. easy: rename a column, add a backfilled derived
    column, add an index; medium: also move a repeated text column into a lookup table with a
    foreign key and bump a schema_version table; hard: also clean the data on the way (mixed
    case/padding, money as text with $ and thousands separators, mixed date formats), enforce
    a unique email, and rebuild a view that depends on a dropped column."""

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
            while True:
                email = (
                    f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@{rng.choice(MAIL_DOMAINS)}"
                )
                if email not in emails:
                    emails.add(email)
                    break
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
        if hard:
            for r in rows:
                if rng.random() < 0.3:
                    r["raw_email"] = rng.choice(
                        [r["email"].upper(), f" {r['email']}", r["email"].capitalize() + " "]
                    )
                if r["group"] and rng.random() < 0.5:
                    r["raw_group"] = _dirty_word(rng, r["group"])
                if rng.random() < 0.5:
                    r["raw_amount"] = _dirty_amount(rng, r["cents"])
                if rng.random() < 0.3:
                    r["raw_date"] = f"{r['date']:%d/%m/%Y}"
            # every kind of dirt at least once
            rows[1]["raw_group"] = (rows[1]["group"] or ent.groups[0]).upper()
            rows[1]["group"] = rows[1]["group"] or ent.groups[0]
            rows[2]["raw_amount"] = (
                f"${rows[2]['cents'] // 100 + 1000:,}.{rows[2]['cents'] % 100:02d}"
            )
            rows[2]["cents"] += 100000
            rows[3]["raw_date"] = f"{rows[3]['date']:%d/%m/%Y}"
            rows[4]["raw_email"] = " " + rows[4]["email"].upper()
        children = []
        for r in rng.sample(rows, n // 2):
            for _ in range(rng.randint(1, 3)):
                when = r["date"] + timedelta(days=rng.randint(1, 400))
                children.append((r["id"], f"{when:%Y-%m-%d}", rng.randint(1, 480)))
        children.sort()
        children = [(i + 1, *c) for i, c in enumerate(children)]
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
            ddl.append(
                f"CREATE VIEW {view} AS\n    SELECT id, {ent.email}, {ent.group} AS {ent.lookup[:-1]}"
                f"\n    FROM {ent.table};"
            )
        before_rows = [
            (r["id"], r["name"], r["raw_email"], r["raw_group"], r["raw_amount"], r["raw_date"])
            for r in rows
        ]
        seed = ["PRAGMA foreign_keys = ON;", "BEGIN;", *ddl]
        seed += insert_sql(ent.table, [c for c, _ in cols], before_rows)
        seed += insert_sql(
            ent.child, ["id", f"{ent.one}_id", *ent.child_cols], [tuple(c) for c in children]
        )
        if medium_up:
            seed += insert_sql("schema_version", ["version", "applied_at"], history)
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
                    f". The stored `{ent.group}` values are dirty (random upper/lower case, "
                    "leading and trailing spaces): the lookup names are the values trimmed and "
                    f"lower-cased, so variants like `' {ent.groups[0].capitalize()} '` and "
                    f"`{ent.groups[0].upper()}` become the single row `{ent.groups[0]}`"
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
                f"Clean `{ent.email}`: trim surrounding spaces and lower-case it. Then make "
                f"emails unique with a unique index named `{unique_email}` on `{ent.email}`."
            )
            steps.append(
                f"Replace the text column `{ent.amount}` by `{ent.amount}_cents INTEGER NOT NULL`"
                f": the amount in cents. The text holds amounts in currency units, some written "
                f"with surrounding spaces, a leading `$`, `,` as thousands separator, or fewer "
                f"than two decimals (`12.5` means 1250 cents, `12` means 1200). Drop "
                f"`{ent.amount}` afterwards."
            )
            steps.append(
                f"Normalise `{ent.date}` to `YYYY-MM-DD`: some values are written `DD/MM/YYYY`."
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
        if hard:
            steps.append(
                f"The view `{view}` reads the column `{ent.group}`. Afterwards it must still "
                f"exist and return one row per {ent.one} with the columns `id`, "
                f"`{ent.email}` and `{ent.lookup[:-1]}`, the latter now being the (clean) name "
                f"from `{ent.lookup}` (NULL where the {ent.one} has none)."
            )
        if medium_up:
            steps.append(
                f"Record the migration in `schema_version`: add one row with version "
                f"{version + 1} (the database is at version {version}) and the current time "
                "as `applied_at`; keep the existing rows."
            )
        view_rows = [[r["id"], r["email"], r["group"]] for r in rows]
        child_digest = hashlib.sha256(repr([tuple(c) for c in children]).encode()).hexdigest()
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
            "child_count": len(children),
            "child_digest": child_digest,
            "child_cols": ["id", f"{ent.one}_id", *ent.child_cols],
            "row_count": n,
        }
        return Draft(
            context=ctx,
            files={"environment/seed.sql": "\n".join(seed) + "\n"},
            outputs=[db],
            separate_verifier=True,
            # a WAL, its index or a hot journal the agent leaves holds part of the database
            artifacts=[f"{db}-wal", f"{db}-shm", f"{db}-journal"],
            tags=["sqlite", "migration", "schema"] + (["data-cleaning"] if hard else []),
        )
