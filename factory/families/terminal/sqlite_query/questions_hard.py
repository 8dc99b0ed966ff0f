"""sqlite-query questions for hard tasks: NULL discounts and groups, HAVING, ranks within groups,
zero-filled grids."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import NamedTuple

from factory.families.terminal.sql_rows import sql_time

from .questions import (
    Question,
    Window,
    parent_columns,
    parent_totals,
    pick_range,
    plant_tie,
)
from .shop import (
    ITEM_WORDS,
    MONEY_SQL,
    Shop,
    money_text,
    with_article,
)


class NetAmount(NamedTuple):
    """A line's net amount (``l``: the line table): its price less its discount, a NULL
    discount meaning none."""

    sql: str
    null_blind: str
    """The classic mistake: subtracting a NULL discount makes the whole amount NULL."""
    rule: str
    """The rule's wording."""


def net_amount(shop: Shop) -> NetAmount:
    t = shop.theme
    return NetAmount(
        f"l.{t.qty} * l.{t.price} - COALESCE(l.{t.disc}, 0)",
        f"l.{t.qty} * l.{t.price} - l.{t.disc}",
        f"The net amount of a line is `{t.qty} * {t.price}` minus its `{t.disc}` "
        f"(a discount on the whole line, in cents); a NULL `{t.disc}` means no discount.",
    )


