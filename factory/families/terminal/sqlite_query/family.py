"""sqlite-query: answer an analytical question from a generated SQLite database as an exact CSV
report. The shop's data is modelled in :mod:`.shop`; each question computes its answer in pure
Python from that model (:mod:`.questions`, :mod:`.questions_hard`)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.vocabulary import Difficulty

from .questions import (
    q_group_units,
    q_monthly_groups,
    q_parent_counts,
    q_parent_groups,
    q_parent_revenue,
    q_status_year,
)
from .questions_hard import (
    q_net_having,
    q_quarter_grid,
    q_top_per_group,
)
from .report_pack import draft_hard
from .shop import THEMES, make_shop

QUESTIONS = {
    "easy": [q_status_year, q_parent_counts, q_group_units],
    "medium": [q_parent_revenue, q_monthly_groups, q_parent_groups],
    "hard": [q_net_having, q_top_per_group, q_quarter_grid],
}


@register
class SqliteQuery(Family):
    """A generated SQLite database (six schema themes); write the answer to an analytical
    question as CSV with an exact header and order. easy: one table or a simple join;
    medium: joins, date ranges with boundary traps, money formatting, ties; hard: a pack of
    2-3 reports (medium and hard questions: NULL discounts and groups, HAVING, window ranks,
    zero-filled grids) over data that is not all in the database: 1-3 of older rows moved
    to an archive database, a month restored only as a gzip-compressed SQL dump, the newest
    still waiting as CSV exports (:mod:`.report_pack`)."""

    name = "sqlite-query"
    title = "Answer an analytical question from an SQLite database as an exact CSV report"
    category = "databases"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        theme = rng.choice(THEMES)
        year = rng.randint(2021, 2025)
        shop = make_shop(rng, theme, difficulty.value, year)
        if difficulty is Difficulty.HARD:
            return draft_hard(self, rng, shop, year, params)
        question = rng.choice(QUESTIONS[difficulty.value])(rng, shop, year)
        db_dir = rng.choice(["/data", "/srv/db", f"/var/lib/{theme.key}"])
        db = f"{db_dir}/{theme.key}.{rng.choice(['db', 'sqlite', 'sqlite3'])}"
        out_dir = rng.choice(["/app", "/srv/reports", "/home/analyst/out", "/opt/reports"])
        out = f"{out_dir}/{question.slug}.csv"
        secrets = [row[-1] for row in question.rows[:3] if "." in row[-1] and row[-1] != "1234.50"]
        tables = shop.tables()
        return Draft(
            context={
                "theme": theme.__dict__,
                "db": db,
                "out": out,
                "out_dir": out_dir,
                "q": question.__dict__,
                "counts": {name: len(rows) for name, (_, rows) in tables.items()},
                "columns": {name: cols for name, (cols, _) in tables.items()},
                "digests": shop.digests(),
                "with_disc": shop.with_disc,
            },
            files={"environment/seed.sql": shop.seed_sql()},
            secrets=secrets,
            outputs=[out],
            separate_verifier=True,
            kept=[db],
            tags=["sqlite", "sql", "csv"],
        )
