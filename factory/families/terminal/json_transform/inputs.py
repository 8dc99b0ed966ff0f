"""json-transform's input documents: the record themes and words (inputs.toml), and for each kind
(report, merge, reshape) the input files a task draws at a level."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.terminal.knobs import fresh


class _Theme(BaseModel):
    """The field names of the report kind's records (inputs.toml)."""

    model_config = ConfigDict(extra="forbid")

    what: str
    prefix: str
    actor: str
    region: str
    regions: list[str]
    items: str
    qty: str
    price: str
    statuses: list[str]


class _Inputs(BaseModel):
    """The input documents' vocabulary (inputs.toml)."""

    model_config = ConfigDict(extra="forbid")

    names: list[str]
    words: list[str]
    theme: list[_Theme]


_INPUTS = load_toml_model(Path(__file__).parent / "inputs.toml", _Inputs, "json-transform inputs")
JT_THEMES: list[dict[str, Any]] = [t.model_dump() for t in _INPUTS.theme]
"""The report kind's record themes, as plain dicts (a task's spec holds one, JSON-encoded)."""
JT_NAMES = _INPUTS.names
JT_WORDS = _INPUTS.words


def report_inputs(rng: random.Random, level: int, spec: dict) -> dict[str, str]:
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


def merge_inputs(rng: random.Random, level: int, spec: dict) -> dict[str, str]:
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


def _nested(rng: random.Random, depth: int) -> Any:
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
        return [_nested(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    keys = rng.sample(JT_WORDS + ["max size", "retry-count", "v2"], rng.randint(0, 4))
    return {k: _nested(rng, depth - 1) for k in keys}


def reshape_inputs(rng: random.Random, level: int, spec: dict) -> dict[str, str]:
    if level == 0:
        doc = {k: _nested(rng, 4) for k in rng.sample(JT_WORDS, 5)}
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
