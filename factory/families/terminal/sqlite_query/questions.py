"""sqlite-query questions for easy and medium tasks. Each question draws its parameters, computes
the expected rows in pure Python from the shop model, and words the question."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from factory.families.terminal.sql_rows import sql_time

from .shop import MONEY_SQL, Shop, money_text, with_article


@dataclass
class Question:
    slug: str
    summary: str
    rules: list[str]
    header: list[str]
    columns: list[str]
    order: str
    sql: str
    wrong: list[str]
    """Three near-miss queries (the mutations), each wrong on this data."""
    rows: list[list[str]] = field(default_factory=list)


def range_text(lo: datetime, hi: datetime) -> str:
    return (
        f"from `{sql_time(lo)}` through `{sql_time(hi)}`, both inclusive (every moment of the days "
        f"{lo:%Y-%m-%d} to {hi:%Y-%m-%d})"
    )


def pick_range(rng: random.Random, year: int) -> tuple[datetime, datetime]:
    kind = rng.choice(["quarter", "months", "days"])
    if kind == "quarter":
        q = rng.randint(1, 4)
        lo = datetime(year, 3 * q - 2, 1)
        hi = datetime(year + (q == 4), (3 * q) % 12 + 1, 1) - timedelta(seconds=1)
    elif kind == "months":
        m = rng.randint(1, 8)
        lo = datetime(year, m, 1)
        hi = datetime(year, m + rng.randint(2, 4), 1) - timedelta(seconds=1)
    else:
        lo = datetime(year, 1, 1) + timedelta(days=rng.randint(0, 200))
        hi = lo + timedelta(days=rng.randint(45, 120), hours=23, minutes=59, seconds=59)
    return lo, hi


def between(col: str, lo: datetime, hi: datetime) -> str:
    return f"{col} >= '{sql_time(lo)}' AND {col} <= '{sql_time(hi)}'"


def between_dates(col: str, lo: datetime, hi: datetime) -> str:
    """The classic mistake: a date-only upper bound drops the last day's events."""
    return f"{col} BETWEEN '{lo:%Y-%m-%d}' AND '{hi:%Y-%m-%d}'"


@dataclass(frozen=True)
class Window:
    """What makes an event (table alias ``e``) count in a question: its status is the shop's
    good one and its time falls in [lo, hi]; with the conditions of two classic mistakes."""

    shop: Shop
    lo: datetime
    hi: datetime

    @property
    def status(self) -> str:
        return f"e.{self.shop.theme.status} = '{self.shop.good}' AND "

    @property
    def any_status(self) -> str:
        """The time condition alone: the status filter forgotten."""
        return between("e." + self.shop.theme.time, self.lo, self.hi)

    @property
    def sql(self) -> str:
        return self.status + self.any_status

    @property
    def sql_dates(self) -> str:
        """A date-only upper bound (:func:`between_dates`)."""
        return self.status + between_dates("e." + self.shop.theme.time, self.lo, self.hi)

    def rule(self, within: str = "") -> str:
        """The rule as the questions word it; ``within`` names the span before the range."""
        t = self.shop.theme
        return (
            f"Count only {t.event} whose `{t.status}` is `{self.shop.good}` and whose `{t.time}` "
            f"falls {within}" + range_text(self.lo, self.hi) + "."
        )

    def qualifies(self) -> str:
        """The rule as the hard questions word it."""
        t = self.shop.theme
        return (
            f"{with_article(t.event_one).capitalize()} qualifies when its `{t.status}` is "
            f"`{self.shop.good}` and its `{t.time}` falls " + range_text(self.lo, self.hi) + "."
        )


