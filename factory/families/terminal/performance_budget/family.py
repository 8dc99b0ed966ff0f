"""performance-budget: make a slow report program fast enough for its time budget without
changing its output. The program is assembled from stages, each with a slow and a fast version
(``shipped/stages/``); the data generators in ``shipped/datagen.py`` also run in the tests."""

from __future__ import annotations

import random
import shlex
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.knobs import level_and_kind
from factory.families.terminal.shipped import read
from factory.families.terminal.words import TEAMS
from factory.vocabulary import Difficulty, Trap

from .shipped import datagen

# =============================================================================================
# performance-budget
# =============================================================================================


def _stage(kind: str, name: str, slow: bool) -> str:
    """The code of one stage of a report program (``shipped/stages/<kind>/``)."""
    ext = "sh" if kind == "bash" else "py"
    return read(__file__, f"stages/{kind}/{name}.{'slow' if slow else 'fast'}.{ext}")


_THEME_KEYS = ("events", "id", "who", "people", "group", "qty", "price")
PERF_THEMES = [
    dict(zip(_THEME_KEYS, row, strict=True))
    for row in [
        ("orders", "order_id", "customer", "customers", "region", "units", "unit_cents"),
        ("tickets", "ticket_id", "agent", "agents", "team", "hours", "rate_cents"),
        ("shipments", "shipment_id", "carrier", "carriers", "hub", "boxes", "box_cents"),
        ("bookings", "booking_id", "guest", "guests", "country", "nights", "night_cents"),
        ("jobs", "job_id", "runner", "runners", "pool", "minutes", "minute_cents"),
    ]
]
"""What the python kind's records are: events of people in groups, a quantity and a price."""


def perf_py_script(theme: dict, slow: set[str], drift: bool = False, hard: bool = False) -> str:
    """The python kind's report program; ``hard`` adds the idle and repeat columns (and their
    stages) to the easy/medium program."""
    t = theme
    parts = [
        "#!/usr/bin/env python3",
        f'"""Per-{t["group"]} report of {t["events"]}.csv: records, revenue and top {t["who"]}'
        + (f", {t['people']} with repeat records and idle {t['people']}." if hard else "."),
        "",
        f"Usage: report.py DATA_DIR   (reads DATA_DIR/{t['events']}.csv and DATA_DIR/{t['people']}.csv)",
        '"""',
        "",
        "import sys",
        "from pathlib import Path",
        "",
        f'ID, WHO, QTY, PRICE = "{t["id"]}", "{t["who"]}", "{t["qty"]}", "{t["price"]}"',
        f'GROUP = "{t["group"]}"',
        "",
        "",
        "def load(path):",
        '    """Records of a CSV file (no quoting) as dicts keyed by the header."""',
        "    with open(path) as fh:",
        '        header = fh.readline().rstrip("\\n").split(",")',
        '        return [dict(zip(header, line.rstrip("\\n").split(","))) for line in fh]',
        "",
        "",
    ]
    for stage in HARD_STAGES["python"] if hard else ("dedup", "join", "top"):
        code = _stage("python", stage, stage in slow)
        if drift and stage == "join":
            code = code.replace(
                "        if rec[WHO] not in index:\n            index[rec[WHO]]",
                "        if True:\n            index[rec[WHO]]",
            )
            code = code.replace("found[0] if found", "found[-1] if found")
        parts += [code, ""]
    parts += [
        "def main():",
        "    data = Path(sys.argv[1])",
        f'    rows = unique(load(data / "{t["events"]}.csv"))',
        f'    roster = load(data / "{t["people"]}.csv")',
        "    index = index_people(roster)",
        "    ranking = rank_members(rows)",
        *(
            ["    idle = idle_counts(roster, rows)", "    counts = count_records(rows)"]
            if hard
            else []
        ),
        "    groups = {}",
        "    for rec in rows:",
        "        groups.setdefault(group_of(index, rec[WHO]), []).append(rec)",
        "    report = []",
        "    for group, recs in groups.items():",
        "        total = sum(int(rec[QTY]) * int(rec[PRICE]) for rec in recs)",
        "        members = {rec[WHO] for rec in recs}",
    ]
    if hard:
        parts += [
            "        top = top_member(members, ranking)",
            "        extra = (repeat_count(members, counts), idle.get(group, 0))",
            "        report.append((group, len(recs), total, top, *extra))",
            "    report.sort(key=lambda item: (-item[2], item[0]))",
            f'    print("{t["group"]}\\t{t["events"]}\\trevenue\\ttop_{t["who"]}'
            f'\\trepeat_{t["people"]}\\tidle_{t["people"]}")',
            "    for group, count, total, top, repeat, idle_here in report:",
            '        money = f"{total // 100}.{total % 100:02d}"',
            '        print(f"{group}\\t{count}\\t{money}\\t{top}\\t{repeat}\\t{idle_here}")',
        ]
    else:
        parts += [
            "        report.append((group, len(recs), total, top_member(members, ranking)))",
            "    report.sort(key=lambda item: (-item[2], item[0]))",
            f'    print("{t["group"]}\\t{t["events"]}\\trevenue\\ttop_{t["who"]}")',
            "    for group, count, total, top in report:",
            '        print(f"{group}\\t{count}\\t{total // 100}.{total % 100:02d}\\t{top}")',
        ]
    parts += [
        "",
        "",
        'if __name__ == "__main__":',
        "    main()",
    ]
    return "\n".join(parts) + "\n"


