"""text-transform's report task: a fixed-width report with messy values, its schema, and the CSV
rows the task expects."""

from __future__ import annotations

import csv
import io
import random
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.terminal.knobs import pick
from factory.families.terminal.text_tasks import (
    EASY,
    HARD,
    TT_CITIES,
    TT_FIRST,
    TT_HARD_PRODUCTS,
    TT_LAST,
    TT_PRODUCTS,
)
from factory.vocabulary import Difficulty

ValueKind = Literal["int", "name", "dept", "city", "code", "product", "company", "date", "amount"]
"""What a report column holds (:func:`_tt_value` draws the first seven)."""


class _Column(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    title: str
    kind: ValueKind


class _Report(BaseModel):
    """The report task's words and datasets (report.toml)."""

    model_config = ConfigDict(extra="forbid")

    depts: list[str]
    companies: list[str]
    hard_companies: list[str]
    datasets: dict[str, list[_Column]]


_REPORT = load_toml_model(Path(__file__).parent / "report.toml", _Report, "text-transform report")
TT_DEPTS = _REPORT.depts
TT_COMPANIES = _REPORT.companies
TT_HARD_COMPANIES = _REPORT.hard_companies
TT_SCHEMAS = {
    name: [(c.key, c.title, c.kind) for c in columns] for name, columns in _REPORT.datasets.items()
}
"""Per dataset: its columns as (CSV name, report title, kind of value)."""
TT_DATE_FORMATS = {"dmy-dot": "DD.MM.YYYY", "mdy-slash": "MM/DD/YYYY", "dmy-dash": "DD-MM-YYYY"}
TT_REPORT_BUGS = {
    "easy": ["split-on-spaces", "no-trim", "keep-ruler"],
    "medium": ["date-order", "keep-page-headers", "split-on-spaces"],
    "hard": ["no-quoting", "amount-sign", "date-order"],
}


def _tt_value(rng: random.Random, typ: str, hard: bool) -> str:
    if typ == "int":
        return str(rng.randint(1, 99999))
    if typ == "name":
        return f"{rng.choice(TT_FIRST)} {rng.choice(TT_LAST)}"
    if typ == "dept":
        return rng.choice(TT_DEPTS)
    if typ == "city":
        return rng.choice(TT_CITIES)
    if typ == "code":
        return f"{rng.choice(['SKU', 'TRK', 'AC', 'ZX'])}-{rng.randint(10000, 999999)}"
    if typ == "product":
        return rng.choice(TT_HARD_PRODUCTS if hard and rng.random() < 0.3 else TT_PRODUCTS)
    if typ == "company":
        return rng.choice(TT_HARD_COMPANIES if hard and rng.random() < 0.3 else TT_COMPANIES)
    raise ValueError(typ)


def _tt_date_text(day: date, fmt: str) -> str:
    return {
        "dmy-dot": f"{day.day:02d}.{day.month:02d}.{day.year}",
        "mdy-slash": f"{day.month:02d}/{day.day:02d}/{day.year}",
        "dmy-dash": f"{day.day:02d}-{day.month:02d}-{day.year}",
    }[fmt]


def _tt_amount_text(cents: int, hard: bool) -> str:
    text = f"{abs(cents) / 100:,.2f}" if hard else f"{abs(cents) / 100:.2f}"
    return f"({text})" if cents < 0 else text


def parse_report(text: str, spec: dict[str, Any], bug: str = "") -> list[list[str]]:
    """The CSV rows (header first) the reference solution writes, with one bug on."""
    cols, out_cols, level = spec["cols"], spec["out_cols"], spec["level"]
    lines = text.split("\n")[:-1]
    rows = []
    seen_ruler = False
    for idx, line in enumerate(lines):
        s = line.lstrip("\f")
        ruler = bool(s.strip()) and set(s) <= {"-", " "}
        if bug == "keep-ruler":
            if idx == 0:
                continue
        elif not seen_ruler:
            seen_ruler = ruler
            continue
        if not s.strip():
            continue
        if bug != "keep-page-headers":
            if ruler and bug != "keep-ruler":
                continue
            if s.rstrip() == spec["header"].rstrip() or s.startswith(spec["title"]):
                continue
            if s.startswith("Total:") or s.startswith("#"):
                continue
        if bug == "split-on-spaces":
            cells = (s.split() + [""] * len(cols))[: len(cols)]
        else:
            cells = [s[a:b] if bug == "no-trim" else s[a:b].strip() for a, b in cols]
        rows.append(cells)
    out = [[c["name"] for c in out_cols]]
    for cells in rows:
        row = []
        for c in out_cols:
            value = cells[c["src"]]
            if c["kind"] == "date" and level != "easy" and value.strip():
                parts = re.split(r"[./-]", value.strip())
                if len(parts) == 3:
                    a, b, y = parts
                    d, m = (b, a) if spec["date_format"] == "mdy-slash" else (a, b)
                    if bug == "date-order":
                        d, m = m, d
                    value = f"{y}-{m}-{d}"
            elif c["kind"] == "amount" and level == "hard" and value:
                negative = value.startswith("(") and bug != "amount-sign"
                value = ("-" if negative else "") + value.strip("()").replace(",", "")
            row.append(value)
        out.append(row)
    if bug == "no-quoting":
        return list(csv.reader(io.StringIO("".join(",".join(r) + "\n" for r in out))))
    return out


def draw_report(rng: random.Random, level: Difficulty) -> dict[str, Any]:
    hard = level is HARD
    dataset = rng.choice(list(TT_SCHEMAS))
    schema = TT_SCHEMAS[dataset]
    date_format = rng.choice(list(TT_DATE_FORMATS))
    n_rows = pick(rng, level, (8, 14), (25, 40), (30, 50))
    records = []
    for _ in range(n_rows):
        rec = []
        for _key, _title, typ in schema:
            if typ == "date":
                day = date(rng.randint(2005, 2024), 1, 1) + timedelta(days=rng.randint(0, 364))
                rec.append(_tt_date_text(day, date_format))
            elif typ == "amount":
                cents = rng.randint(100, 25000000)
                if hard and rng.random() < 0.2:
                    cents = -cents
                rec.append(_tt_amount_text(cents, hard))
            elif typ == "city" and hard and rng.random() < 0.1:
                rec.append("")
            else:
                rec.append(_tt_value(rng, typ, hard))
        records.append(rec)
    # traps the near misses need: a negative amount, a value to quote, a date with day != month
    types = [t for _, _, t in schema]
    if hard:
        records[rng.randrange(n_rows)][types.index("amount")] = _tt_amount_text(
            -rng.randint(100, 9999999), True
        )
        quoted = next((i for i, t in enumerate(types) if t in ("name", "company", "product")))
        pool = {
            "name": [f"{rng.choice(TT_LAST)}, {rng.choice(TT_FIRST)}"],
            "company": TT_HARD_COMPANIES,
            "product": TT_HARD_PRODUCTS,
        }[types[quoted]]
        records[rng.randrange(n_rows)][quoted] = rng.choice(pool)
    widths = [
        max(len(title), *(len(r[i]) for r in records)) + rng.randint(2, 4)
        for i, (_, title, _) in enumerate(schema)
    ]
    right = [t in ("int", "amount") for t in types]

    def fmt_line(cells: list[str]) -> str:
        return "".join(
            c.rjust(w - 2) + "  " if r else c.ljust(w)
            for c, w, r in zip(cells, widths, right, strict=True)
        ).rstrip()

    cols, pos = [], 0
    for w in widths:
        cols.append((pos, pos + w))
        pos += w
    header = fmt_line([title for _, title, _ in schema])
    ruler = " ".join("-" * (w - 1) for w in widths)
    company = rng.choice(["ACME CORP", "NORTHWIND", "CONTOSO", "FABRIKAM", "GLOBEX"])
    title = f"{company} {dataset.upper()} REPORT"
    lines = []
    per_page = n_rows if level is EASY else rng.randint(9, 14)
    for i, rec in enumerate(records):
        if i % per_page == 0:
            if level is not EASY:
                page = f"{title}{' ' * rng.randint(6, 20)}PAGE {i // per_page + 1}"
                lines += [("\f" if i else "") + page, ""]
            lines += [header, ruler]
        if hard and rng.random() < 0.06:
            lines.append(f"# corrected by {rng.choice(['ops', 'audit', 'jdoe'])} on re-run")
        lines.append(fmt_line(rec))
    if level is not EASY:
        lines += ["", f"Total: {n_rows} records"]
    text = "\n".join(lines) + "\n"
    src_cols = [
        {"name": key, "title": title_, "kind": typ, "src": i, "start": a + 1, "end": b}
        for i, ((key, title_, typ), (a, b)) in enumerate(zip(schema, cols, strict=True))
    ]
    if level is EASY:
        out_cols = src_cols
    else:
        must = [c for c in src_cols if c["kind"] in ("date", "amount")]
        if hard:
            must.append(src_cols[quoted])
        rest = [c for c in src_cols if c not in must]
        out_cols = must + rng.sample(rest, rng.randint(1, len(rest)))
        rng.shuffle(out_cols)
    # the last column runs to the end of the line
    cols[-1] = (cols[-1][0], max(len(x) for x in lines))
    src_cols[-1]["end"] = None
    spec = {
        "cols": cols,
        "out_cols": out_cols,
        "level": level.value,
        "header": header,
        "title": title,
        "date_format": date_format,
    }
    return {
        "dataset": dataset,
        "text": text,
        "spec": spec,
        "src_cols": src_cols,
        "records": records,
        "date_format_doc": TT_DATE_FORMATS[date_format],
    }
