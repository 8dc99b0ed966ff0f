"""json-transform: transform JSON documents (a report, a merge, a reshape) exactly as specified.
The reference transformations, whose source the tasks embed, are in
``shipped/transforms.py``."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.import_job import IMPORT_FAULTS, ImportJob, Wiring
from factory.families.terminal.knobs import fresh, level_of, spread
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.words import CTF_APPS
from factory.vocabulary import Difficulty

from .shipped.transforms import (
    jt_merge,
    jt_report,
    jt_reshape,
)

# =============================================================================================
# json-transform
# =============================================================================================

JT_THEMES = [
    {
        "what": "orders",
        "prefix": "o-",
        "actor": "customer",
        "region": "country",
        "regions": ["DE", "FR", "US", "JP", "BR", "IN", "SE"],
        "items": "items",
        "qty": "qty",
        "price": "price_cents",
        "statuses": ["paid", "shipped", "cancelled", "refunded", "pending"],
    },
    {
        "what": "tickets",
        "prefix": "t-",
        "actor": "reporter",
        "region": "team",
        "regions": ["core", "web", "data", "infra", "mobile"],
        "items": "worklogs",
        "qty": "hours",
        "price": "rate_cents",
        "statuses": ["open", "closed", "waiting", "spam", "escalated"],
    },
    {
        "what": "shipments",
        "prefix": "s-",
        "actor": "sender",
        "region": "hub",
        "regions": ["AMS", "FRA", "ORD", "SIN", "GRU", "NRT"],
        "items": "parcels",
        "qty": "count",
        "price": "fee_cents",
        "statuses": ["booked", "in_transit", "delivered", "lost", "returned"],
    },
    {
        "what": "invoices",
        "prefix": "inv-",
        "actor": "client",
        "region": "segment",
        "regions": ["smb", "enterprise", "public", "edu", "startup"],
        "items": "lines",
        "qty": "units",
        "price": "unit_cents",
        "statuses": ["draft", "sent", "paid", "void", "overdue"],
    },
]
JT_NAMES = [
    "Zoë Weiß",
    "Ana",
    "Bo Chen",
    "Émile",
    "Farah",
    "Gus",
    "Hanna",
    "Ivo",
    "José Núñez",
    "Kai",
    "Lena",
    "Miro",
    "Nadia",
    "Olu",
    "Priya",
    "Quinn",
    "Rafael",
    "Søren",
    "Tomás",
]


JT_WORDS = [
    "alpha",
    "bravo",
    "cedar",
    "dune",
    "ember",
    "flint",
    "grove",
    "haze",
    "iris",
    "jade",
    "kelp",
    "loom",
    "moss",
    "nova",
    "opal",
    "pine",
    "quill",
    "reed",
    "sage",
    "tide",
]


def _jt_report_data(rng: random.Random, level: int, spec: dict) -> dict[str, str]:
    t = spec["theme"]
    names = rng.sample(JT_NAMES, 7)
    used: set[str] = set()

    def new_id() -> str:
        return fresh(lambda: f"{t['prefix']}{rng.randint(1000, 99999)}", used)

    def items() -> list[dict]:
        return [
            {
                "sku": f"{rng.choice('ABCDEFGH')}{rng.randint(10, 99)}",
                t["qty"]: rng.randint(1, 5),
                t["price"]: rng.choice([0, 99, 250, 1000, 1999, rng.randint(1, 9000)]),
            }
            for _ in range(rng.randint(1, 4))
        ]

    def record(status: str | None = None) -> dict:
        rec: dict[str, Any] = {
            "id": new_id(),
            "status": status or rng.choice(t["statuses"]),
            t["actor"]: {"name": rng.choice(names), t["region"]: rng.choice(t["regions"])},
            t["items"]: items(),
            "created": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        }
        if level == 2:
            rec["version"] = rng.randint(1, 3)
        return rec

    if level == 0:
        recs = [record() for _ in range(rng.randint(14, 24))]
        st = spec["status"]
        a, b = record(st), record(st)
        b[t["items"]] = [dict(i) for i in a[t["items"]]]
        odd = record(st.capitalize() if st != st.capitalize() else st.upper())
        empty = record(st)
        empty[t["items"]] = []
        missing = record(st)
        del missing[t["items"]]
        recs += [a, b, odd, empty, missing]
        rng.shuffle(recs)
        return {"records.json": json.dumps(recs, indent=2, ensure_ascii=False) + "\n"}
    if level == 1:
        recs = [record() for _ in range(rng.randint(20, 32))]
        for _ in range(2):
            r = record(rng.choice(spec["statuses"]))
            del r[t["actor"]][t["region"]]
            recs.append(r)
        r = record(spec["statuses"][0])
        r[t["actor"]][t["region"]] = None
        recs.append(r)
        rng.shuffle(recs)
        return {"records.json": json.dumps(recs, indent=2, ensure_ascii=False) + "\n"}
    batches: list[list[dict]] = [[record() for _ in range(rng.randint(7, 11))] for _ in range(3)]
    # a newer version later on, with different content
    base = record(spec["statuses"][0])
    base["version"] = 1
    newer = json.loads(json.dumps(base))
    newer["version"] = 2
    newer[t["items"]] = items() + [{"sku": "Z99", t["qty"]: 3, t["price"]: 777}]
    batches[0].append(base)
    batches[2].insert(rng.randrange(len(batches[2]) + 1), newer)
    # an older version later on: must lose
    keep = record(spec["statuses"][-1])
    keep["version"] = 3
    stale = json.loads(json.dumps(keep))
    stale["version"] = 2
    stale["status"] = rng.choice([s for s in t["statuses"] if s != keep["status"]])
    batches[1].append(keep)
    batches[2].append(stale)
    # same version: the later file wins
    tie = record(spec["statuses"][0])
    tie2 = json.loads(json.dumps(tie))
    tie2[t["actor"]]["name"] = rng.choice([n for n in names if n != tie[t["actor"]]["name"]])
    batches[0].append(tie)
    batches[1].insert(0, tie2)
    bad = []
    r = record()
    del r["id"]
    bad.append(r)
    r = record()
    r["id"] = "X" + r["id"]
    bad.append(r)
    r = record()
    r["version"] = str(r["version"])
    bad.append(r)
    r = record()
    r["version"] = 0
    bad.append(r)
    r = record()
    r["status"] = "unknown"
    bad.append(r)
    r = record()
    r[t["items"]] = []
    bad.append(r)
    r = record()
    r[t["items"]][0][t["qty"]] = str(r[t["items"]][0][t["qty"]])
    bad.append(r)
    r = record()
    r[t["items"]][-1][t["price"]] = -5
    bad.append(r)
    for r in bad:
        batch = rng.choice(batches)
        batch.insert(rng.randrange(len(batch) + 1), r)
    return {
        f"batch-{i + 1}.json": json.dumps(b, indent=2, ensure_ascii=False) + "\n"
        for i, b in enumerate(batches)
    }


def _jt_merge_data(rng: random.Random, level: int, spec: dict) -> dict[str, str]:
    by, un = spec["by_name"], spec["union"]
    feats = ["search", "export", "audit", "sso", "billing", "beta-ui", "webhooks", "metrics"]
    base: dict[str, Any] = {
        "service": spec["app"],
        "server": {
            "host": "0.0.0.0",
            "port": rng.choice([8000, 8080, 9000]),
            "tls": {"enabled": False, "cert": f"/etc/{spec['app']}/tls.pem"},
            "motd": rng.choice(["Grüße", "Welcome", "Bienvenue à bord", "Hej då"]),
        },
        "database": {
            "url": f"postgres://db:5432/{spec['app']}",
            "pool": {"min": rng.randint(1, 3), "max": rng.randint(8, 20)},
            "replicas": [f"db-r{i}" for i in range(1, rng.randint(3, 4))],
        },
        "logging": {"level": "info", "sinks": ["stdout"]},
        un: rng.sample(feats, 3),
        by: [
            {"name": n, "weight": rng.randint(1, 5), "tags": [rng.choice(JT_WORDS)]}
            for n in rng.sample(["api", "auth", "media", "search", "cache"], 3)
        ],
        "limits": {"rps": rng.randint(50, 500), "burst": rng.randint(10, 99)},
    }
    items = list(base.items())
    rng.shuffle(items)
    base = dict(items)
    env: dict[str, Any] = {
        "server": {"port": rng.choice([443, 8443]), "tls": {"enabled": True}},
        "database": {
            "replicas": [f"prod-r{i}" for i in range(1, 3)],
            "pool": {"max": rng.randint(30, 60)},
        },
        "logging": {"level": rng.choice(["warn", "error"]), "format": "json"},
        un: [base[un][0], rng.choice([f for f in feats if f not in base[un]])],
        "limits": rng.randint(100, 900) if rng.random() < 0.5 else {"rps": 1000},
    }
    first = base[by][0]["name"]
    env[by] = [
        {"name": first, "weight": rng.randint(6, 9), "tags": ["prod"]},
        {"name": "reports", "weight": rng.randint(1, 4)},
    ]
    files = {spec["order"][0]: base, spec["order"][1]: env}
    if level >= 1:
        env["server"]["motd"] = None
        if level == 1:
            env["database"]["pool"]["min"] = None
        local: dict[str, Any] = {
            "logging": {"level": "debug", "sinks": None},
            "server": {"tls": {"cert": None}, "host": "127.0.0.1"},
            "nosuch": None,
        }
        if level == 2:
            local["server"]["port"] = str(rng.choice([8443, 9443]))
            local["logging"]["level"] = rng.choice(["verbose", "debug"])
            local["database"] = {"pool": {"min": rng.randint(70, 90)}}
            local[by] = [{"name": first, "tags": None}, {"name": base[by][1]["name"], "weight": 0}]
            local[un] = [rng.choice(feats), base[un][1]]
        files[spec["order"][2]] = local
    return {
        name: json.dumps(obj, indent=2, ensure_ascii=False) + "\n" for name, obj in files.items()
    }


def _jt_nested(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(
            [
                rng.randint(-5, 500),
                round(rng.uniform(0, 100), 2),
                rng.choice(JT_WORDS),
                rng.choice([True, False]),
                None,
                rng.choice(["Grüße", "naïve café", "über"]),
            ]
        )
    if rng.random() < 0.3:
        return [_jt_nested(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    keys = rng.sample(JT_WORDS + ["max size", "retry-count", "v2"], rng.randint(0, 4))
    return {k: _jt_nested(rng, depth - 1) for k in keys}


def _jt_reshape_data(rng: random.Random, level: int, spec: dict) -> dict[str, str]:
    if level == 0:
        doc = {k: _jt_nested(rng, 4) for k in rng.sample(JT_WORDS, 5)}
        doc["tags"] = [rng.choice(JT_WORDS), {"name": "x", "on": True}, []]
        doc["empty"] = {}
        return {spec["input"]: json.dumps(doc, indent=2, ensure_ascii=False) + "\n"}
    ids = rng.sample(range(1, 999), rng.randint(18, 30))
    recs = []
    for i, nid in enumerate(ids):
        parent = rng.choice(ids[:i]) if i and rng.random() < 0.8 else None
        rec = {
            "id": nid,
            "parent": parent,
            "name": f"{rng.choice(JT_WORDS)}-{nid}",
            "kind": rng.choice(["dir", "file", "link"]),
        }
        if level == 2 and rng.random() < 0.85:
            rec["size"] = rng.randint(0, 5000)
        recs.append(rec)
    # an orphan (its parent is unknown) becomes a root
    recs.append({"id": max(ids) + 1, "parent": 5000, "name": "orphan", "kind": "file"})
    # children listed out of id order
    hub = ids[0]
    for nid in sorted(rng.sample(range(1000, 1999), 3), reverse=True):
        recs.append({"id": nid, "parent": hub, "name": f"late-{nid}", "kind": "file"})
    rng.shuffle(recs)
    lines = [json.dumps(r, ensure_ascii=False) for r in recs]
    if level == 2:
        dup = dict(rng.choice(recs[:-1]))
        dup["name"] = dup["name"] + "-renamed"
        dup["size"] = 4242
        lines.append(json.dumps(dup))
        junk = [
            '{"id": 7, "name": "broken"',
            "not json at all",
            '{"id": "12", "name": "x"}',
            '{"name": "no id"}',
            json.dumps({"id": 3000, "name": 42}),
            "",
            "   ",
            "[1, 2, 3]",
        ]
        for j in junk:
            lines.insert(rng.randrange(len(lines) + 1), j)
    return {spec["input"]: "\n".join(lines) + "\n"}


#: Hard: the sub-problems a task composes (two to four): three about how the input files are
#: stored, the rest about the output's consumer, an import job run by cron as another account
#: (:mod:`..import_job`).
JT_INPUT_FAULTS = [
    "gzip-input",  # one input file archived with gzip (stored as <name>.gz)
    "bom",  # one input file starts with a UTF-8 byte order mark
    "legacy-encoding",  # one input file (with non-ASCII text) written in ISO-8859-1
]
JT_HARD_FAULTS = JT_INPUT_FAULTS + IMPORT_FAULTS
JT_TRAPS = {
    "gzip-input": ("an input file stored gzip-compressed", ("gzip", "gzipped", ".gz", "compress")),
    "bom": (
        "a byte order mark before the JSON",
        ("BOM", "byte order mark", "EF BB BF", "utf-8-sig"),
    ),
    "legacy-encoding": (
        "an input in ISO-8859-1",
        ("ISO-8859-1", "Latin-1", "latin1", "iconv", "cp1252", "encoding", "encodings"),
    ),
}
JT_HARD_SLIPS = [
    ("format-slip", "format", "the right data, the wrong layout (4-space indentation)"),
    ("edge-case-slip", "edge", "right layout, one rule of the specification mishandled"),
]
"""Hard: the templates' near misses (name, bug, note), made after the inputs are repaired."""
BOM = b"\xef\xbb\xbf"
#: The reference's filter per fault it repairs, in pipeline order.
JT_FILTERS = {
    "legacy-encoding": "iconv -f ISO-8859-1 -t UTF-8",
    "bom": "sed '1s/^\\xEF\\xBB\\xBF//'",
}


