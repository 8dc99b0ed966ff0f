"""The shop behind a sqlite-query task: one of six schema themes, its rows drawn from the seed,
and the SQL script that seeds the database."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from factory.datafiles import load_toml_table
from factory.families.names import FIRST_NAMES, LAST_NAMES
from factory.families.terminal.sql_rows import (
    COMPANY_SUFFIX,
    COMPANY_WORDS,
    insert_sql,
    sql_literal,
    sql_time,
)


@dataclass(frozen=True)
class _Theme:
    """Names of a star schema: parents (customers...) place events (orders...) made of lines
    (order items...) that refer to items (products...)."""

    key: str
    about: str
    parent: str
    parent_one: str
    pname: str
    pgroup: str
    pgroups: tuple[str, ...]
    event: str
    event_one: str
    fk: str
    time: str
    status: str
    statuses: tuple[str, ...]
    line: str
    line_fk: str
    item_fk: str
    qty: str
    price: str
    disc: str
    item: str
    iname: str
    igroup: str
    igroups: tuple[str, ...]
    company_names: bool = False


def _load_themes() -> list[_Theme]:
    rows = load_toml_table(Path(__file__).parent / "themes.toml")["theme"]
    return [
        _Theme(**{k: tuple(v) if isinstance(v, list) else v for k, v in r.items()}) for r in rows
    ]


THEMES = _load_themes()
"""The schema themes a task draws from (themes.toml)."""
ITEM_WORDS = [
    "alpha", "bravo", "cedar", "delta", "echo", "fjord", "gale", "harbor", "iris", "jade",
    "kilo", "lumen", "mesa", "nova", "onyx", "pine", "quartz", "ridge", "sierra", "terra",
]  # fmt: skip


def with_article(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def money_text(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


MONEY_SQL = "printf('%d.%02d', {0} / 100, {0} % 100)"


@dataclass
class Shop:
    """The generated data of one sqlite-query database."""

    theme: _Theme
    with_disc: bool
    parents: list[tuple[int, str, str | None]] = field(default_factory=list)
    items: list[tuple[int, str, str | None]] = field(default_factory=list)
    events: list[tuple[int, int, datetime, str]] = field(default_factory=list)
    lines: list[tuple[int, int, int, int, int, int | None]] = field(default_factory=list)
    prices: dict[int, int] = field(default_factory=dict)
    """List prices of the items random events may use."""
    reserved: list[int] = field(default_factory=list)
    """Parents random events never use (the questions plant ties and traps on them)."""
    active: list[int] = field(default_factory=list)

    @property
    def good(self) -> str:
        return self.theme.statuses[0]

    def tables(self) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
        t = self.theme
        line_cols = [
            "id",
            t.line_fk,
            t.item_fk,
            t.qty,
            t.price,
            *([t.disc] if self.with_disc else []),
        ]
        return {
            t.parent: (["id", t.pname, t.pgroup], list(self.parents)),
            t.item: (["id", t.iname, t.igroup], list(self.items)),
            t.event: (
                ["id", t.fk, t.time, t.status],
                [(i, p, sql_time(when), s) for i, p, when, s in self.events],
            ),
            t.line: (line_cols, [ln if self.with_disc else ln[:5] for ln in self.lines]),
        }

    def schema(self) -> str:
        t = self.theme
        statuses = ", ".join(sql_literal(s) for s in t.statuses)
        disc = (
            f",\n    {t.disc} INTEGER CHECK ({t.disc} >= 0)  -- discount on the whole line"
            if self.with_disc
            else ""
        )
        return (
            f"CREATE TABLE {t.parent} (\n    id INTEGER PRIMARY KEY,\n    {t.pname} TEXT NOT NULL,"
            f"\n    {t.pgroup} TEXT\n);\n"
            f"CREATE TABLE {t.item} (\n    id INTEGER PRIMARY KEY,\n    {t.iname} TEXT NOT NULL,"
            f"\n    {t.igroup} TEXT\n);\n"
            f"CREATE TABLE {t.event} (\n    id INTEGER PRIMARY KEY,\n"
            f"    {t.fk} INTEGER NOT NULL REFERENCES {t.parent}(id),\n"
            f"    {t.time} TEXT NOT NULL,  -- 'YYYY-MM-DD HH:MM:SS', UTC\n"
            f"    {t.status} TEXT NOT NULL CHECK ({t.status} IN ({statuses}))\n);\n"
            f"CREATE TABLE {t.line} (\n    id INTEGER PRIMARY KEY,\n"
            f"    {t.line_fk} INTEGER NOT NULL REFERENCES {t.event}(id),\n"
            f"    {t.item_fk} INTEGER NOT NULL REFERENCES {t.item}(id),\n"
            f"    {t.qty} INTEGER NOT NULL,\n    {t.price} INTEGER NOT NULL{disc}\n);"
        )

    def seed_sql(self) -> str:
        out = ["PRAGMA foreign_keys = ON;", "BEGIN;", self.schema()]
        for table, (cols, rows) in self.tables().items():
            out += insert_sql(table, cols, rows)
        out.append("COMMIT;")
        return "\n".join(out) + "\n"

    def digests(self) -> dict[str, str]:
        return {
            table: hashlib.sha256(repr(rows).encode()).hexdigest()
            for table, (_, rows) in self.tables().items()
        }

    def add_event(
        self,
        rng: random.Random,
        parent: int,
        when: datetime,
        status: str | None = None,
        lines: list[tuple[int, int, int, int | None]] | None = None,
    ) -> list[tuple[int, int, int, int | None]]:
        eid = len(self.events) + 1
        self.events.append((eid, parent, when, status or self.good))
        if lines is None:
            lines = []
            for item in rng.sample(sorted(self.prices), rng.randint(1, 4)):
                qty = rng.randint(1, 5)
                price = self.prices[item] - rng.choice([0, 0, 0, 25, 50, 100])
                disc = None
                if self.with_disc and rng.random() < 0.35:
                    disc = rng.choice([0, rng.randint(1, qty * price // 4)])
                lines.append((item, qty, price, disc))
        for item, qty, price, disc in lines:
            self.lines.append((len(self.lines) + 1, eid, item, qty, price, disc))
        return lines

    def plant_boundaries(self, rng: random.Random, lo: datetime, hi: datetime) -> None:
        """Good events just inside and just outside [lo, hi] (hi: the range's last second),
        and one late on the last day (a date-only upper bound misses it)."""
        last_day = hi.replace(hour=rng.randint(9, 22), minute=rng.randint(0, 59))
        for when in (lo, lo - timedelta(seconds=1), hi, hi + timedelta(seconds=1), last_day):
            self.add_event(rng, rng.choice(self.active), when)

    # views of the data for the expected answers
    def net(self, net: bool = True) -> dict[int, int]:
        """Per event: the sum of its lines (minus discounts when ``net``)."""
        out: dict[int, int] = {}
        for _, ev, _, qty, price, disc in self.lines:
            out[ev] = out.get(ev, 0) + qty * price - ((disc or 0) if net else 0)
        return out

    def good_events(self, lo: datetime | None = None, hi: datetime | None = None):
        for eid, parent, when, status in self.events:
            if status == self.good and (lo is None or lo <= when <= hi):
                yield eid, parent, when


def make_shop(rng: random.Random, theme: _Theme, level: str, year: int) -> Shop:
    n_parents = {"easy": 24, "medium": 40, "hard": 60}[level] + rng.randint(0, 10)
    n_items = rng.randint(12, 22)
    n_events = {"easy": 160, "medium": 380, "hard": 650}[level] + rng.randint(0, 80)
    shop = Shop(theme, with_disc=level == "hard")
    names: set[str] = set()
    while len(shop.parents) < n_parents:
        if theme.company_names:
            name = f"{rng.choice(COMPANY_WORDS)} {rng.choice(COMPANY_SUFFIX)}"
        else:
            name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        if level != "easy" and rng.random() < 0.12:
            first, *rest = name.split()
            if theme.company_names:
                name = rng.choice([f"{name}, Inc", f'{name} "International"'])
            else:
                name = rng.choice([f"{' '.join(rest)}, {first}", f'{name} "Jr"'])
        if name in names:
            continue
        names.add(name)
        group: str | None = rng.choice(theme.pgroups)
        if level == "hard" and rng.random() < 0.1:
            group = None
        shop.parents.append((len(shop.parents) + 1, name, group))
    for i in range(1, n_items + 1):
        igroup: str | None = rng.choice(theme.igroups)
        if level == "hard" and (i == 1 or rng.random() < 0.1):
            igroup = None
        label = f"{rng.choice(ITEM_WORDS).capitalize()} {rng.choice(ITEM_WORDS)}-{i:02d}"
        shop.items.append((i, label, igroup))
        shop.prices[i] = rng.randint(150, 9000)
    start = datetime(year - 1, 10, 1)
    span = int((datetime(year + 1, 3, 31) - start).total_seconds())
    everyone = list(range(1, n_parents + 1))
    shop.reserved = sorted(rng.sample(everyone, 6))
    never = set(rng.sample([p for p in everyone if p not in shop.reserved], 3))
    shop.active = [p for p in everyone if p not in shop.reserved and p not in never]
    for _ in range(n_events):
        when = start + timedelta(seconds=rng.randint(0, span))
        status = rng.choices(theme.statuses, [70, 10, 10, 10])[0]
        shop.add_event(rng, rng.choice(shop.active), when, status)
    return shop
