"""shell-script's CSV tool: select rows of a CSV file by column conditions; its model and its
test cases."""

from __future__ import annotations

import random

from .options import ANY, parse_options

# =============================================================================================
# shell-script
# =============================================================================================

CSV_NAMES = ["csvpick", "rowgrep", "csvsel", "tabfilter", "recgrep", "csvwhere", "pickrows"]

CSV_COLUMNS = {
    "id": None,
    "name": ["alice", "bob", "carol", "dan", "erin", "frank", "grace", "heidi", "ivan", "judy"],
    "city": ["Oslo", "New York", "Lima", "Santa Fe", "Kyoto", "Porto", "San Jose", "Cairo"],
    "status": ["open", "reopened", "closed", "closed-won", "pending", "open-late"],
    "team": ["core", "core-ui", "infra", "ops", "web", "web app", "data"],
    "tier": ["gold", "silver", "bronze", "gold plus", ""],
    "region": ["eu", "eu-west", "us", "us-east", "apac", ""],
    "owner": ["ann", "anna", "bo", "bob", "cy", "", "joanna"],
    "level": ["1", "2", "3", "10", "12", "21"],
}
CSV_FILE_WORDS = ["tickets", "accounts", "inventory", "staff", "leads", "orders", "assets"]


def _csv_table(rng: random.Random, columns: list[str], rows: int, start: int) -> list[list[str]]:
    out = []
    for i in range(rows):
        row = []
        for col in columns:
            row.append(str(start + i) if col == "id" else rng.choice(CSV_COLUMNS[col]))
        out.append(row)
    return out


def _csv_text(header: list[str], rows: list[list[str]], sep: str, final_newline: bool) -> str:
    text = "\n".join(sep.join(r) for r in [header, *rows])
    return text + "\n" if final_newline else text


def _csv_model(spec: dict, args: list[str], files: dict[str, str], stdin: str) -> dict:
    """Reference behaviour of the csv filter: stdout, exit code, stderr line."""
    name, codes = spec["name"], spec["codes"]
    usage = {"stdout": "", "code": codes["usage"], "stderr": None}
    fields_opt, delim_opt = "-" + spec["flags"]["fields"], "-" + spec["flags"]["delim"]
    takes = {fields_opt: (1, ANY), "-v": (1, None), delim_opt: (2, ANY), "-c": (2, None)}
    parsed = parse_options(args, spec["level"], takes, dash_is_operand=True)
    if parsed is None:
        return usage
    given, rest = parsed
    sep = given.get(delim_opt, ",")
    fields = given[fields_opt].split(",") if fields_opt in given else None
    invert, count = "-v" in given, "-c" in given
    if not rest or "=" not in rest[0]:
        return usage
    column, value = rest[0].split("=", 1)
    inputs = rest[1:]
    if spec["level"] == 0 and len(inputs) != 1:
        return usage
    if spec["level"] == 1 and len(inputs) > 1:
        return usage
    if not inputs:
        inputs = ["-"]
    texts = []
    for path in inputs:
        if path == "-":
            texts.append(("-", stdin))
        elif path not in files:
            return {"stdout": "", "code": codes["read"], "stderr": f"{name}: cannot read: {path}"}
        else:
            texts.append((path, files[path]))
    header, rows = None, []
    for path, text in texts:
        if text == "":
            continue
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        if header is None:
            header = lines[0]
        elif lines[0] != header:
            return {
                "stdout": "",
                "code": codes["header"],
                "stderr": f"{name}: header mismatch: {path}",
            }
        rows.extend(lines[1:])
    if header is None:
        return {"stdout": "0\n" if count else "", "code": 0, "stderr": None}
    cols = header.split(sep)
    for col in [column, *(fields or [])]:
        if col not in cols:
            return {
                "stdout": "",
                "code": codes["column"],
                "stderr": f"{name}: unknown column: {col}",
            }
    idx = cols.index(column)
    picked = [r for r in rows if (r.split(sep)[idx] == value) != invert]
    if count:
        return {"stdout": f"{len(picked)}\n", "code": 0, "stderr": None}
    proj = [cols.index(f) for f in fields] if fields else list(range(len(cols)))
    out = [sep.join(cols[i] for i in proj)]
    out += [sep.join(r.split(sep)[i] for i in proj) for r in picked]
    return {"stdout": "\n".join(out) + "\n", "code": 0, "stderr": None}