_BASH_DECLARE = "declare -A req bytes errs where seen dc_of\n"
_BASH_DC_LOOP = (
    'while read -r h d; do\n    [ -n "${dc_of[$h]+set}" ] || dc_of[$h]=$d\ndone < "$hosts"\n'
)
"""The bash tool's set-up: its tables, and the datacenter table read once (the fast lookup)."""


def _bash_head(comment: str, slow: set[str], drift: bool = False) -> str:
    """The bash tool up to its per-line loop: ``comment``, the tables and the set-up the fast
    lookup and paths stages need (``drift``: the last datacenter line of a host wins)."""
    head = "#!/bin/bash\n" + comment + "log=$1\nhosts=$2\n" + _BASH_DECLARE
    if "lookup" not in slow:
        head += (
            _BASH_DC_LOOP.replace('[ -n "${dc_of[$h]+set}" ] || ', "") if drift else _BASH_DC_LOOP
        )
    if "paths" not in slow:
        head += "shopt -s extglob\n"
    return head


def _bash_loop_end_and_report(top: int) -> str:
    """The end of the bash tool's per-line loop (a 5xx counted, the host's datacenter and the
    folded path kept) and its report: per host, then the ``top`` busiest endpoints. The same at
    every difficulty."""
    return (
        "        errs[$host]=$(( ${errs[$host]:-0} + 1 ))\n    fi\n"
        "    where[$host]=$dc\n"
        "    seen[$norm]=$(( ${seen[$norm]:-0} + 1 ))\n"
        'done < "$log"\n'
        "printf '%s\\n' \"${!req[@]}\" | LC_ALL=C sort | while IFS= read -r host; do\n"
        '    printf \'%s %s %d %d %d\\n\' "$host" "${where[$host]}" "${req[$host]}" '
        '"${bytes[$host]}" "${errs[$host]:-0}"\ndone\n'
        'echo "--- busiest endpoints"\n'
        'for p in "${!seen[@]}"; do\n    printf \'%d %s\\n\' "${seen[$p]}" "$p"\n'
        f"done | LC_ALL=C sort -k1,1nr -k2,2 | head -n {top}\n"
    )