def _jt_store(text: str, faults: set[str]) -> bytes:
    """The bytes of an input file carrying ``faults`` (before any gzip, see the caller)."""
    data = text.encode("latin-1" if "legacy-encoding" in faults else "utf-8")
    data = BOM + data if "bom" in faults else data
    return gzip.compress(data, mtime=0) if "gzip-input" in faults else data


def _jt_seen(text: str, faults: set[str]) -> str:
    """The text the reference reads from a file whose ``faults`` are left as they are (raises
    where it cannot read it at all: a gzip file it looks for under its plain name, bytes that
    are not UTF-8)."""
    if "gzip-input" in faults:
        raise FileNotFoundError("only the .gz file exists")
    return _jt_store(text, faults).decode("utf-8")


def _jt_breaks(func, spec, inputs, expected, name: str, unfixed: set[str]) -> bool:
    """Whether the reference reading file ``name`` with the faults ``unfixed`` left as they are
    fails or makes something else than ``expected``."""
    try:
        seen = {**inputs, name: _jt_seen(inputs[name], unfixed)}
        return func(seen, spec, 2) != expected
    except (OSError, ValueError):  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        return True


def _jt_prep(
    in_dir: str, work: str, faulty: dict[str, list[str]], names: list[str], slip: str = ""
) -> list[str]:
    """The reference's commands that bring this task's inputs into ``work`` as plain UTF-8
    JSON: the files without a fault copied as they are, each other one through the filters
    of its faults (``slip``: that fault left as it is)."""
    fixes = {n: [f for f in faulty.get(n, []) if f != slip] for n in names}
    lines = [f"mkdir -p {work}"]
    if any(not fixes[n] for n in names):
        lines.append(f"cp -a {in_dir}/. {work}/")
    for name in names:
        if not fixes[name]:
            continue
        steps = [JT_FILTERS[f] for f in JT_FILTERS if f in fixes[name]]
        if "gzip-input" in fixes[name]:
            steps = [f"zcat {in_dir}/{name}.gz", *steps]
        else:
            steps[0] += f" {in_dir}/{name}"
        lines.append(f"{' | '.join(steps)} > {work}/{name}")
    return lines


