"""The data generators of performance-budget. Their source is embedded in the tasks (the image
builds its data with them, the tests rebuild it), so this module lives in ``shipped/``."""


def perf_py_data(r, theme, n_events, n_people, n_groups, messy):
    """CSV texts (events, people) for the python kind. Shared with the tests (same source)."""
    words = [
        "north",
        "south",
        "east",
        "west",
        "central",
        "alpha",
        "beta",
        "gamma",
        "delta",
        "coast",
        "metro",
        "rural",
        "harbor",
        "summit",
        "valley",
        "plains",
        "lakes",
        "isles",
    ]
    groups = [f"{r.choice(words)}-{i}" for i in range(n_groups)]
    people = [f"{theme['who']}{r.randrange(10**6):06d}" for _ in range(n_people)]
    people = list(dict.fromkeys(people))
    roster = [(p, r.choice(groups)) for p in people]
    for _ in range(max(2, len(people) // 100)):
        roster.insert(r.randrange(len(roster) + 1), (r.choice(people), r.choice(groups)))
    lines = [f"{theme['who']},{theme['group']}"] + [f"{p},{g}" for p, g in roster]
    people_csv = "\n".join(lines) + "\n"
    ev = [f"{theme['id']},{theme['who']},{theme['qty']},{theme['price']}"]
    made = []
    for i in range(n_events):
        if made and r.random() < 0.03:
            eid, who, qty, price = r.choice(made)
            if messy and r.random() < 0.5:
                qty = str(r.randint(1, 9))
        else:
            eid = f"{r.choice('ABCDEFGH')}{i:06d}"
            who = r.choice(people) if r.random() > 0.01 else f"ghost{r.randrange(1000):03d}"
            qty, price = (
                str(r.randint(1, 9)),
                str(r.choice([99, 100, 250, 1000, r.randint(1, 5000)])),
            )
        made.append((eid, who, qty, price))
        ev.append(f"{eid},{who},{qty},{price}")
    return "\n".join(ev) + "\n", people_csv


def perf_bash_data(r, n_lines, n_hosts):
    """(access log, hosts file) texts for the bash kind. Shared with the tests (same source)."""
    kinds = ["web", "api", "db", "cache", "edge", "auth", "queue"]
    hosts = list(dict.fromkeys(f"{r.choice(kinds)}-{r.randrange(100):02d}" for _ in range(n_hosts)))
    dcs = ["fra1", "ams2", "nyc3", "sfo1", "sgp1", "lon1", "tor1"]
    table = [(h, r.choice(dcs)) for h in hosts if r.random() > 0.08]
    for _ in range(max(2, len(hosts) // 8)):
        table.insert(r.randrange(len(table) + 1), (r.choice(hosts), r.choice(dcs)))
    hosts_text = "".join(f"{h} {d}\n" for h, d in table)
    shapes = [
        "/api/items/{a}",
        "/users/{a}/orders/{b}",
        "/static/app.v{b}.js",
        "/health",
        "/login",
        "/search",
        "/api/v{b}/carts/{a}",
        "/img/{a}x{b}.png",
        "/feed",
    ]
    shapes = r.sample(shapes, 6)
    weights = [r.randint(1, 6) for _ in shapes]
    statuses = [200, 200, 200, 200, 201, 204, 301, 304, 404, 500, 502, 503]
    lines = []
    for i in range(n_lines):
        path = r.choices(shapes, weights)[0].format(a=r.randint(1, 4000), b=r.randint(1, 40))
        lines.append(
            f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{i % 24:02d}:{r.randrange(60):02d}:"
            f"{r.randrange(60):02d}Z {r.choice(hosts)} {r.choice(['GET', 'GET', 'POST', 'PUT'])} "
            f"{path} {r.choice(statuses)} {r.randint(0, 250000)}"
        )
    return "\n".join(lines) + "\n", hosts_text


def perf_sql_data(r, n_orders, n_customers, n_refunds):
    """SQL script creating the shop database of the sqlite kind. Shared with the tests."""
    regions = r.sample(
        [
            "north",
            "south",
            "east",
            "west",
            "central",
            "coast",
            "metro",
            "alps",
            "delta",
            "plains",
            "islands",
            "highlands",
        ],
        r.randint(5, 9),
    )
    first = [
        "ana",
        "ben",
        "chloe",
        "dev",
        "eva",
        "finn",
        "gus",
        "hana",
        "ivo",
        "jun",
        "kai",
        "lea",
        "max",
        "nia",
        "omar",
        "pia",
        "quin",
        "rui",
        "sol",
        "tao",
    ]
    cids = r.sample(range(1, 10**6), n_customers)
    rows = [
        (c, f"{r.choice(first)}.{r.choice(first)}{r.randrange(100)}", r.choice(regions))
        for c in cids
    ]
    for _ in range(max(2, n_customers // 150)):
        c = r.choice(cids)
        rows.insert(r.randrange(len(rows) + 1), (c, f"dup.{r.choice(first)}", r.choice(regions)))
    out = [
        "CREATE TABLE customers (cid INTEGER, name TEXT, region TEXT);",
        "CREATE TABLE orders (oid INTEGER, cid INTEGER, cents INTEGER);",
        "CREATE TABLE refunds (oid INTEGER, cents INTEGER);",
        "BEGIN;",
    ]
    out += [f"INSERT INTO customers VALUES ({c}, '{n}', '{g}');" for c, n, g in rows]
    for oid in range(1, n_orders + 1):
        cid = r.choice(cids) if r.random() > 0.01 else r.randrange(10**6, 2 * 10**6)
        out.append(
            f"INSERT INTO orders VALUES ({oid * 7 + r.randrange(7)}, {cid}, "
            f"{r.randint(50, 250000)});"
        )
    oids = [int(line.split("(")[1].split(",")[0]) for line in out if "INTO orders" in line]
    for _ in range(n_refunds):
        oid = r.choice(oids) if r.random() > 0.02 else 0
        out.append(f"INSERT INTO refunds VALUES ({oid}, {r.randint(1, 30000)});")
    out.append("COMMIT;")
    return "\n".join(out) + "\n"