def perf_bash_script(
    name: str, top: int, slow: set[str], drift: bool = False, hard: bool = False
) -> str:
    """The bash kind's tool, a process per log line in each slow stage; ``hard`` has six stages
    (host names folded to lower case, the byte total and the 5xx test as stages of their own)."""

    def stage(key: str) -> str:
        return _stage("bash", key, key in slow)

    if hard:
        comment = (
            f"# {name}: requests, bytes and server errors (5xx) per host (names folded to lower\n"
            f"# case), with the host's datacenter, then the {top} busiest endpoints (digits in\n"
            f"# paths folded to N).\n# Usage: {name} ACCESS_LOG HOSTS_FILE\n"
        )
    else:
        comment = (
            f"# {name}: requests, bytes and server errors (status >= 500) per host, with the\n"
            f"# host's datacenter, then the {top} busiest endpoints (digits in paths folded to N).\n"
            f"# Usage: {name} ACCESS_LOG HOSTS_FILE\n"
        )
    body = stage("fields") + (stage("lower") if hard else "") + stage("lookup")
    body += '    [ -n "$dc" ] || dc=unknown\n' + stage("paths")
    body += "    req[$host]=$(( ${req[$host]:-0} + 1 ))\n"
    if hard:
        body += stage("bytes") + stage("errors")
    else:
        body += (
            "    bytes[$host]=$(( ${bytes[$host]:-0} + size ))\n"
            '    if [ "$status" -ge 500 ]; then\n'
        )
    return _bash_head(comment, slow, drift) + body + _bash_loop_end_and_report(top)


def perf_bash_fast(name: str, top: int, drift: bool = False) -> str:
    first = "dc[$1] = $2" if drift else "if (!($1 in dc)) dc[$1] = $2"
    return (
        "#!/bin/bash\n"
        f"# {name}: one awk pass instead of several processes per line.\n"
        "LC_ALL=C awk -v top=" + str(top) + " '\n"
        f"NR == FNR {{ {first}; next }}\n"
        "NF {\n"
        "    h = $2; req[h]++; bytes[h] += $6\n"
        "    if ($5 + 0 >= 500) errs[h]++\n"
        '    where[h] = (h in dc) ? dc[h] : "unknown"\n'
        '    p = $4; gsub(/[0-9]+/, "N", p); seen[p]++\n'
        "}\n"
        "END {\n"
        '    cmd = "LC_ALL=C sort"\n'
        '    for (h in req) printf "%s %s %d %d %d\\n", h, where[h], req[h], bytes[h], errs[h] + 0 | cmd\n'
        "    close(cmd)\n"
        '    print "--- busiest endpoints"\n'
        '    cmd = "LC_ALL=C sort -k1,1nr -k2,2 | head -n " top\n'
        '    for (p in seen) printf "%d %s\\n", seen[p], p | cmd\n'
        "    close(cmd)\n"
        '}\' "$2" "$1"\n'
    )


_SQL_MAIN = (
    'Usage: report.py DATABASE\n"""\n\nimport sqlite3\nimport sys\n\n\n'
    "def money(cents):\n"
    '    sign = "-" if cents < 0 else ""\n'
    "    cents = abs(cents)\n"
    '    return f"{sign}{cents // 100}.{cents % 100:02d}"\n\n\n'
    "def main():\n"
    "    db = sqlite3.connect(sys.argv[1])\n"
    '    orders = db.execute("SELECT oid, cid, cents FROM orders ORDER BY rowid").fetchall()\n'
)
"""The sqlite report program from the end of its docstring to its first query."""


def _sql_stages(keys: tuple[str, ...], slow: set[str], drift: bool) -> str:
    """The sqlite program's stages ``keys``, a blank line after each (``drift``: the last
    customer row of an id wins)."""
    code = "\n".join(_stage("sqlite", key, key in slow) for key in keys) + "\n"
    if drift and "lookup" in keys:
        code = code.replace("known.setdefault(cid, (name, region))", "known[cid] = (name, region)")
    return code


