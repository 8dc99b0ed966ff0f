"""performance-budget: make a slow report program fast enough for its time budget without
changing its output. The program is assembled from stages, each with a slow and a fast version
(``shipped/stages/``); the data generators in ``shipped/datagen.py`` also run in the tests."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.knobs import level_of, spread
from factory.families.terminal.shipped import read
from factory.families.terminal.words import TEAMS
from factory.vocabulary import Difficulty

from .shipped import datagen

# =============================================================================================
# performance-budget
# =============================================================================================


def _stage(kind: str, name: str, slow: bool) -> str:
    """The code of one stage of a report program (``shipped/stages/<kind>/``)."""
    ext = "sh" if kind == "bash" else "py"
    return read(__file__, f"stages/{kind}/{name}.{'slow' if slow else 'fast'}.{ext}")


PERF_THEMES = [
    {
        "events": "orders",
        "id": "order_id",
        "who": "customer",
        "people": "customers",
        "group": "region",
        "qty": "units",
        "price": "unit_cents",
    },
    {
        "events": "tickets",
        "id": "ticket_id",
        "who": "agent",
        "people": "agents",
        "group": "team",
        "qty": "hours",
        "price": "rate_cents",
    },
    {
        "events": "shipments",
        "id": "shipment_id",
        "who": "carrier",
        "people": "carriers",
        "group": "hub",
        "qty": "boxes",
        "price": "box_cents",
    },
    {
        "events": "bookings",
        "id": "booking_id",
        "who": "guest",
        "people": "guests",
        "group": "country",
        "qty": "nights",
        "price": "night_cents",
    },
    {
        "events": "jobs",
        "id": "job_id",
        "who": "runner",
        "people": "runners",
        "group": "pool",
        "qty": "minutes",
        "price": "minute_cents",
    },
]


def perf_py_script(theme: dict, slow: set[str], drift: bool = False) -> str:
    t = theme
    parts = [
        "#!/usr/bin/env python3",
        f'"""Per-{t["group"]} report of {t["events"]}.csv: records, revenue and top {t["who"]}.',
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
    for stage in ("dedup", "join", "top"):
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
        "    groups = {}",
        "    for rec in rows:",
        "        groups.setdefault(group_of(index, rec[WHO]), []).append(rec)",
        "    report = []",
        "    for group, recs in groups.items():",
        "        total = sum(int(rec[QTY]) * int(rec[PRICE]) for rec in recs)",
        "        members = {rec[WHO] for rec in recs}",
        "        report.append((group, len(recs), total, top_member(members, ranking)))",
        "    report.sort(key=lambda item: (-item[2], item[0]))",
        f'    print("{t["group"]}\\t{t["events"]}\\trevenue\\ttop_{t["who"]}")',
        "    for group, count, total, top in report:",
        '        print(f"{group}\\t{count}\\t{total // 100}.{total % 100:02d}\\t{top}")',
        "",
        "",
        'if __name__ == "__main__":',
        "    main()",
    ]
    return "\n".join(parts) + "\n"


def perf_bash_script(name: str, top: int, slow: set[str]) -> str:
    def stage(key: str) -> str:
        return _stage("bash", key, key in slow)

    head = (
        "#!/bin/bash\n"
        f"# {name}: requests, bytes and server errors (status >= 500) per host, with the\n"
        f"# host's datacenter, then the {top} busiest endpoints (digits in paths folded to N).\n"
        f"# Usage: {name} ACCESS_LOG HOSTS_FILE\n"
        "log=$1\nhosts=$2\n"
        "declare -A req bytes errs where seen dc_of\n"
    )
    if "lookup" not in slow:
        head += (
            'while read -r h d; do\n    [ -n "${dc_of[$h]+set}" ] || dc_of[$h]=$d\n'
            'done < "$hosts"\n'
        )
    if "paths" not in slow:
        head += "shopt -s extglob\n"
    body = stage("fields") + stage("lookup") + '    [ -n "$dc" ] || dc=unknown\n' + stage("paths")
    body += (
        "    req[$host]=$(( ${req[$host]:-0} + 1 ))\n"
        "    bytes[$host]=$(( ${bytes[$host]:-0} + size ))\n"
        '    if [ "$status" -ge 500 ]; then\n'
        "        errs[$host]=$(( ${errs[$host]:-0} + 1 ))\n    fi\n"
        "    where[$host]=$dc\n"
        "    seen[$norm]=$(( ${seen[$norm]:-0} + 1 ))\n"
        'done < "$log"\n'
    )
    tail = (
        "printf '%s\\n' \"${!req[@]}\" | LC_ALL=C sort | while IFS= read -r host; do\n"
        '    printf \'%s %s %d %d %d\\n\' "$host" "${where[$host]}" "${req[$host]}" '
        '"${bytes[$host]}" "${errs[$host]:-0}"\ndone\n'
        'echo "--- busiest endpoints"\n'
        'for p in "${!seen[@]}"; do\n    printf \'%d %s\\n\' "${seen[$p]}" "$p"\n'
        f"done | LC_ALL=C sort -k1,1nr -k2,2 | head -n {top}\n"
    )
    return head + body + tail


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


