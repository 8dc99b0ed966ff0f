"""csv-json-wrangle: join CSV files into JSON or flatten nested JSON into CSV, with the typing,
ordering and null rules the instruction states."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Mapping
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from factory.datafiles import load_toml_table
from factory.families.base import Draft, Family, register
from factory.families.terminal.import_job import IMPORT_FAULTS, ImportJob, Wiring, reachable_folder
from factory.families.terminal.knobs import pick
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.text_tasks import (
    EASY,
    HARD,
    OUT_DIRS,
    TT_CITIES,
    TT_FIRST,
    TT_HARD_PRODUCTS,
    TT_LAST,
    TT_PRODUCTS,
    csv_text,
    sha256_hex,
    text_draft,
    utc_offset,
)
from factory.families.terminal.traps import load_traps
from factory.vocabulary import Difficulty

from .shipped.reference import (
    _cj_same,
    _cj_solve,
    parse_result,
)

_DOMAINS = load_toml_table(Path(__file__).parent / "domains.toml")
CJ_DOMAINS: list[dict] = _DOMAINS["join"]
"""Parent/child tables the join task is drawn from (domains.toml)."""
CJ_LDOMAINS: list[dict] = _DOMAINS["flatten"]
"""Nested JSON records the flatten task is drawn from (domains.toml)."""

CJ_BUGS = {
    ("join", "easy"): ["strings", "no-filter", "bool-as-string"],
    ("join", "medium"): ["no-filter", "rows-not-distinct", "sort-as-text"],
    ("join", "hard"): ["keep-duplicates", "skip-missing", "naive-split"],
    ("flatten", "easy"): ["python-bools", "missing-as-none", "key-order"],
    ("flatten", "medium"): ["no-filter", "tags-repr", "no-sort"],
    ("flatten", "hard"): ["keep-duplicates", "naive-time", "no-quoting"],
}
CJ_BUG_NOTES = {
    "strings": "copies every value as a string (no type conversion)",
    "no-filter": "forgets to drop the excluded rows",
    "bool-as-string": "leaves the true/false column as strings",
    "rows-not-distinct": "counts rows instead of distinct parents",
    "sort-as-text": "sorts the totals as text",
    "keep-duplicates": "keeps every row of a repeated id instead of the last one",
    "skip-missing": "drops rows whose measure is missing instead of counting them",
    "naive-split": "splits CSV lines on commas, ignoring quoting",
    "python-bools": "writes booleans as Python's True/False",
    "missing-as-none": "writes missing values as None",
    "key-order": "keeps the JSON key order instead of the requested column order",
    "tags-repr": "writes lists as Python list literals",
    "no-sort": "keeps the input order",
    "naive-time": "keeps and sorts the timestamps as written, without converting to UTC",
    "no-quoting": "joins fields with commas without CSV quoting",
}

#: Hard: the sub-problems a task composes (two to four): three about the inputs, the rest about
#: the output's consumer, an import job run by cron as another account (:mod:`..import_job`).
CJ_INPUT_FAULTS = [
    "legacy-encoding",  # an input written by a legacy exporter in ISO-8859-1, with a non-ASCII name
    "bom",  # the first chunk of the main input starts with a UTF-8 byte order mark
    "split-export",  # the main input is rotated: the older rows are in <name>.1.gz
]
CJ_HARD_FAULTS = CJ_INPUT_FAULTS + IMPORT_FAULTS
CJ_TRAPS = load_traps(Path(__file__).parent / "traps.toml", CJ_INPUT_FAULTS)
"""The input faults the instruction does not announce: fault -> Trap fields (traps.toml)."""
CJ_ACCENTED = {
    "person": ["José Núñez", "Zoë Müller", "Søren Ødegård", "Chloé Lefèvre", "Jürgen Weiß"],
    "product": ["Crème Fraîche 200g", "Café Crème Filter", "Säge Blatt Pro", "Piñata XL"],
    "place": ["Zürich Hbf", "São Paulo Sul", "Malmö Hamn", "Québec Nord"],
}
BOM = "\ufeff"


def _cj_split(text: str, csv_header: bool, rng: random.Random) -> tuple[str, str]:
    """(older, newer) halves of a rotated export (each with the header line for CSV)."""
    lines = text.split("\n")[:-1]
    head, body = (lines[:1], lines[1:]) if csv_header else ([], lines)
    k = int(len(body) * rng.uniform(0.3, 0.5))
    return "\n".join(head + body[:k]) + "\n", "\n".join(head + body[k:]) + "\n"


def _cj_prep(
    spec: dict, main: str, srcdir: str, work: str, faults: list[str], slip: str = ""
) -> list[str]:
    """The reference's commands that turn this task's inputs into plain UTF-8 files in
    ``work`` (``slip``: the fault left as it is)."""
    lines = []
    bom = "bom" in faults and slip != "bom"
    unbom = "sed '1s/^\\xEF\\xBB\\xBF//'"
    legacy = "legacy-encoding" in faults and slip != "legacy-encoding"
    iconv = "iconv -f ISO-8859-1 -t UTF-8"
    if spec["shape"] == "join":
        parent = spec["parent_file"]
        copy = iconv if legacy else "cp"
        lines.append(f"{copy} {srcdir}/{parent} {'> ' if legacy else ''}{work}/{parent}")
    src, dest = f"{srcdir}/{main}", f"{work}/{main}"
    if "split-export" in faults and slip != "split-export":
        lines.append(f"zcat {src}.1.gz{' | ' + unbom if bom else ''} > {dest}")
        if spec["shape"] == "join":
            lines.append(f"tail -n +2 {src} >> {dest}")
        else:
            lines.append(f"{iconv if legacy else 'cat'} {src} >> {dest}")
    elif bom:
        lines.append(f"{unbom} {src} > {dest}")
    elif legacy and spec["shape"] == "flatten":
        lines.append(f"{iconv} {src} > {dest}")
    else:
        lines.append(f"cp {src} {dest}")
    return lines


def _cj_name(rng: random.Random, kind: str, hard: bool) -> str:
    if kind == "person":
        first, last = rng.choice(TT_FIRST), rng.choice(TT_LAST)
        return f"{last}, {first}" if hard and rng.random() < 0.25 else f"{first} {last}"
    if kind == "product":
        pool = TT_PRODUCTS + (TT_HARD_PRODUCTS if hard else [])
        return f"{rng.choice(pool)} {rng.choice(['S', 'M', 'L', 'XL', 'Pro', 'Mini', '2'])}"
    city = rng.choice(TT_CITIES)
    suffix = rng.choice(["North", "East", "Harbor", "Airport", "Hill", "Dam", "Pier"])
    return f"{city}, {suffix}" if hard and rng.random() < 0.3 else f"{city} {suffix}"


def _cj_join(
    rng: random.Random, level: Difficulty, accent: bool = False
) -> tuple[dict, dict[str, str]]:
    hard = level is HARD
    dom = rng.choice(CJ_DOMAINS)
    group = rng.choice(list(dom["groups"]))
    gvals = rng.sample(dom["groups"][group], rng.randint(3, 5))
    lo, hi = dom["scale"]
    good, bad = dom["status"][:2], dom["status"][2]
    pids = rng.sample(range(1, 1000), pick(rng, level, (6, 10), (8, 14), (10, 16)))
    parents = []
    gweights = [rng.choice([1, 2, 4, 8]) for _ in gvals]
    for i, pid in enumerate(pids):
        g = gvals[i] if i < len(gvals) else rng.choices(gvals, gweights)[0]
        parents.append([str(pid), _cj_name(rng, dom["names"], hard), g])
    if hard and not any("," in p[1] for p in parents):
        parents[0][1] = (
            "Nuts, hex"
            if dom["names"] == "product"
            else f"{rng.choice(TT_LAST)}, {rng.choice(TT_FIRST)}"
        )
    if accent:  # a name that a legacy (Latin-1) export writes with other bytes than UTF-8
        plain = [p for p in parents if "," not in p[1]]
        plain[-1][1] = rng.choice(CJ_ACCENTED[dom["names"]])
    comma_pid = next((p[0] for p in parents if "," in p[1]), None)
    n_c = pick(rng, level, (12, 20), (40, 70), (60, 90))
    cids = rng.sample(range(1, 100000), n_c + 10)
    start = date(rng.randint(2021, 2025), rng.randint(1, 12), 1)
    pweights = [rng.choice([1, 1, 2, 3, 6]) for _ in parents]
    rows = []

    def measure(value: float) -> str:
        text = f"{value:.2f}"
        if hard and value >= 1000 and rng.random() < 0.6:
            text = f"{value:,.2f}"
        if hard and rng.random() < 0.1:
            text = f" {text} "
        return text

    for i in range(n_c):
        parent = rng.choices(parents, pweights)[0] if i else parents[0]
        if hard and i == 1 and comma_pid:
            parent = next(p for p in parents if p[0] == comma_pid)
        value = round(rng.uniform(lo, hi), 2)
        status = rng.choices(good + [bad], [5, 3, 2])[0] if i > 1 else good[0]
        day = start + timedelta(days=rng.randint(0, 89))
        rows.append(
            [
                str(cids[i]),
                parent[0],
                day.isoformat(),
                measure(value),
                status,
                rng.choice(["true", "false"]),
            ]
        )
    if hard:
        spare = [x for x in range(1, 1000) if str(x) not in [p[0] for p in parents]]
        for k in range(rng.randint(2, 4)):  # orphans
            rows.append(
                [
                    str(cids[n_c + k]),
                    str(rng.choice(spare)),
                    start.isoformat(),
                    measure(round(rng.uniform(lo, hi), 2)),
                    good[0],
                    "false",
                ]
            )
        for _ in range(rng.randint(3, 6)):  # missing measures
            rows[rng.randrange(2, len(rows))][3] = rng.choice(["", "N/A", "null", "-"])
        rng.shuffle(rows)
        for _ in range(rng.randint(3, 5)):  # corrections: the same id again, later
            src = rows[rng.randrange(len(rows) // 2)]
            fixed = list(src)
            fixed[3] = measure(round(rng.uniform(lo, hi), 2))
            fixed[4] = rng.choice(good + [bad])
            rows.append(fixed)
        rows[-1][4] = good[0]
    else:
        rng.shuffle(rows)
    cols = [dom["cid"], dom["pid"], dom["date"], dom["measure"], "status", dom["flag"]]
    types = ["int", "int", "str", "float", "str", "bool"]
    if level is not EASY:
        cols, types, rows = cols[:5], types[:5], [r[:5] for r in rows]
    spec = {
        "shape": "join",
        "level": level.value,
        "child_file": f"{dom['child']}.csv",
        "parent_file": f"{dom['parent']}.csv",
        "child": dom["child"],
        "parent": dom["parent"],
        "cid": dom["cid"],
        "pid": dom["pid"],
        "pname": dom["pname"],
        "group": group,
        "measure": dom["measure"],
        "status": "status",
        "bad": bad,
        "types": list(zip(cols, types, strict=True)),
    }
    texts = {f"{dom['child']}.csv": csv_text([cols, *rows])}
    if level is not EASY:
        texts[f"{dom['parent']}.csv"] = csv_text([[dom["pid"], dom["pname"], group], *parents])
    return spec, texts


def _cj_flatten(
    rng: random.Random, level: Difficulty, accent: bool = False
) -> tuple[dict, dict[str, str]]:
    hard = level is HARD
    dom = rng.choice(CJ_LDOMAINS)
    n = pick(rng, level, (10, 16), (25, 40), (35, 55))
    keep = rng.choice(dom["kinds"])
    ids = rng.sample(range(100, 99999), n)
    t0 = datetime(
        rng.randint(2022, 2025), rng.randint(1, 12), rng.randint(1, 28), tzinfo=timezone.utc
    )
    who, wf = dom["who"], dom["who_fields"]
    people = [
        {
            wf[0]: rng.randint(1, 500),
            wf[1]: _cj_name(rng, "person", hard),
            wf[2]: rng.choice(dom["who_values"]),
        }
        for _ in range(rng.randint(5, 9))
    ]
    if hard and not any("," in p[wf[1]] for p in people):
        people[0][wf[1]] = f"{rng.choice(TT_LAST)}, {rng.choice(TT_FIRST)}"
    plain = [p for p in people if "," not in p[wf[1]]]
    if accent and plain:  # keep the name with a comma: the first record needs one
        plain[-1][wf[1]] = rng.choice(CJ_ACCENTED["person"])
    recs = []
    for i in range(n):
        t = t0 + timedelta(minutes=rng.randint(0, 7 * 24 * 60), seconds=rng.randint(0, 59))
        if hard:
            off = rng.choice([0, 60, 120, -300, 330, 540])
            stamp = f"{(t + timedelta(minutes=off)).replace(tzinfo=None).isoformat()}{utc_offset(off, True)}"
        else:
            stamp = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        kind = keep if i < 3 else rng.choice(dom["kinds"])
        value: Any = rng.choice([rng.randint(1, 300), round(rng.uniform(0.5, 500), 2)])
        if isinstance(value, float) and value == int(value):
            value = int(value)
        person = (
            dict(rng.choice(people))
            if i
            else dict(next(p for p in people if "," in p[wf[1]] or not hard))
        )
        if level is EASY:
            rec = {
                dom["id"]: ids[i],
                dom["ts"]: stamp,
                dom["kind"]: kind,
                f"{who}_name": person[wf[1]],
                dom["num"]: value,
                dom["flag"]: rng.random() < 0.5,
            }
            if i in (1, 2) or rng.random() < 0.1:
                if rng.random() < 0.5:
                    del rec[dom["num"]]
                else:
                    rec[dom["num"]] = None
        else:
            tags = rng.sample(dom["tag_values"], rng.randint(0 if i else 1, 3))
            rec = {
                dom["id"]: ids[i],
                dom["ts"]: stamp,
                dom["kind"]: kind,
                who: person,
                dom["num"]: value,
                dom["tags"]: tags,
                dom["flag"]: rng.random() < 0.5,
            }
            if hard and i > 2 and rng.random() < 0.12:
                if rng.random() < 0.5:
                    del rec[who]
                else:
                    rec[who] = None
            if hard and rng.random() < 0.15:
                rec[dom["num"]] = str(value)
        recs.append(rec)
    if level is not EASY:
        rng.shuffle(recs)
    if hard:  # later lines that correct earlier ones (same id)
        for k in range(rng.randint(2, 4)):
            fixed = json.loads(
                json.dumps(
                    recs[k if k else next(i for i, r in enumerate(recs) if r[dom["kind"]] == keep)]
                )
            )
            fixed[dom["num"]] = round(rng.uniform(0.5, 500), 2)
            fixed[dom["flag"]] = not fixed[dom["flag"]]
            recs.append(fixed)
    if level is EASY:
        flat = list(recs[0])
        columns = rng.sample(flat, len(flat))
        while columns == flat:
            columns = rng.sample(flat, len(flat))
    else:
        extra = [f"{who}.{wf[0]}", f"{who}.{wf[2]}", dom["num"], dom["flag"]]
        columns = [dom["id"], dom["ts"], f"{who}.{wf[1]}", dom["tags"]]
        if hard:
            extra.remove(dom["num"])
            columns.append(dom["num"])
        columns += rng.sample(extra, rng.randint(1, len(extra)))
        rng.shuffle(columns)
    spec = {
        "shape": "flatten",
        "level": level.value,
        "file": f"{dom['file']}.jsonl",
        "id": dom["id"],
        "ts": dom["ts"],
        "kind": dom["kind"],
        "keep": keep,
        "num": dom["num"],
        "columns": columns,
        "who": who,
        "who_name": wf[1],
        "tags": dom["tags"],
        "flag": dom["flag"],
    }
    text = "".join(json.dumps(r, ensure_ascii=not accent) + "\n" for r in recs)
    return spec, {f"{dom['file']}.jsonl": text}


@register
class CsvJsonWrangle(Family):
    """Convert between CSV and JSON. Either CSV -> JSON (easy: typed records with a filter;
    medium: join two CSVs and aggregate per group, sorted; hard: nested per-group/per-parent
    JSON with corrections, orphans, missing and messy numbers, quoted names) or JSON lines ->
    CSV (easy: chosen columns, booleans and missing values; medium: nested fields, lists, a
    filter and a sort; hard: duplicates, null objects, UTC conversion, quoting)."""

    name = "csv-json-wrangle"
    title = "Convert, join and aggregate data between CSV and JSON"
    category = "data-wrangling"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        outdir = rng.choice(OUT_DIRS)
        shape = "join" if rng.random() < 0.5 else "flatten"
        bugs = CJ_BUGS[(shape, level.value)]
        faults: list[str] = []
        if level is HARD:
            faults = sorted(rng.sample(CJ_HARD_FAULTS, rng.randint(2, 4)))
            while shape == "flatten" and {"legacy-encoding", "bom"} <= set(faults):
                faults = sorted(rng.sample(CJ_HARD_FAULTS, rng.randint(2, 4)))  # one file
            outdir = reachable_folder(rng, outdir, OUT_DIRS)
        legacy = "legacy-encoding" in faults
        for _ in range(60):
            generate = _cj_join if shape == "join" else _cj_flatten
            spec, texts = generate(rng, level, legacy)
            text = _cj_solve(texts, spec)
            want = parse_result(text, shape)
            main = spec["child_file"] if shape == "join" else spec["file"]
            older, newer = texts[main], texts[main]
            if "split-export" in faults:
                older, newer = _cj_split(texts[main], shape == "join", rng)
            misses = []
            if "split-export" in faults:  # only the newest export read: a different answer
                misses.append(parse_result(_cj_solve({**texts, main: newer}, spec), shape))
            latin = texts.get(spec["parent_file"] if shape == "join" else main, "")
            if "split-export" in faults and shape == "flatten":
                latin = newer
            if all(
                not _cj_same(parse_result(_cj_solve(texts, spec, b), shape), want) for b in bugs
            ) and (
                all(not _cj_same(m, want) for m in misses)
                and (
                    not legacy
                    or (not latin.isascii() and not json.dumps(want, ensure_ascii=False).isascii())
                )
            ):
                break
        else:  # pragma: no cover
            raise RuntimeError("csv-json-wrangle: could not draw data exposing every near miss")
        srcdir = rng.choice(["/srv/data", "/data/incoming", "/opt/etl/input", "/home/analyst/data"])
        stem = {
            ("join", "easy"): spec.get("child", "") + "_clean",
            ("join", "medium"): f"{spec.get('child', '')}_by_{spec.get('group', '')}",
            ("join", "hard"): f"{spec.get('parent', '')}_summary",
        }.get((shape, level.value), spec.get("file", "").replace(".jsonl", "") + "_flat")
        out = f"{outdir}/{stem}.{'json' if shape == 'join' else 'csv'}"
        # The files as they lie in the image (bytes where a fault changed the encoding).
        data: dict[str, str | bytes] = dict(texts)
        if "split-export" in faults:
            data[f"{main}.1.gz"] = gzip.compress(older.encode(), mtime=0)
            data[main] = newer
        if "bom" in faults:
            first = f"{main}.1.gz" if "split-export" in faults else main
            plain = older if "split-export" in faults else texts[main]
            raw = (BOM + plain).encode()
            data[first] = gzip.compress(raw, mtime=0) if first.endswith(".gz") else raw
        if legacy:
            name = spec["parent_file"] if shape == "join" else main
            data[name] = str(data[name]).encode("latin-1")
        import inspect

        context: dict[str, Any] = {
            "shape": shape,
            "spec": spec,
            "srcdir": srcdir,
            "inputs": sorted(texts),
            "outdir": outdir,
            "out": out,
            "expected": want,
            "bugs": bugs,
            "bug_notes": [CJ_BUG_NOTES[b] for b in bugs],
            "solver_src": inspect.getsource(_cj_solve),
            "same_src": inspect.getsource(_cj_same),
            "digests": {f"{srcdir}/{name}": sha256_hex(t) for name, t in sorted(data.items())},
            "hard": level is HARD,
            "faults": faults,
        }
        wiring = Wiring.none()
        tags = [shape, "csv", "json"]
        if level is HARD:
            app = f"{spec.get('parent') or spec['file'].removesuffix('.jsonl')}-etl"
            header = None if shape == "join" else text.split("\n", 1)[0]
            job = ImportJob.draw(rng, app, out, header, faults)
            work = f"/tmp/{app}-work"
            context.update(
                job=job.context(),
                work=work,
                main=main,
                sources=sorted(f"{srcdir}/{name}" for name in data),
                prep=_cj_prep(spec, main, srcdir, work, faults),
            )
            unfixed = near_misses(
                self,
                context,
                faults,
                each=lambda f: {"prep": _cj_prep(spec, main, srcdir, work, faults, f)},
                difficulty=level.value,
            )
            wiring = job.wire(faults, CJ_TRAPS, unfixed)
            tags += ["cron", "encoding"]
        files: dict[str, str | bytes] = {f"environment/data/{n}": t for n, t in data.items()}
        if level is HARD:
            files.update(job.files())
        return text_draft(self, level, context, files, faults, wiring, [text], [out], tags)