def _sql_tail(top: int, slow: set[str]) -> str:
    """The end of the sqlite program: spend per customer and the ``top`` biggest customers."""
    return (
        _stage("sqlite", "totals", "totals" in slow)
        + "    spend.sort(key=lambda item: (-item[0], item[1]))\n"
        '    print("top customers")\n'
        f"    for total, cid in spend[:{top}]:\n"
        '        print(f"{cid}\\t{customer(cid)[0]}\\t{money(total)}")\n\n\n'
        'if __name__ == "__main__":\n    main()\n'
    )


def perf_sql_script(top: int, slow: set[str], drift: bool = False, hard: bool = False) -> str:
    """The sqlite kind's report program; ``hard`` adds the refunded, repeat and idle columns
    (and their stages)."""
    if hard:
        return _perf_sql_hard(top, slow, drift)

    return (
        "#!/usr/bin/env python3\n"
        '"""Regional sales report from the shop database: orders, distinct customers and net\n'
        f"revenue (order amount minus refunds) per region, then the {top} biggest customers.\n\n"
        + _SQL_MAIN
        + _sql_stages(("lookup", "refunds"), slow, drift)
        + "    regions = {}\n"
        "    for oid, cid, cents in orders:\n"
        "        _name, region = customer(cid)\n"
        "        stats = regions.setdefault(region, [0, set(), 0])\n"
        "        stats[0] += 1\n"
        "        stats[1].add(cid)\n"
        "        stats[2] += cents - refunded(oid)\n"
        '    print("region\\torders\\tcustomers\\tnet")\n'
        "    for region, (count, cids, net) in sorted(regions.items(), key=lambda kv: (-kv[1][2], kv[0])):\n"
        '        print(f"{region}\\t{count}\\t{len(cids)}\\t{money(net)}")\n' + _sql_tail(top, slow)
    )


def _perf_sql_hard(top: int, slow: set[str], drift: bool) -> str:
    return (
        "#!/usr/bin/env python3\n"
        '"""Regional sales report from the shop database: orders, distinct customers, net\n'
        "revenue (order amount minus refunds), refunded orders, repeat customers (two orders or\n"
        "more) and idle customers (no order) per region, then the "
        f"{top} biggest customers.\n\n"
        + _SQL_MAIN
        + _sql_stages(("lookup", "refunds", "refcount", "repeat", "idle"), slow, drift)
        + "    regions = {}\n"
        "    for oid, cid, cents in orders:\n"
        "        _name, region = customer(cid)\n"
        "        stats = regions.setdefault(region, [0, set(), 0, 0])\n"
        "        stats[0] += 1\n"
        "        stats[1].add(cid)\n"
        "        stats[2] += cents - refunded(oid)\n"
        "        if refund_count(oid):\n"
        "            stats[3] += 1\n"
        "    idle = {}\n"
        '    for (cid,) in db.execute("SELECT DISTINCT cid FROM customers").fetchall():\n'
        "        if not has_orders(cid):\n"
        "            _name, region = customer(cid)\n"
        "            idle[region] = idle.get(region, 0) + 1\n"
        '    print("region\\torders\\tcustomers\\tnet\\trefunded\\trepeat\\tidle")\n'
        "    ranked = sorted(regions.items(), key=lambda kv: (-kv[1][2], kv[0]))\n"
        "    for region, (count, cids, net, back) in ranked:\n"
        "        repeat = sum(1 for cid in cids if order_count(cid) > 1)\n"
        "        line = [region, count, len(cids), money(net), back, repeat, idle.get(region, 0)]\n"
        '        print("\\t".join(str(x) for x in line))\n' + _sql_tail(top, slow)
    )