JT_KINDS = {
    "report": (jt_report, _jt_report_data),
    "merge": (jt_merge, _jt_merge_data),
    "reshape": (jt_reshape, _jt_reshape_data),
}


@register
class JsonTransform(Family):
    """Reshape JSON documents with exact output rules. `report`: filter, project, sort and group
    records (JSON Lines with a key order; pretty JSON with sorted keys); hard: several batches
    with versioned duplicates and schema validation errors to report. `merge`: deep-merge
    layered config files with precedence; medium: null deletes; hard: arrays merged by name or
    as a union, plus a report of rule violations. `reshape`: flatten to dotted paths; medium:
    nest JSON Lines records into a tree; hard: with malformed lines to reject, duplicates and
    rolled-up totals. Hard also composes two to four sub-problems (:data:`JT_HARD_FAULTS`): an
    input stored gzip-compressed, with a byte order mark or in ISO-8859-1 (unannounced), and
    the output's import job (:mod:`..import_job`)."""

    name = "json-transform"
    title = "Reshape JSON documents into an exactly specified output"
    category = "data-wrangling"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        import inspect

        level = level_of(difficulty)
        kind = params.get("kind") or spread(rng, sorted(JT_KINDS), level)
        func, make = JT_KINDS[kind]
        app = rng.choice(CTF_APPS + ["atlas", "nimbus", "quokka"])
        root = rng.choice([f"/srv/{app}", f"/data/{app}", f"/home/analyst/{app}", f"/opt/{app}"])
        if level == 2 and root.startswith("/home"):  # the import job's account must get in
            root = rng.choice([f"/srv/{app}", f"/data/{app}", f"/opt/{app}"])
        spec: dict[str, Any] = {"app": app}
        if kind == "report":
            t = rng.choice(JT_THEMES)
            spec["theme"] = t
            spec["status"] = rng.choice(t["statuses"])
            spec["statuses"] = rng.sample(t["statuses"], rng.randint(2, 3))
            orders = [
                o
                for o in __import__("itertools").permutations(["id", t["actor"], "total"])
                if list(o) != sorted(o)
            ]
            spec["key_order"] = list(rng.choice(orders))
            in_dir = f"{root}/{'batches' if level == 2 else 'in'}"
        elif kind == "merge":
            env = rng.choice(["production", "staging", "eu-prod", "canary"])
            spec["order"] = ["base.json", f"{env}.json"] + (["local.json"] if level >= 1 else [])
            spec["env"] = env
            spec["by_name"] = rng.choice(["upstreams", "backends", "targets"])
            spec["union"] = rng.choice(["features", "flags", "plugins"])
            spec["output"] = "effective.json"
            in_dir = f"{root}/config"
        else:
            spec["input"] = (
                f"{rng.choice(['manifest', 'inventory', 'settings'])}.json"
                if level == 0
                else f"{rng.choice(['nodes', 'tree', 'catalog'])}.jsonl"
            )
            in_dir = f"{root}/in"
        if level < 2:
            inputs = make(rng, level, spec)
            expected = func(inputs, spec, level)
            faults: list[str] = []
            faulty: dict[str, list[str]] = {}
        else:
            faults, faulty, inputs, expected = self._hard_inputs(rng, kind, spec)
        out_dir = f"{root}/out"
        stored = {n: _jt_store(t, set(faulty.get(n, []))) for n, t in inputs.items()}
        files: dict[str, str | bytes] = {
            f"environment/input/{n}{'.gz' if 'gzip-input' in faulty.get(n, []) else ''}": (
                stored[n] if n in faulty else inputs[n]
            )
            for n in inputs
        }
        context: dict[str, Any] = {
            "kind": kind,
            "level": level,
            "spec": spec,
            "root": root,
            "in_dir": in_dir,
            "out_dir": out_dir,
            "inputs": sorted(inputs),
            "expected": expected,
            "spec_json": json.dumps(spec),
            "impl": inspect.getsource(func),
            "func": func.__name__,
        }
        wiring = Wiring.none()
        tags = ["json", kind] + (["validation"] if level == 2 else [])
        if level == 2:
            main = {"report": "summary.json", "merge": spec.get("output"), "reshape": "tree.json"}
            job = ImportJob.draw(
                rng, app, f"{out_dir}/{main[kind]}", None, [f for f in faults if f in IMPORT_FAULTS]
            )
            work = f"/tmp/{app}-input"
            names = sorted(inputs)
            context.update(
                main_out=job.out,
                faults=faults,
                faulty=faulty,
                job=job.context(),
                work=work,
                prep=_jt_prep(in_dir, work, faulty, names) if faulty else [],
            )
            solve = self.template("solution/solve.sh.j2")
            unfixed = near_misses(
                self,
                context,
                faults,
                each=lambda f: {"prep": _jt_prep(in_dir, work, faulty, names, f)},
            )
            wiring = job.wire(faults, JT_TRAPS, unfixed)
            # the layout and rule near misses after the same repairs (they override the
            # templates' mutations, which read the inputs as they lie)
            for name, bug, note in JT_HARD_SLIPS:
                wiring.mutations[name] = solve.render(**context, bug=bug, note=note)
            files.update(job.files())
            tags += ["cron", "encoding"]
        return wiring.draft(
            [f"{out_dir}/{name}" for name in expected],
            context=context,
            files=files,
            tags=tags,
            faults=faults,
            **({"agent_timeout_sec": 900.0} if level == 2 else {}),  # (as the text families)
        )

    @staticmethod
    def _hard_inputs(
        rng: random.Random, kind: str, spec: dict[str, Any]
    ) -> tuple[list[str], dict[str, list[str]], dict[str, str], dict[str, str]]:
        """A hard draw: the faults (two to four of :data:`JT_HARD_FAULTS`), the input files
        that carry them (name -> faults), the inputs and the expected outputs. The data is
        drawn again until every input fault left unfixed changes what the reference makes of
        the files (or stops it): a file in ISO-8859-1 holds non-ASCII text, one with a byte
        order mark gives another tree."""
        func, make = JT_KINDS[kind]
        faults = sorted(rng.sample(JT_HARD_FAULTS, rng.randint(2, 4)))
        # (the tree's nodes are ASCII; one file cannot be in ISO-8859-1 and carry a UTF-8 BOM)
        while kind == "reshape" and "legacy-encoding" in faults:
            faults = sorted(rng.sample(JT_HARD_FAULTS, rng.randint(2, 4)))
        for _ in range(40):
            inputs = make(rng, 2, spec)
            expected = func(inputs, spec, 2)
            names = sorted(inputs)
            faulty: dict[str, list[str]] = {}
            accented = [n for n in names if not inputs[n].isascii()]
            if "legacy-encoding" in faults:
                if not accented:
                    continue
                faulty[rng.choice(accented)] = ["legacy-encoding"]
            if "bom" in faults:
                free = [n for n in names if n not in faulty]
                faulty.setdefault(rng.choice(free), []).append("bom")
            if "gzip-input" in faults:
                faulty.setdefault(rng.choice(names), []).append("gzip-input")
            if all(
                _jt_breaks(func, spec, inputs, expected, n, {f}) for n in faulty for f in faulty[n]
            ):
                return faults, {n: sorted(fs) for n, fs in faulty.items()}, inputs, expected
        raise RuntimeError("json-transform: could not draw inputs that expose every fault")