def q_status_year(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    counts: dict[str, tuple[int, set[int]]] = {}
    for _, parent, when, status in shop.events:
        if lo <= when <= hi:
            n, who = counts.get(status, (0, set()))
            counts[status] = (n + 1, who | {parent})
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    sql = f"""SELECT {t.status}, COUNT(*) AS n, COUNT(DISTINCT {t.fk})
FROM {t.event}
WHERE {{where}}
GROUP BY {t.status}
ORDER BY n DESC, {t.status} ASC"""
    return Question(
        slug=f"{t.event}_by_{t.status}_{year}",
        summary=f"how the {t.event} of the year {year} break down by `{t.status}`.",
        rules=[
            f"Count only {t.event} whose `{t.time}` falls in the year {year}, that is "
            + range_text(lo, hi)
            + ".",
            f"Include one row per `{t.status}` value that occurs among those {t.event}.",
        ],
        header=[t.status, t.event, f"distinct_{t.parent}"],
        columns=[
            f"`{t.status}`: the status value, exactly as stored.",
            f"`{t.event}`: how many {t.event} of {year} have that status.",
            f"`distinct_{t.parent}`: how many different {t.parent} those {t.event} belong to.",
        ],
        order=f"Order the rows by `{t.event}`, highest first; ties by `{t.status}` ascending.",
        sql=sql.format(where=between(t.time, lo, hi)),
        wrong=[
            sql.format(where=between_dates(t.time, lo, hi)),
            sql.format(where=between(t.time, lo, hi)).replace(
                f"COUNT(DISTINCT {t.fk})", "COUNT(*)"
            ),
            sql.format(where=f"{t.time} >= '{sql_time(lo)}' AND {t.time} < '{sql_time(hi)}'"),
        ],
        rows=[[s, str(n), str(len(who))] for s, (n, who) in ranked],
    )


def q_parent_counts(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    # two reserved parents with the same count (a tie to break by id); one whose events all
    # have other statuses (no row)
    n = rng.randint(2, 4)
    for parent in shop.reserved[:2]:
        for _ in range(n):
            when = datetime(year, 1, 1) + timedelta(minutes=rng.randint(0, 300 * 24 * 60))
            shop.add_event(rng, parent, when)
    for status in t.statuses[1:]:
        shop.add_event(rng, shop.reserved[2], datetime(year, 5, 5, 10), status)
    counts: dict[int, int] = {}
    for _, parent, _ in shop.good_events():
        counts[parent] = counts.get(parent, 0) + 1
    names = {p: name for p, name, _ in shop.parents}
    col = f"{shop.good}_{t.event}"
    sql = f"""SELECT p.id, p.{t.pname}, COUNT(e.id) AS n
FROM {t.parent} p {{join}} {t.event} e ON e.{t.fk} = p.id{{cond}}
GROUP BY p.id{{having}}
ORDER BY n DESC, p.id {{direction}}"""
    good = f" AND e.{t.status} = '{shop.good}'"
    return Question(
        slug=f"{shop.good}_{t.event}_per_{t.parent_one}",
        summary=f"for every {t.parent_one}, how many of their {t.event} have the "
        f"`{t.status}` `{shop.good}`.",
        rules=[
            f"Count only {t.event} whose `{t.status}` is `{shop.good}` (of any date).",
            f"Include one row per {t.parent_one} with at least one such "
            f"{t.event_one}, and no other rows.",
        ],
        header=[f"{t.parent_one}_id", t.pname, col],
        columns=[
            *parent_columns(t),
            f"`{col}`: the number of such {t.event}.",
        ],
        order=f"Order the rows by `{col}`, highest first; ties by `{t.parent_one}_id` ascending.",
        sql=sql.format(join="JOIN", cond=good, having="", direction="ASC"),
        wrong=[
            sql.format(join="JOIN", cond="", having="", direction="ASC"),
            sql.format(join="JOIN", cond=good, having="", direction="DESC"),
            sql.format(join="LEFT JOIN", cond=good, having="", direction="ASC"),
        ],
        rows=[
            [str(p), names[p], str(c)]
            for p, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
    )


def q_group_units(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    shop.add_event(rng, shop.reserved[0], datetime(year, 6, 1, 12), t.statuses[1])
    groups = {i: g for i, _, g in shop.items}
    good = {eid for eid, _, _ in shop.good_events(lo, hi)}
    units: dict[str, int] = {}
    for _, ev, item, qty, _, _ in shop.lines:
        if ev in good:
            units[groups[item]] = units.get(groups[item], 0) + qty
    sql = f"""SELECT i.{t.igroup}, {{agg}} AS units
FROM {t.line} l
JOIN {t.event} e ON e.id = l.{t.line_fk}
JOIN {t.item} i ON i.id = l.{t.item_fk}
WHERE {{where}}
GROUP BY i.{t.igroup}
ORDER BY units DESC, i.{t.igroup} ASC"""
    win = Window(shop, lo, hi)
    return Question(
        slug=f"{t.igroup}_{t.qty}_{year}",
        summary=f"the total `{t.qty}` of each `{t.igroup}` of {t.item} in the "
        f"`{shop.good}` {t.event} of {year}.",
        rules=[
            win.rule(f"in the year {year}, that is "),
            f"Include one row per `{t.igroup}` with at least one such line.",
        ],
        header=[t.igroup, f"total_{t.qty}"],
        columns=[
            f"`{t.igroup}`: the value of {t.item}.`{t.igroup}`, exactly as stored.",
            f"`total_{t.qty}`: the sum of `{t.qty}` over the qualifying {t.line} rows of "
            f"{t.item} of that `{t.igroup}`.",
        ],
        order=f"Order the rows by `total_{t.qty}`, highest first; ties by `{t.igroup}` ascending.",
        sql=sql.format(agg=f"SUM(l.{t.qty})", where=win.sql),
        wrong=[
            sql.format(agg=f"SUM(l.{t.qty})", where=win.sql_dates),
            sql.format(agg="COUNT(*)", where=win.sql),
            sql.format(agg=f"SUM(l.{t.qty})", where=win.any_status),
        ],
        rows=[[g, str(u)] for g, u in sorted(units.items(), key=lambda kv: (-kv[1], kv[0]))],
    )


def plant_tie(rng: random.Random, shop: Shop, lo: datetime, hi: datetime, k: int) -> list[int]:
    """Give two reserved parents identical sets of k big good events in [lo, hi], the first
    one late on the last day (a date-only upper bound loses it); returns the two."""
    pair = shop.reserved[:2]
    big = [
        (item, rng.randint(6, 9), shop.prices[item] * 3, None)
        for item in rng.sample(sorted(shop.prices), 2)
    ]
    span = int((hi - lo).total_seconds())
    for i in range(k):
        if i == 0:
            when = hi - timedelta(seconds=rng.randint(3600, 20 * 3600))
        else:
            when = lo + timedelta(seconds=rng.randint(3600, span - 3600))
        shop.add_event(rng, pair[0], when, lines=big)
        shop.add_event(rng, pair[1], when + timedelta(minutes=rng.randint(1, 50)), lines=big)
    return pair


def parent_columns(t) -> list[str]:
    """The docs of the id and name columns of a per-parent question."""
    return [
        f"`{t.parent_one}_id`: the {t.parent_one}'s `id`.",
        f"`{t.pname}`: the {t.parent_one}'s `{t.pname}`, exactly as stored.",
    ]


def parent_totals(
    shop: Shop, lo: datetime, hi: datetime, amounts: dict[int, int]
) -> dict[int, tuple[int, int]]:
    """Per parent with qualifying events in ``lo``..``hi``: how many, and the sum of their
    ``amounts``."""
    per: dict[int, tuple[int, int]] = {}
    for eid, parent, _ in shop.good_events(lo, hi):
        n, c = per.get(parent, (0, 0))
        per[parent] = (n + 1, c + amounts[eid])
    return per


def revenue_rule(t) -> str:
    """What the revenue of an event is (a rule's first sentence, without its end)."""
    return (
        f"The revenue of {with_article(t.event_one)} is the sum over its {t.line} of "
        f"`{t.qty} * {t.price}`"
    )


def q_parent_revenue(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = pick_range(rng, year)
    shop.plant_boundaries(rng, lo, hi)
    plant_tie(rng, shop, lo, hi, 1)
    shop.add_event(rng, shop.reserved[2], lo + timedelta(hours=30), t.statuses[2])
    amounts = shop.net(False)
    names = {p: name for p, name, _ in shop.parents}
    per = parent_totals(shop, lo, hi, amounts)
    ranked = sorted(per.items(), key=lambda kv: (-kv[1][1], kv[0]))
    sql = f"""SELECT id, {t.pname}, n, {MONEY_SQL.format("cents")}
FROM (
    SELECT p.id, p.{t.pname}, {{count}} AS n, SUM(l.{t.qty} * l.{t.price}) AS cents
    FROM {t.parent} p
    JOIN {t.event} e ON e.{t.fk} = p.id
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    WHERE {{where}}
    GROUP BY p.id
)
ORDER BY cents DESC, id ASC"""
    win = Window(shop, lo, hi)
    return Question(
        slug=f"{t.parent_one}_revenue_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the revenue of every {t.parent_one} in a period.",
        rules=[
            win.rule(),
            revenue_rule(t) + ".",
            f"Include one row per {t.parent_one} with at least one such {t.event_one}, and no "
            "other rows.",
        ],
        header=[f"{t.parent_one}_id", t.pname, t.event, "revenue"],
        columns=[
            *parent_columns(t),
            f"`{t.event}`: how many qualifying {t.event} the {t.parent_one} has.",
            "`revenue`: the total revenue of those "
            f"{t.event} in currency units (cents / 100) with exactly two decimals and no "
            "currency sign or thousands separator, e.g. `1234.50`.",
        ],
        order=f"Order the rows by revenue, highest first; rows with equal revenue by "
        f"`{t.parent_one}_id` ascending.",
        sql=sql.format(count="COUNT(DISTINCT e.id)", where=win.sql),
        wrong=[
            sql.format(
                count="COUNT(DISTINCT e.id)",
                where=win.sql_dates,
            ),
            sql.format(count="COUNT(DISTINCT e.id)", where=win.any_status),
            sql.format(count="COUNT(*)", where=win.sql),
        ],
        rows=[[str(p), names[p], str(n), money_text(c)] for p, (n, c) in ranked],
    )


def q_monthly_groups(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    groups = {i: g for i, _, g in shop.items}
    when_of = {eid: when for eid, _, when in shop.good_events(lo, hi)}
    cells: dict[tuple[str, str], tuple[set[int], int, int]] = {}
    for _, ev, item, qty, price, _ in shop.lines:
        if ev in when_of:
            key = (f"{when_of[ev]:%Y-%m}", groups[item] or "")
            evs, u, c = cells.get(key, (set(), 0, 0))
            cells[key] = (evs | {ev}, u + qty, c + qty * price)
    ranked = sorted(cells.items(), key=lambda kv: (kv[0][0], -kv[1][2], kv[0][1]))
    sql = f"""SELECT month, grp, n, units, {MONEY_SQL.format("cents")}
FROM (
    SELECT substr(e.{t.time}, 1, 7) AS month, i.{t.igroup} AS grp,
           COUNT(DISTINCT e.id) AS n, {{units}} AS units,
           SUM(l.{t.qty} * l.{t.price}) AS cents
    FROM {t.event} e
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    JOIN {t.item} i ON i.id = l.{t.item_fk}
    WHERE {{where}}
    GROUP BY month, grp
)
ORDER BY month ASC, cents DESC, grp ASC"""
    win = Window(shop, lo, hi)
    return Question(
        slug=f"monthly_{t.igroup}_{year}",
        summary=f"a monthly report of the year {year} per `{t.igroup}` of {t.item}.",
        rules=[
            win.rule(f"in {year}, that is "),
            f"{with_article(t.event_one).capitalize()} belongs to the month of its `{t.time}`. Report one row per month "
            f"and `{t.igroup}` that has at least one qualifying {t.line} row ({with_article(t.event_one)} "
            f"with lines of several `{t.igroup}` values counts for each of them).",
        ],
        header=["month", t.igroup, t.event, f"total_{t.qty}", "revenue"],
        columns=[
            "`month`: `YYYY-MM`.",
            f"`{t.igroup}`: the {t.item}' `{t.igroup}`, exactly as stored.",
            f"`{t.event}`: how many different qualifying {t.event} have at least one line of "
            f"that `{t.igroup}` in that month.",
            f"`total_{t.qty}`: the sum of `{t.qty}` over those lines.",
            f"`revenue`: the sum of `{t.qty} * {t.price}` over those lines, in currency units "
            "(cents / 100) with exactly two decimals, e.g. `1234.50`.",
        ],
        order=f"Order the rows by `month` ascending, then by revenue, highest first, then by "
        f"`{t.igroup}` ascending.",
        sql=sql.format(units=f"SUM(l.{t.qty})", where=win.sql),
        wrong=[
            sql.format(units=f"SUM(l.{t.qty})", where=win.sql_dates),
            sql.format(units="COUNT(*)", where=win.sql),
            sql.format(units=f"SUM(l.{t.qty})", where=win.any_status),
        ],
        rows=[[m, g, str(len(evs)), str(u), money_text(c)] for (m, g), (evs, u, c) in ranked],
    )


def q_parent_groups(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = pick_range(rng, year)
    shop.plant_boundaries(rng, lo, hi)
    shop.add_event(rng, shop.reserved[0], lo + timedelta(hours=5), t.statuses[1])
    amounts = shop.net(False)
    pgroup = {p: g for p, _, g in shop.parents}
    cells: dict[str, tuple[set[int], int, int]] = {}
    for eid, parent, _ in shop.good_events(lo, hi):
        who, n, c = cells.get(pgroup[parent] or "", (set(), 0, 0))
        cells[pgroup[parent] or ""] = (who | {parent}, n + 1, c + amounts[eid])
    ranked = sorted(cells.items(), key=lambda kv: (-kv[1][2], kv[0]))
    sql = f"""SELECT grp, who, n, {MONEY_SQL.format("cents")}
FROM (
    SELECT p.{t.pgroup} AS grp, {{who}} AS who, COUNT(DISTINCT e.id) AS n,
           SUM(l.{t.qty} * l.{t.price}) AS cents
    FROM {t.parent} p
    JOIN {t.event} e ON e.{t.fk} = p.id
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    WHERE {{where}}
    GROUP BY p.{t.pgroup}
)
ORDER BY cents DESC, grp ASC"""
    win = Window(shop, lo, hi)
    return Question(
        slug=f"{t.pgroup}_revenue_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the revenue per `{t.pgroup}` of the {t.parent} in a period.",
        rules=[
            win.rule(),
            revenue_rule(t) + f"; {with_article(t.event_one)} counts for the `{t.pgroup}` of "
            f"its {t.parent_one}.",
            f"Include one row per `{t.pgroup}` with at least one such {t.event_one}.",
        ],
        header=[t.pgroup, t.parent, t.event, "revenue"],
        columns=[
            f"`{t.pgroup}`: the value of {t.parent}.`{t.pgroup}`, exactly as stored.",
            f"`{t.parent}`: how many different {t.parent} of that `{t.pgroup}` have qualifying "
            f"{t.event}.",
            f"`{t.event}`: how many qualifying {t.event} they have.",
            "`revenue`: their total revenue in currency units (cents / 100) with exactly two "
            "decimals and no currency sign, e.g. `1234.50`.",
        ],
        order=f"Order the rows by revenue, highest first; ties by `{t.pgroup}` ascending.",
        sql=sql.format(who="COUNT(DISTINCT p.id)", where=win.sql),
        wrong=[
            sql.format(who="COUNT(DISTINCT p.id)", where=win.sql_dates),
            sql.format(who="COUNT(*)", where=win.sql),
            sql.format(who="COUNT(DISTINCT p.id)", where=win.any_status),
        ],
        rows=[[g, str(len(who)), str(n), money_text(c)] for g, (who, n, c) in ranked],
    )