PERF_KINDS = {
    "python": {
        "stages": ["dedup", "join", "top"],
        "budget": 6.0,
        "data": "data",
        "small": {"n_events": 60, "n_people": 14, "n_groups": 4},
        "big": {"n_events": (36000, 40000), "n_people": (23000, 25000), "n_groups": (6, 24)},
        "datagen": datagen.perf_py_data,
        "interp": "python3",
    },
    "bash": {
        "stages": ["fields", "lookup", "paths"],
        "budget": 4.0,
        "data": "logs",
        "small": {"n_lines": 90, "n_hosts": 12},
        "big": {"n_lines": (11500, 12500), "n_hosts": (30, 60)},
        "datagen": datagen.perf_bash_data,
        "interp": "bash",
    },
    "sqlite": {
        "stages": ["lookup", "refunds", "totals"],
        "budget": 4.0,
        "data": "db",
        "small": {"n_orders": 70, "n_customers": 40, "n_refunds": 30},
        "big": {
            "n_orders": (28000, 32000),
            "n_customers": (48000, 52000),
            "n_refunds": (40000, 44000),
        },
        "datagen": datagen.perf_sql_data,
        "interp": "python3",
    },
}
"""Per kind: the easy/medium stages and budget (seconds), the data folder (under the base), the
sizes of the tests' small inputs and the ranges of the big one's, the data generator (shipped to
the tests) and the interpreter."""


def _sizes(rng: random.Random, spans: dict[str, tuple[int, int]]) -> dict[str, int]:
    """The big input's sizes, each drawn in its range (in the table's order)."""
    return {key: rng.randint(*span) for key, span in spans.items()}


HARD_STAGES = {
    "python": ["dedup", "join", "top", "idle", "repeat"],
    "bash": ["fields", "lower", "lookup", "paths", "bytes", "errors"],
    "sqlite": ["lookup", "refunds", "refcount", "repeat", "idle", "totals"],
}
"""The stages of each kind's program at hard (in program order); 3 or 4 of them are slow."""
HARD_BUDGET = {"python": 10.0, "bash": 8.0, "sqlite": 8.0}
"""Seconds at hard: the fast program does more there (and bash stays a bash loop), so some
head room on a loaded machine; each slow stage alone takes 70 s or more (measured)."""
PERF_STAGE_DOCS = {
    "dedup": "dropping repeated records",
    "join": "finding each record's group",
    "top": "finding each group's top member",
    "fields": "splitting each log line into fields",
    "lookup": "looking up each host's datacenter",
    "paths": "folding the digits of each path",
}


PERF_TRAPS = [
    Trap("repeated records and roster lines (the first one wins)", ("duplicate", "first wins")),
    Trap("entries missing from the lookup table", ("missing", "unassigned", "unknown")),
    Trap("ties in the rankings", ("tie", "ties", "tie-breaking")),
    Trap("several independent bottlenecks", ("more than one bottleneck", "bottlenecks")),
]
"""The hard task's unannounced traps: easy and medium name the first three."""
HARD_STAGE_DOCS = {
    "dedup": "dropping repeated records: a set of seen ids instead of a list",
    "join": "each record's group: a dict built once instead of a scan of the roster",
    "top": "each group's top member: totals summed once instead of a scan per member",
    "idle": "members without records: a set of active members instead of a scan per member",
    "repeat": "members with repeat records: counts made once instead of a scan per member",
    "fields": "the fields of a log line: read splits them, no cut process per field",
    "lower": "host names in lower case: ${host,,} instead of an echo | tr per line",
    "lookup": "the datacenter of a host: a table read once instead of a grep per line",
    "paths": "digits folded in paths: an extglob substitution instead of echo | sed",
    "bytes": "the byte total: shell arithmetic instead of an expr process per line",
    "errors": "the 5xx test: a pattern match instead of echo | grep per line",
    "refunds": "refunds per order: one GROUP BY query instead of one query per order",
    "refcount": "refunded orders: one GROUP BY count instead of one query per order",
    "totals": "spend per customer: one GROUP BY query instead of one per customer",
}
"""What the hard reference's edit of each stage does (a comment above the edit)."""
SQL_LOOKUP_DOC = "the customer of an order: a dict read once instead of one query per order"
SQL_REPEAT_DOC = "repeat customers: one GROUP BY count instead of one query per customer"
SQL_IDLE_DOC = "customers without orders: a set of ordering customers instead of one query each"


