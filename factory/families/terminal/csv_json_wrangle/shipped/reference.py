"""The reference solution of csv-json-wrangle, in Python: what the hidden tests compare with, and
the near misses (one rule broken at a time). The sources of ``_cj_solve`` and ``_cj_same`` are
embedded in the tasks (solve.sh, the tests), so this module lives in ``shipped/``."""

from __future__ import annotations

import csv
import io
import json
from typing import Any


def _cj_solve(texts: dict[str, str], spec: dict, bug: str = "") -> str:
    """The reference solution (its source is embedded in solve.sh): input file texts by
    name -> output file text. ``bug`` switches on one near miss."""
    import csv
    import io
    import json
    from datetime import datetime, timezone

    level = spec["level"]

    def rows_of(text):
        if bug == "naive-split":
            lines = [line for line in text.split("\n") if line]
            header = lines[0].split(",")
            return [dict(zip(header, line.split(","), strict=False)) for line in lines[1:]]
        return list(csv.DictReader(io.StringIO(text, newline="")))

    def num(value):
        try:
            return float((value or "").strip().replace(",", ""))
        except ValueError:
            return None

    if spec["shape"] == "join":
        child = rows_of(texts[spec["child_file"]])
        bad, measure = spec["bad"], spec["measure"]
        if level == "easy":
            out = []
            for row in child:
                if row[spec["status"]] == bad and bug != "no-filter":
                    continue
                obj = {}
                for col, typ in spec["types"]:
                    value = row[col]
                    if bug != "strings":
                        if typ == "int":
                            value = int(value)
                        elif typ == "float":
                            value = float(value)
                        elif typ == "bool" and bug != "bool-as-string":
                            value = value == "true"
                    obj[col] = value
                out.append(obj)
            return json.dumps(out, indent=2) + "\n"
        parents = {row[spec["pid"]]: row for row in rows_of(texts[spec["parent_file"]])}
        if level == "medium":
            groups: dict = {}
            for row in child:
                if row[spec["status"]] == bad and bug != "no-filter":
                    continue
                parent = parents[row[spec["pid"]]]
                g = groups.setdefault(parent[spec["group"]], {"n": 0, "parents": [], "total": 0.0})
                g["n"] += 1
                g["parents"].append(row[spec["pid"]])
                g["total"] += num(row[measure]) or 0.0
            out = [
                {
                    spec["group"]: name,
                    spec["child"]: g["n"],
                    spec["parent"]: len(
                        g["parents"] if bug == "rows-not-distinct" else set(g["parents"])
                    ),
                    f"total_{measure}": round(g["total"], 2),
                }
                for name, g in groups.items()
            ]
            if bug == "sort-as-text":
                out.sort(key=lambda o: str(o[f"total_{measure}"]), reverse=True)
            else:
                out.sort(key=lambda o: (-o[f"total_{measure}"], o[spec["group"]]))
            return json.dumps(out, indent=2) + "\n"
        if bug != "keep-duplicates":
            last = {}
            for row in child:
                last[row[spec["cid"]]] = row
            child = list(last.values())
        per_parent: dict = {}
        unmatched = []
        for row in child:
            if row.get(spec["status"]) == bad:
                continue
            if row[spec["pid"]] not in parents:
                unmatched.append(int(row[spec["cid"]]))
                continue
            value = num(row.get(measure))
            if value is None and bug == "skip-missing":
                continue
            p = per_parent.setdefault(row[spec["pid"]], {"n": 0, "total": 0.0})
            p["n"] += 1
            p["total"] += value or 0.0
        groups = {}
        for pid, p in per_parent.items():
            parent = parents[pid]
            groups.setdefault(parent[spec["group"]], []).append(
                {
                    spec["pid"]: int(pid),
                    spec["pname"]: parent[spec["pname"]],
                    spec["child"]: p["n"],
                    f"total_{measure}": round(p["total"], 2),
                    "_raw": p["total"],
                }
            )
        out_groups = []
        for name in sorted(groups):
            members = sorted(groups[name], key=lambda m: (-m[f"total_{measure}"], m[spec["pid"]]))
            total = round(sum(m.pop("_raw") for m in members), 2)
            out_groups.append(
                {spec["group"]: name, f"total_{measure}": total, spec["parent"]: members}
            )
        result = {"groups": out_groups, f"unmatched_{spec['child']}": sorted(unmatched)}
        return json.dumps(result, indent=2) + "\n"

    # flatten: JSON lines -> CSV
    records = [json.loads(line) for line in texts[spec["file"]].split("\n") if line.strip()]

    def utc(ts):
        if bug == "naive-time":
            return ts
        t = datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    if level == "hard" and bug != "keep-duplicates":
        last = {}
        for rec in records:
            last[rec[spec["id"]]] = rec
        records = list(last.values())
    if level != "easy" and bug != "no-filter":
        records = [r for r in records if r.get(spec["kind"]) == spec["keep"]]
    if level != "easy" and bug != "no-sort":
        if level == "hard":
            records.sort(key=lambda r: (utc(r[spec["ts"]]), r[spec["id"]]))
        else:
            records.sort(key=lambda r: (r[spec["ts"]], r[spec["id"]]))
    columns = spec["columns"]
    if bug == "key-order":
        columns = [k for k in records[0] if k in columns]

    def cell(rec, col):
        value = rec
        for part in col.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if bug == "missing-as-none" and value is None:
            return "None"
        if value is None:
            return ""
        if isinstance(value, bool):
            return str(value) if bug == "python-bools" else ("true" if value else "false")
        if isinstance(value, list):
            return str(value) if bug == "tags-repr" else ";".join(value)
        if col == spec["ts"] and level == "hard":
            return utc(value)
        if col == spec["num"] and level == "hard":
            return f"{float(value):.2f}"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        return value

    rows = [columns] + [[cell(r, c) for c in columns] for r in records]
    if bug == "no-quoting":
        return "".join(",".join(r) + "\n" for r in rows)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _cj_same(got: Any, want: Any) -> bool:
    """Structural equality for JSON: exact types for ints, booleans and strings, a tolerance
    of half a cent for floats (an integral float may be written as an integer)."""
    if isinstance(want, bool) or want is None:
        return got is want
    if isinstance(want, int):
        return type(got) is int and got == want
    if isinstance(want, float):
        return type(got) in (int, float) and abs(got - want) <= 0.005
    if isinstance(want, str):
        return isinstance(got, str) and got == want
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(_cj_same, got, want))
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and sorted(got) == sorted(want)
            and all(_cj_same(got[k], want[k]) for k in want)
        )
    return False


def parse_result(text: str, shape: str) -> Any:
    if shape == "join":
        return json.loads(text)
    return list(csv.reader(io.StringIO(text, newline="")))