def q_net_having(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = pick_range(rng, year)
    k = rng.randint(2, 3)
    shop.plant_boundaries(rng, lo, hi)
    plant_tie(rng, shop, lo, hi, k)
    # a big spender with one qualifying event too few, and one whose k-th is a second late
    r2, r3 = shop.reserved[2], shop.reserved[3]
    span = int((hi - lo).total_seconds())
    for _ in range(k - 1):
        when = lo + timedelta(seconds=rng.randint(3600, span - 3600))
        item = rng.choice(sorted(shop.prices))
        shop.add_event(rng, r2, when, lines=[(item, 9, shop.prices[item] * 4, None)])
        shop.add_event(rng, r3, when + timedelta(hours=2))
    shop.add_event(rng, r3, hi + timedelta(seconds=1))
    shop.add_event(rng, r2, hi - timedelta(hours=3), t.statuses[3])
    amounts = shop.net(True)
    names = {p: (name, g) for p, name, g in shop.parents}
    per = parent_totals(shop, lo, hi, amounts)
    ranked = sorted(
        ((p, v) for p, v in per.items() if v[0] >= k), key=lambda kv: (-kv[1][1], kv[0])
    )
    sql = f"""SELECT id, {t.pname}, grp, n, {MONEY_SQL.format("cents")}
FROM (
    SELECT p.id, p.{t.pname}, {{grp}} AS grp, COUNT(DISTINCT e.id) AS n,
           SUM({{amount}}) AS cents
    FROM {t.parent} p
    JOIN {t.event} e ON e.{t.fk} = p.id
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    WHERE {{where}}
    GROUP BY p.id
    {{having}}
)
ORDER BY cents DESC, id ASC"""
    win = Window(shop, lo, hi)
    grp = f"COALESCE(p.{t.pgroup}, 'unknown')"
    net = net_amount(shop)
    having = f"HAVING COUNT(DISTINCT e.id) >= {k}"
    return Question(
        slug=f"repeat_{t.parent}_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the net revenue of the {t.parent} who had at least {k} qualifying {t.event} "
        "in a period.",
        rules=[
            win.qualifies(),
            net.rule,
            f"Include only {t.parent} with at least {k} qualifying {t.event}; one row each.",
        ],
        header=[f"{t.parent_one}_id", t.pname, t.pgroup, t.event, "net_revenue"],
        columns=[
            *parent_columns(t),
            f"`{t.pgroup}`: the {t.parent_one}'s `{t.pgroup}`, or the word `unknown` where it is "
            "NULL.",
            f"`{t.event}`: how many qualifying {t.event} the {t.parent_one} has.",
            "`net_revenue`: the sum of the net amounts of all lines of those "
            f"{t.event}, in currency units (cents / 100) with exactly two decimals and no "
            "currency sign, e.g. `1234.50`.",
        ],
        order=f"Order the rows by `net_revenue`, highest first; rows with equal `net_revenue` by "
        f"`{t.parent_one}_id` ascending.",
        sql=sql.format(grp=grp, amount=net.sql, where=win.sql, having=having),
        wrong=[
            sql.format(
                grp=grp,
                amount=net.null_blind,
                where=win.sql,
                having=having,
            ),
            sql.format(grp=grp, amount=net.sql, where=win.sql, having=""),
            sql.format(
                grp=grp,
                amount=net.sql,
                where=win.sql_dates,
                having=having,
            ),
        ],
        rows=[
            [str(p), names[p][0], names[p][1] or "unknown", str(n), money_text(c)]
            for p, (n, c) in ranked
        ],
    )


def q_top_per_group(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = pick_range(rng, year)
    win = Window(shop, lo, hi)
    top = rng.choice([2, 3])
    shop.plant_boundaries(rng, lo, hi)
    # the tied pair share a group and outspend everyone there, so ranks 1 and 2 are a tie
    pair = plant_tie(rng, shop, lo, hi, 2)
    group = shop.parents[pair[0] - 1][2] or rng.choice(t.pgroups)
    for p in pair:
        shop.parents[p - 1] = (p, shop.parents[p - 1][1], group)
    # and a parent without a group who buys in the period: the `unknown` group exists
    r3 = shop.reserved[3]
    shop.parents[r3 - 1] = (r3, shop.parents[r3 - 1][1], None)
    shop.add_event(rng, r3, lo + timedelta(days=rng.randint(1, 20)))
    amounts = shop.net(True)
    info = {p: (name, g or "unknown") for p, name, g in shop.parents}
    per: dict[int, int] = {}
    for eid, parent, _ in shop.good_events(lo, hi):
        per[parent] = per.get(parent, 0) + amounts[eid]
    by_group: dict[str, list[int]] = {}
    for p in sorted(per, key=lambda p: (-per[p], p)):
        by_group.setdefault(info[p][1], []).append(p)
    rows = []
    for g in sorted(by_group):
        for rank, p in enumerate(by_group[g][:top], 1):
            rows.append([g, str(rank), str(p), info[p][0], money_text(per[p])])
    sql = f"""SELECT grp, rnk, id, {t.pname}, {MONEY_SQL.format("cents")}
FROM (
    SELECT grp, id, {t.pname}, cents,
           {{rank}}() OVER (PARTITION BY grp ORDER BY cents DESC, id ASC) AS rnk
    FROM (
        SELECT {{grp}} AS grp, p.id, p.{t.pname}, SUM({{amount}}) AS cents
        FROM {t.parent} p
        JOIN {t.event} e ON e.{t.fk} = p.id
        JOIN {t.line} l ON l.{t.line_fk} = e.id
        WHERE {win.sql}
        GROUP BY p.id
    )
)
WHERE rnk <= {top}
ORDER BY grp ASC, rnk ASC"""
    grp = f"COALESCE(p.{t.pgroup}, 'unknown')"
    net = net_amount(shop)
    return Question(
        slug=f"top{top}_per_{t.pgroup}_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the top {top} {t.parent} of every `{t.pgroup}` by net revenue in a period.",
        rules=[
            win.qualifies(),
            net.rule
            + f" {with_article(t.parent_one).capitalize()}'s net revenue is the sum over the lines of their qualifying "
            f"{t.event}.",
            f"Consider only {t.parent} with at least one qualifying {t.event_one}. "
            f"{t.parent.capitalize()} whose `{t.pgroup}` is NULL form one more group, named "
            "`unknown`.",
            f"Within each group rank the {t.parent} by net revenue, highest first; equal net "
            f"revenue is broken by `id`, lower first, so ranks are 1, 2, 3, ... without gaps "
            f"or repeats. Report ranks 1 to {top} of every group (fewer where a group has fewer "
            f"{t.parent}).",
        ],
        header=[t.pgroup, "rank", f"{t.parent_one}_id", t.pname, "net_revenue"],
        columns=[
            f"`{t.pgroup}`: the group (`unknown` for NULL).",
            "`rank`: the rank within the group, starting at 1.",
            f"`{t.parent_one}_id`, `{t.pname}`: the {t.parent_one}'s `id` and "
            f"`{t.pname}` (exactly as stored).",
            "`net_revenue`: in currency units (cents / 100) with exactly two decimals and no "
            "currency sign, e.g. `1234.50`.",
        ],
        order=f"Order the rows by `{t.pgroup}` ascending (plain byte order of the text as "
        "written in the file), then by `rank`.",
        sql=sql.format(rank="ROW_NUMBER", grp=grp, amount=net.sql),
        wrong=[
            sql.format(rank="ROW_NUMBER", grp=grp, amount=net.null_blind),
            sql.format(rank="ROW_NUMBER", grp=f"p.{t.pgroup}", amount=net.sql).replace(
                "WHERE e.", f"WHERE p.{t.pgroup} IS NOT NULL AND e."
            ),
            sql.format(rank="RANK", grp=grp, amount=net.sql).replace(
                "ORDER BY cents DESC, id ASC) AS rnk", "ORDER BY cents DESC) AS rnk"
            ),
        ],
        rows=rows,
    )


def q_quarter_grid(rng: random.Random, shop: Shop, year: int) -> Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    q2 = datetime(year, 4, 1)
    shop.add_event(rng, rng.choice(shop.active), q2 - timedelta(seconds=1))
    shop.add_event(rng, rng.choice(shop.active), q2)
    # a group whose only item sells in a single quarter: zero rows elsewhere
    lonely = rng.choice(
        [g for g in t.igroups if g not in {g2 for _, _, g2 in shop.items}] or ["misc"]
    )
    iid = len(shop.items) + 1
    shop.items.append((iid, f"{rng.choice(ITEM_WORDS).capitalize()} special-{iid:02d}", lonely))
    q = rng.randint(1, 4)
    shop.add_event(
        rng,
        rng.choice(shop.active),
        datetime(year, 3 * q - 1, 10, 14),
        lines=[(iid, 2, rng.randint(500, 4000), None)],
    )
    groups = {i: g or "uncategorized" for i, _, g in shop.items}
    quarter_of = {
        eid: f"{year}-Q{(when.month - 1) // 3 + 1}" for eid, _, when in shop.good_events(lo, hi)
    }
    cells: dict[tuple[str, str], tuple[set[int], int, int]] = {
        (f"{year}-Q{i}", g): (set(), 0, 0) for i in range(1, 5) for g in set(groups.values())
    }
    for _, ev, item, qty, price, disc in shop.lines:
        if ev in quarter_of:
            key = (quarter_of[ev], groups[item])
            evs, u, c = cells[key]
            cells[key] = (evs | {ev}, u + qty, c + qty * price - (disc or 0))
    quarters = ",\n        ".join(
        f"('{year}-Q{i}', '{sql_time(datetime(year, 3 * i - 2, 1))}', "
        f"'{sql_time(datetime(year + (i == 4), (3 * i) % 12 + 1, 1) - timedelta(seconds=1))}')"
        for i in range(1, 5)
    )
    quarters_dates = ",\n        ".join(
        f"('{year}-Q{i}', '{datetime(year, 3 * i - 2, 1):%Y-%m-%d}', "
        f"'{datetime(year + (i == 4), (3 * i) % 12 + 1, 1) - timedelta(days=1):%Y-%m-%d}')"
        for i in range(1, 5)
    )
    sql = f"""WITH quarters(quarter, lo, hi) AS (
    VALUES {{quarters}}
),
grps(grp) AS (
    SELECT DISTINCT COALESCE({t.igroup}, 'uncategorized') FROM {t.item}
),
sold AS (
    SELECT COALESCE(i.{t.igroup}, 'uncategorized') AS grp, e.id AS eid, e.{t.time} AS t,
           l.{t.qty} AS qty, {{amount}} AS net
    FROM {t.event} e
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    JOIN {t.item} i ON i.id = l.{t.item_fk}
    WHERE e.{t.status} = '{shop.good}'
)
SELECT quarter, g, n, units, {MONEY_SQL.format("cents")}
FROM (
    SELECT q.quarter, g.grp AS g, COUNT(DISTINCT s.eid) AS n, COALESCE(SUM(s.qty), 0) AS units,
           COALESCE(SUM(s.net), 0) AS cents
    FROM quarters q CROSS JOIN grps g
    {{join}} sold s ON s.grp = g.grp AND s.t >= q.lo AND s.t <= q.hi
    GROUP BY q.quarter, g.grp
)
ORDER BY quarter ASC, g ASC"""
    net = net_amount(shop)
    return Question(
        slug=f"quarterly_{t.igroup}_{year}",
        summary=f"a complete quarterly grid of {year}: every quarter times every `{t.igroup}` "
        f"of {t.item}.",
        rules=[
            f"{with_article(t.event_one).capitalize()} qualifies when its `{t.status}` is `{shop.good}` and its "
            f"`{t.time}` falls in {year}; it belongs to the calendar quarter of its `{t.time}` "
            f"(Q1 is `{year}-01-01 00:00:00` through `{year}-03-31 23:59:59`, both inclusive, "
            "and so on).",
            net.rule,
            f"{t.item.capitalize()} whose `{t.igroup}` is NULL form one more group, named "
            "`uncategorized`.",
            f"Report every combination of the four quarters and the groups present in the "
            f"{t.item} table, including combinations without any sales (with zeros).",
        ],
        header=["quarter", t.igroup, t.event, f"total_{t.qty}", "net_revenue"],
        columns=[
            f"`quarter`: `{year}-Q1` to `{year}-Q4`.",
            f"`{t.igroup}`: the group (`uncategorized` for NULL).",
            f"`{t.event}`: how many different qualifying {t.event} of that quarter have at "
            f"least one line of that group.",
            f"`total_{t.qty}`: the sum of `{t.qty}` over those lines (0 if none).",
            "`net_revenue`: the sum of their net amounts in currency units (cents / 100) with "
            "exactly two decimals and no currency sign, e.g. `1234.50` (`0.00` if none).",
        ],
        order=f"Order the rows by `quarter`, then by `{t.igroup}` (plain byte order of the text "
        "as written in the file), both ascending.",
        sql=sql.format(quarters=quarters, amount=net.sql, join="LEFT JOIN"),
        wrong=[
            sql.format(quarters=quarters, amount=net.sql, join="JOIN"),
            sql.format(quarters=quarters, amount=net.null_blind, join="LEFT JOIN"),
            sql.format(quarters=quarters_dates, amount=net.sql, join="LEFT JOIN"),
        ],
        rows=[
            [qq, g, str(len(evs)), str(u), money_text(c)]
            for (qq, g), (evs, u, c) in sorted(cells.items())
        ],
    )