def _apply(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        if text.count(old) != 1:
            raise ValueError(f"edit target not found exactly once: {old[:60]!r}")
        text = text.replace(old, new)
    return text


def _stage_pairs(kind: str, stage: str, current: str, fixed: str) -> list[tuple[str, str]]:
    """The (old, new) replacements of one stage's fix: its slow code by its fast code and, for
    bash, the set-up line(s) the fast code needs before the main loop."""
    pairs = [(_stage(kind, stage, True), _stage(kind, stage, False))]
    if kind == "bash" and stage in ("lookup", "paths"):
        declare, loop = _BASH_DECLARE, _BASH_DC_LOOP
        if stage == "lookup":
            pairs.append((declare, declare + loop))
        else:
            anchor = loop if loop in current else declare
            pairs.append((anchor, anchor + "shopt -s extglob\n"))
    if _apply(current, pairs) != fixed:
        raise ValueError(f"the edit of {stage} does not give the program with it fixed")
    for old, new in pairs:
        if "'''" in old + new or old.endswith("\\") or new.endswith("\\"):
            raise ValueError(f"the edit of {stage} cannot be written as raw strings")
    return pairs


def _hard_parts(
    kind: str, slow: list[str], program, original: str, reference: str, script: str
) -> dict:
    """A hard task's faults, task-specific edits (one per slow stage, in program order),
    unfixed-<stage> near misses and traps."""
    order = [s for s in HARD_STAGES[kind] if s in slow]
    docs = dict(HARD_STAGE_DOCS)
    if kind == "sqlite":
        docs.update(lookup=SQL_LOOKUP_DOC, repeat=SQL_REPEAT_DOC, idle=SQL_IDLE_DOC)
    edits = []
    current, left = original, set(slow)
    for stage in order:
        left.discard(stage)
        fixed = program(set(left))
        pairs = _stage_pairs(kind, stage, current, fixed)
        edits.append({"stage": stage, "doc": docs[stage], "pairs": pairs})
        current = fixed
    if current != reference:
        raise ValueError("the hard edits do not end at the reference program")
    mutations = {}
    for stage in order:
        mutations[f"unfixed-{kind}-{stage}"] = (
            f"#!/bin/bash\n# Near miss: every bottleneck fixed but {stage}.\n"
            f"cat > {shlex.quote(script)} <<'__FACTORY_EOF__'\n{program({stage})}__FACTORY_EOF__\n"
        )
    return {
        "edits": edits,
        "faults": sorted(f"{kind}-{stage}" for stage in slow),
        "traps": list(PERF_TRAPS),
        "mutations": mutations,
    }


@register
class PerformanceBudget(Family):
    """A correct but slow script (python with quadratic loops, bash spawning processes for every
    line, python+sqlite issuing unindexed queries per row) must meet a time budget on a fresh
    dataset of the same size, with byte-identical output. Easy: one bottleneck; medium: two.
    Hard composes 3 or 4 slow stages drawn from the kind's grammar (``HARD_STAGES``: five or six
    stages, the program gaining report columns for the new ones; each slow stage alone blows the
    budget many times over), says only the symptom (no word of several bottlenecks, duplicates,
    missing entries or ties: ``PERF_TRAPS``), and its reference is what a person would type:
    profile a sample, one edit per slow stage, compare with the original on the sample, time the
    full data. Near misses ``unfixed-<kind>-<stage>``: every stage fixed but that one. The tests
    compare the output with the original script's on small generated inputs, and with a fast
    reference on a big one, timed (best of two runs)."""

    name = "performance-budget"
    title = "Make a slow script meet a time budget without changing its output"
    category = "performance"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        import inspect

        level, kind = level_and_kind(rng, difficulty, params, PERF_KINDS)
        spec = PERF_KINDS[kind]
        hard = level == 2
        if hard:
            slow = rng.sample(HARD_STAGES[kind], rng.choice([3, 4]))
        else:
            slow = rng.sample(spec["stages"], level + 1)
        team = rng.choice(TEAMS)
        base = rng.choice([f"/srv/{team}", f"/opt/{team}", f"/home/{team}", "/app"])
        budget = HARD_BUDGET[kind] if hard else spec["budget"]
        small_seeds = [rng.randrange(1 << 30) for _ in range(5)]
        env_seed, hidden_seed = rng.randrange(1 << 30), rng.randrange(1 << 30)
        data, small = f"{base}/{spec['data']}", dict(spec["small"])
        if kind == "python":
            theme = rng.choice(PERF_THEMES)
            big = _sizes(rng, spec["big"])
            script = f"{base}/{rng.choice(['report', 'summary', 'rollup', 'digest'])}.py"

            def program(slow_stages: set[str], drift: bool = False) -> str:
                return perf_py_script(theme, slow_stages, drift=drift, hard=hard)

            gen_call = f"perf_py_data(r, {theme!r}, **sizes, messy=True)"
            files_of = [f"{theme['events']}.csv", f"{theme['people']}.csv"]
            usage = f"python3 {script} {data}"
            what = (
                f"a per-{theme['group']} report of `{data}/{files_of[0]}` joined with "
                f"`{data}/{files_of[1]}`"
            )
        elif kind == "bash":
            tool = rng.choice(["summarize", "access-report", "logstat", "hostreport"])
            top = rng.randint(3, 8)
            big = _sizes(rng, spec["big"])
            script = f"{base}/bin/{tool}.sh"

            def program(slow_stages: set[str], drift: bool = False) -> str:
                if hard or slow_stages:
                    return perf_bash_script(tool, top, slow_stages, drift=drift, hard=hard)
                return perf_bash_fast(tool, top, drift=drift)  # easy/medium: one awk pass

            gen_call = "perf_bash_data(r, **sizes)"
            files_of = ["access.log", "hosts.txt"]
            usage = f"bash {script} {data}/access.log {data}/hosts.txt"
            what = (
                f"a per-host summary of `{data}/access.log` (datacenters from `{data}/hosts.txt`)"
            )
        else:
            top = rng.randint(3, 8)
            big = _sizes(rng, spec["big"])
            script = f"{base}/{rng.choice(['sales_report', 'regions', 'revenue'])}.py"

            def program(slow_stages: set[str], drift: bool = False) -> str:
                return perf_sql_script(top, slow_stages, drift=drift, hard=hard)

            gen_call = "perf_sql_data(r, **sizes)"
            files_of = ["shop.db"]
            usage = f"python3 {script} {data}/shop.db"
            what = f"a regional sales report from the SQLite database `{data}/shop.db`"
        original, reference = program(set(slow)), program(set())
        partial, drift = program({slow[0]}), program(set(), drift=True)
        gen = inspect.getsource(spec["datagen"])
        extra: dict[str, Any] = {}
        if hard:
            extra = _hard_parts(kind, slow, program, original, reference, script)
        return Draft(
            context={
                "hard": hard,
                "edits": extra.get("edits", []),
                "kind": kind,
                "level": level,
                "script": script,
                "data": data,
                "budget": budget,
                "usage": usage,
                "what": what,
                "interp": spec["interp"],
                "original": original,
                "reference": reference,
                "partial": partial,
                "drift": drift,
                "gen_source": gen,
                "gen_call": gen_call,
                "files_of": files_of,
                "big": big,
                "small": small,
                "small_seeds": small_seeds,
                "env_seed": env_seed,
                "hidden_seed": hidden_seed,
                "n_slow": len(slow),
                "slow": slow,
            },
            files={"environment/original/" + script.rsplit("/", 1)[1]: original},
            outputs=[script],
            separate_verifier=True,
            agent_timeout_sec=900.0,
            verifier_timeout_sec=240.0,
            tags=[kind, "optimisation", *slow],
            faults=extra.get("faults", []),
            traps=extra.get("traps", []),
            mutations=extra.get("mutations", {}),
        )