def perf_sql_script(top: int, slow: set[str], drift: bool = False) -> str:
    def stage(key: str) -> str:
        code = _stage("sqlite", key, key in slow)
        if drift and key == "lookup":
            code = code.replace(
                "known.setdefault(cid, (name, region))", "known[cid] = (name, region)"
            )
        return code

    return (
        "#!/usr/bin/env python3\n"
        '"""Regional sales report from the shop database: orders, distinct customers and net\n'
        f"revenue (order amount minus refunds) per region, then the {top} biggest customers.\n\n"
        'Usage: report.py DATABASE\n"""\n\nimport sqlite3\nimport sys\n\n\n'
        "def money(cents):\n"
        '    sign = "-" if cents < 0 else ""\n'
        "    cents = abs(cents)\n"
        '    return f"{sign}{cents // 100}.{cents % 100:02d}"\n\n\n'
        "def main():\n"
        "    db = sqlite3.connect(sys.argv[1])\n"
        '    orders = db.execute("SELECT oid, cid, cents FROM orders ORDER BY rowid").fetchall()\n'
        + stage("lookup")
        + "\n"
        + stage("refunds")
        + "\n"
        "    regions = {}\n"
        "    for oid, cid, cents in orders:\n"
        "        _name, region = customer(cid)\n"
        "        stats = regions.setdefault(region, [0, set(), 0])\n"
        "        stats[0] += 1\n"
        "        stats[1].add(cid)\n"
        "        stats[2] += cents - refunded(oid)\n"
        '    print("region\\torders\\tcustomers\\tnet")\n'
        "    for region, (count, cids, net) in sorted(regions.items(), key=lambda kv: (-kv[1][2], kv[0])):\n"
        '        print(f"{region}\\t{count}\\t{len(cids)}\\t{money(net)}")\n'
        + stage("totals")
        + "    spend.sort(key=lambda item: (-item[0], item[1]))\n"
        '    print("top customers")\n'
        f"    for total, cid in spend[:{top}]:\n"
        '        print(f"{cid}\\t{customer(cid)[0]}\\t{money(total)}")\n\n\n'
        'if __name__ == "__main__":\n    main()\n'
    )


PERF_KINDS = {
    "python": {"stages": ["dedup", "join", "top"], "budget": 6.0},
    "bash": {"stages": ["fields", "lookup", "paths"], "budget": 4.0},
    "sqlite": {"stages": ["lookup", "refunds", "totals"], "budget": 4.0},
}
PERF_STAGE_DOCS = {
    "dedup": "dropping repeated records",
    "join": "finding each record's group",
    "top": "finding each group's top member",
    "fields": "splitting each log line into fields",
    "lookup": "looking up each host's datacenter",
    "paths": "folding the digits of each path",
}