def csv_cases(rng: random.Random, level: int, spec: dict) -> list[dict]:
    spec["flags"] = {"fields": rng.choice(["f", "k", "o"]), "delim": rng.choice(["d", "s", "t"])}
    seps = [","] + ([rng.choice([";", "|", ":"]), "\t"] if level >= 2 else [])
    cases = []
    base_cols = ["id", *rng.sample([c for c in CSV_COLUMNS if c != "id"], 4)]
    sub_col = rng.choice(["status", "team", "owner"])
    if sub_col not in base_cols:
        base_cols[rng.randrange(1, len(base_cols))] = sub_col
    word = rng.choice(CSV_FILE_WORDS)

    def table(sep: str = ",", rows: int | None = None, cols: list[str] | None = None, nl=True):
        cols = cols or base_cols
        body = _csv_table(rng, cols, rows or rng.randint(6, 14), rng.randint(100, 900))
        return cols, body, _csv_text(cols, body, sep, nl)

    def add(args, files=None, stdin="", why=""):
        files = files or {}
        cases.append(
            {"args": args, "files": files, "stdin": stdin, "why": why}
            | _csv_model(spec, args, files, stdin)
        )

    # a value that is a strict prefix/substring of another value in the same column
    sub_values = {"status": "open", "team": "core", "owner": "ann"}
    cols, body, text = table(rows=12)
    ci = cols.index(sub_col)
    body[0][ci] = sub_values[sub_col]
    body[1][ci] = {"status": "reopened", "team": "core-ui", "owner": "joanna"}[sub_col]
    text = _csv_text(cols, body, ",", True)
    fname = f"{word}.csv"
    add([f"{sub_col}={sub_values[sub_col]}", fname], {fname: text}, why="exact match only")
    spaced = f"{rng.choice(['q3', 'old', 'new', 'team'])} {word}.csv"
    cols2, body2, _ = table(rows=9, cols=base_cols)
    col2 = rng.choice(cols2[1:])
    val2 = body2[rng.randrange(len(body2))][cols2.index(col2)]
    add(
        [f"{col2}={val2}", spaced],
        {spaced: _csv_text(cols2, body2, ",", False)},
        why="file name with spaces, no final newline",
    )
    empty_col = next((c for c in base_cols if "" in (CSV_COLUMNS[c] or [])), None)
    if empty_col:
        cols3, body3, text3 = table(rows=10)
        body3[2][cols3.index(empty_col)] = ""
        add(
            [f"{empty_col}=", "data.csv"],
            {"data.csv": _csv_text(cols3, body3, ",", True)},
            why="empty value",
        )
    spaced_col = "city" if "city" in base_cols else None
    if spaced_col:
        cols4, body4, _ = table(rows=10)
        body4[3][cols4.index("city")] = "New York"
        add(
            ["city=New York", "in.csv"],
            {"in.csv": _csv_text(cols4, body4, ",", True)},
            why="value with a space",
        )
    add([f"{base_cols[1]}=x", "missing.csv"], {}, why="missing file")
    add([f"nosuch{rng.randint(1, 9)}=1", fname], {fname: text}, why="unknown column")
    add([f"{base_cols[1]}=x", "empty.csv"], {"empty.csv": ""}, why="empty file")
    add(["id=0", "head.csv"], {"head.csv": ",".join(base_cols) + "\n"}, why="header only")
    add([], {}, why="no arguments")
    add([sub_col, fname], {fname: text}, why="expression without '='")
    if level == 0:
        add([f"{sub_col}=x", fname, fname], {fname: text}, why="two files")
    if level >= 1:
        f = spec["flags"]["fields"]
        proj = rng.sample(base_cols, 3)
        add(
            [f"-{f}", ",".join(proj), f"{sub_col}={sub_values[sub_col]}", fname],
            {fname: text},
            why="projection",
        )
        add(["-v", f"{sub_col}={sub_values[sub_col]}"], {}, stdin=text, why="stdin, inverted")
        add(
            [f"-{f}", f"{proj[0]},nope", f"{sub_col}=x", "-"],
            {},
            stdin=text,
            why="unknown projected column",
        )
        add(["-x", f"{sub_col}=x", fname], {fname: text}, why="unknown option")
        add([f"{sub_col}=open", "dir.csv"], {"dir.csv/keep": ""}, why="a directory")
    if level >= 2:
        d = spec["flags"]["delim"]
        sep = seps[1]
        cols5, body5, _ = table(rows=8)
        if "city" in cols5:
            body5[0][cols5.index("city")] = "Lima, Peru"
        t5 = _csv_text(cols5, body5, sep, True)
        cols6, body6, _ = table(rows=7)
        t6 = _csv_text(cols6, body6, sep, False)
        k = rng.choice(cols5[1:])
        v = body5[1][cols5.index(k)]
        add(
            [f"-{d}", sep, k + "=" + v, "a.csv", "b c.csv"],
            {"a.csv": t5, "b c.csv": t6},
            why="custom delimiter, two files",
        )
        cols7, body7, text7 = table(rows=6)
        cols8, body8, _ = table(rows=5)
        v0 = body7[0][cols7.index(k)]  # the first row of the file that follows
        add(
            [k + "=" + v0, "b c.csv", "a.csv"],
            {"a.csv": text7, "b c.csv": _csv_text(cols8, body8, ",", False)},
            why="a file without a final newline, then another file",
        )
        add(
            ["-c", k + "=" + v, "a.csv", "-", "e.csv"],
            {"a.csv": _csv_text(cols5, body5, ",", True), "e.csv": ""},
            stdin=_csv_text(cols6, body6, ",", True),
            why="count over files and stdin",
        )
        other = [c for c in base_cols[::-1]]
        add(
            [f"{k}={v}", "a.csv", "z.csv"],
            {"a.csv": _csv_text(cols5, body5, ",", True), "z.csv": ",".join(other) + "\n1,2\n"},
            why="header mismatch",
        )
        add(["-c", f"{k}=x", "e.csv"], {"e.csv": ""}, why="count of empty input")
        add(
            [f"-{d}", "\t", f"-{spec['flags']['fields']}", f"{cols5[2]},id", f"{k}={v}", "t.tsv"],
            {"t.tsv": _csv_text(cols5, body5, "\t", True)},
            why="tab delimiter and projection",
        )
        add([f"{k}={v}", "a.csv", "gone.csv"], {"a.csv": t5}, why="second file missing")
    spec["sample_name"] = fname
    spec["sample"] = text
    return cases