@register
class PerformanceBudget(Family):
    """A correct but slow script (python with quadratic loops, bash spawning processes for every
    line, python+sqlite issuing unindexed queries per row) must meet a time budget on a fresh
    dataset of the same size, with byte-identical output. Easy: one bottleneck; medium: two;
    hard: three independent ones (each alone blows the budget 5x or more). The tests compare the
    output with the original script's on small generated inputs, and with a fast reference on a
    big one, timed (best of two runs)."""

    name = "performance-budget"
    title = "Make a slow script meet a time budget without changing its output"
    category = "performance"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        import inspect

        level = level_of(difficulty)
        kind = params.get("kind") or spread(rng, sorted(PERF_KINDS), level)
        spec = PERF_KINDS[kind]
        slow = rng.sample(spec["stages"], level + 1)
        team = rng.choice(TEAMS)
        base = rng.choice([f"/srv/{team}", f"/opt/{team}", f"/home/{team}", "/app"])
        budget = spec["budget"]
        small_seeds = [rng.randrange(1 << 30) for _ in range(5)]
        env_seed, hidden_seed = rng.randrange(1 << 30), rng.randrange(1 << 30)
        if kind == "python":
            theme = rng.choice(PERF_THEMES)
            big = {
                "n_events": rng.randint(36000, 40000),
                "n_people": rng.randint(23000, 25000),
                "n_groups": rng.randint(6, 24),
            }
            small = {"n_events": 60, "n_people": 14, "n_groups": 4}
            script = f"{base}/{rng.choice(['report', 'summary', 'rollup', 'digest'])}.py"
            data = f"{base}/data"
            original = perf_py_script(theme, set(slow))
            reference = perf_py_script(theme, set())
            partial = perf_py_script(theme, {slow[0]})
            drift = perf_py_script(theme, set(), drift=True)
            gen = inspect.getsource(datagen.perf_py_data)
            gen_call = f"perf_py_data(r, {theme!r}, **sizes, messy=True)"
            files_of = [f"{theme['events']}.csv", f"{theme['people']}.csv"]
            usage = f"python3 {script} {data}"
            what = (
                f"a per-{theme['group']} report of `{data}/{files_of[0]}` joined with "
                f"`{data}/{files_of[1]}`"
            )
            interp = "python3"
        elif kind == "bash":
            tool = rng.choice(["summarize", "access-report", "logstat", "hostreport"])
            top = rng.randint(3, 8)
            big = {"n_lines": rng.randint(11500, 12500), "n_hosts": rng.randint(30, 60)}
            small = {"n_lines": 90, "n_hosts": 12}
            script = f"{base}/bin/{tool}.sh"
            data = f"{base}/logs"
            original = perf_bash_script(tool, top, set(slow))
            reference = perf_bash_fast(tool, top)
            partial = perf_bash_script(tool, top, {slow[0]})
            drift = perf_bash_fast(tool, top, drift=True)
            gen = inspect.getsource(datagen.perf_bash_data)
            gen_call = "perf_bash_data(r, **sizes)"
            files_of = ["access.log", "hosts.txt"]
            usage = f"bash {script} {data}/access.log {data}/hosts.txt"
            what = (
                f"a per-host summary of `{data}/access.log` (datacenters from `{data}/hosts.txt`)"
            )
            interp = "bash"
        else:
            top = rng.randint(3, 8)
            big = {
                "n_orders": rng.randint(28000, 32000),
                "n_customers": rng.randint(48000, 52000),
                "n_refunds": rng.randint(40000, 44000),
            }
            small = {"n_orders": 70, "n_customers": 40, "n_refunds": 30}
            script = f"{base}/{rng.choice(['sales_report', 'regions', 'revenue'])}.py"
            data = f"{base}/db"
            original = perf_sql_script(top, set(slow))
            reference = perf_sql_script(top, set())
            partial = perf_sql_script(top, {slow[0]})
            drift = perf_sql_script(top, set(), drift=True)
            gen = inspect.getsource(datagen.perf_sql_data)
            gen_call = "perf_sql_data(r, **sizes)"
            files_of = ["shop.db"]
            usage = f"python3 {script} {data}/shop.db"
            what = f"a regional sales report from the SQLite database `{data}/shop.db`"
            interp = "python3"
        return Draft(
            context={
                "kind": kind,
                "level": level,
                "script": script,
                "data": data,
                "budget": budget,
                "usage": usage,
                "what": what,
                "interp": interp,
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
        )
