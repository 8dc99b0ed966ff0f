"""Program-writing families: shell scripts with a CLI contract, broken C builds, slow scripts
with a time budget, hidden-flag CTFs and JSON reshaping.

Every family computes its expected results here, from the same random draw that made the data,
and embeds them in the (hidden) tests; the reference solutions live in the templates.
"""

from __future__ import annotations

import base64
import codecs
import gzip
import hashlib
import io
import json
import random
import re
import struct
import zlib
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.vocabulary import Difficulty

TEAMS = ["ops", "infra", "platform", "data", "billing", "search", "web", "etl", "payments", "sre"]
SAFE_CODES = [2, 3, 4, 5, 6, 7, 9, 64, 65, 66, 69, 70, 73, 74, 75, 77, 78]


def _level(difficulty: Difficulty) -> int:
    return {"easy": 0, "medium": 1, "hard": 2}[difficulty.value]


def _spread(rng: random.Random, kinds: list[str], level: int) -> str:
    """A kind drawn from rng, shifted by the level so one seed spans several kinds."""
    return kinds[(rng.randrange(len(kinds)) + level) % len(kinds)]


# =============================================================================================
# shell-script
# =============================================================================================

CSV_NAMES = ["csvpick", "rowgrep", "csvsel", "tabfilter", "recgrep", "csvwhere", "pickrows"]
REN_NAMES = ["extswap", "renext", "bulkmv", "rext", "chext", "mvext", "swapext"]
ROT_NAMES = ["logrot", "rotlog", "logcycle", "roll-log", "logshift", "rotate-log", "agelog"]
RETRY_NAMES = ["retry", "again", "persist", "tryhard", "rerun", "keeptrying", "redo"]

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
    sep, fields, invert, count = ",", None, False, False
    rest = list(args)
    flags = spec["flags"]
    while rest and rest[0].startswith("-") and rest[0] != "-":
        opt = rest.pop(0)
        if opt == "--":
            break
        if opt == "-" + flags["fields"] and spec["level"] >= 1 and rest:
            fields = rest.pop(0).split(",")
        elif opt == "-v" and spec["level"] >= 1:
            invert = True
        elif opt == "-" + flags["delim"] and spec["level"] >= 2 and rest:
            sep = rest.pop(0)
        elif opt == "-c" and spec["level"] >= 2:
            count = True
        else:
            return usage
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


def _shell_csv(rng: random.Random, level: int, spec: dict) -> list[dict]:
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


def _ren_model(spec: dict, args: list[str], tree: dict[str, str | None]) -> dict:
    """tree: relative path -> content (None = directory). Returns stdout/code/stderr/tree."""
    name, codes, level = spec["name"], spec["codes"], spec["level"]
    usage = {"stdout": "", "code": codes["usage"], "stderr": None, "expected_tree": tree}
    dry = recurse = False
    rest = list(args)
    while rest and rest[0].startswith("-"):
        opt = rest.pop(0)
        if opt == "--":
            break
        if opt == "-n" and level >= 1:
            dry = True
        elif opt == "-r" and level >= 2:
            recurse = True
        else:
            return usage
    if len(rest) != 3:
        return usage
    root, old, new = rest
    if level >= 1:
        old, new = old.removeprefix("."), new.removeprefix(".")
    if root not in tree or tree[root] is not None:
        return {
            "stdout": "",
            "code": codes["dir"],
            "stderr": f"{name}: not a directory: {root}",
            "expected_tree": tree,
        }
    prefix = root.rstrip("/") + "/"
    cands = []
    for path, content in tree.items():
        if not path.startswith(prefix) or content is None:
            continue
        rel = path[len(prefix) :]
        parts = rel.split("/")
        if not recurse and len(parts) > 1:
            continue
        if any(p.startswith(".") for p in parts):
            continue
        if parts[-1].endswith("." + old) and len(parts[-1]) > len(old) + 1:
            cands.append(rel)
    cands.sort(key=lambda s: s.encode())
    new_tree = dict(tree)
    out, err, skipped = [], [], False
    for rel in cands:
        target = rel[: -len(old)] + new
        if prefix + target in new_tree:
            err.append(f"{name}: skipping {rel}: {target} exists")
            skipped = True
            continue
        out.append(f"{rel} -> {target}")
        if not dry:
            new_tree[prefix + target] = new_tree.pop(prefix + rel)
    return {
        "stdout": "".join(line + "\n" for line in out),
        "code": codes["skip"] if skipped else 0,
        "stderr": err[0] if err else None,
        "expected_tree": new_tree,
    }


REN_STEMS = [
    "report",
    "draft final",
    "notes",
    "-dash",
    "a b  c",
    "photo 01",
    "x",
    "budget.v2",
    "readme",
    "plan (old)",
    "summary",
    "o'brien",
    "todo",
]


def _shell_ren(rng: random.Random, level: int, spec: dict) -> list[dict]:
    old, new = rng.sample(
        ["txt", "md", "log", "jpeg", "jpg", "htm", "html", "yml", "yaml", "conf"], 2
    )
    spec["exts"] = [old, new]
    cases = []

    def make_tree(root: str, n: int, sub: bool) -> dict[str, str | None]:
        tree: dict[str, str | None] = {root: None}
        spaced = [s for s in REN_STEMS if " " in s]
        stems = [rng.choice(spaced), "-dash"]
        stems += rng.sample([s for s in REN_STEMS if s not in stems], n - 2)
        for s in stems:
            tree[f"{root}/{s}.{old}"] = f"{s} {rng.randint(1, 999)}\n"
        tree[f"{root}/keep.{old}.bak"] = "bak\n"
        tree[f"{root}/.hidden.{old}"] = "hidden\n"
        tree[f"{root}/{rng.choice(['x', 'y'])}.{old.upper()}"] = "upper\n"
        tree[f"{root}/{old}"] = "no dot\n"
        tree[f"{root}/dir.{old}"] = None
        tree[f"{root}/dir.{old}/inner.{old}"] = "inner\n"
        if sub:
            tree[f"{root}/sub dir"] = None
            tree[f"{root}/sub dir/deep.{old}"] = "deep\n"
            tree[f"{root}/sub dir/more"] = None
            tree[f"{root}/sub dir/more/z z.{old}"] = "zz\n"
            tree[f"{root}/.git"] = None
            tree[f"{root}/.git/obj.{old}"] = "git\n"
        return tree

    def add(args, tree, why):
        cases.append({"args": args, "tree": tree, "why": why} | _ren_model(spec, args, tree))

    add(["box", old, new], make_tree("box", rng.randint(4, 7), False), "plain rename")
    add(["my files", old, new], make_tree("my files", 3, False), "directory with spaces")
    add(["nowhere", old, new], {"box": None}, "missing directory")
    add(["afile", old, new], {"afile": "x\n"}, "not a directory")
    add(["empty", old, new], {"empty": None}, "nothing to rename")
    add(["box", old], {"box": None}, "missing argument")
    if level >= 1:
        t = make_tree("work", 4, False)
        stem = next(
            p
            for p in t
            if p.endswith("." + old) and "/." not in p and "dir." not in p and "keep" not in p
        )
        t[stem[: -len(old)] + new] = "already here\n"
        add(["work", old, new], t, "target exists")
        add(["-n", "work", "." + old, new], make_tree("work", 4, False), "dry run, dotted ext")
        add(["-q", "work", old, new], make_tree("work", 2, False), "unknown option")
    if level >= 2:
        add(["-r", "tree", old, "." + new], make_tree("tree", 4, True), "recursive")
        t = make_tree("tree", 3, True)
        t[f"tree/sub dir/deep.{new}"] = "clash\n"
        add(["-n", "-r", "tree", old, new], t, "recursive dry run with a clash")
    return cases


def _rot_model(spec: dict, args: list[str], tree: dict[str, Any]) -> dict:
    """tree: path -> {"data": str, "mode": int} (gz generations hold the plain data)."""
    name, codes, level = spec["name"], spec["codes"], spec["level"]
    usage = {"stdout": "", "code": codes["usage"], "stderr": None, "expected_tree": tree}
    keep, gz = spec["keep"], False
    rest = list(args)
    while rest and rest[0].startswith("-"):
        opt = rest.pop(0)
        if opt == "--":
            break
        if opt == "-k" and rest:
            val = rest.pop(0)
            if not re.fullmatch(r"[1-9][0-9]*", val):
                return usage
            keep = int(val)
        elif opt == "-z" and level >= 2:
            gz = True
        else:
            return usage
    if len(rest) != 1:
        return usage
    log = rest[0]
    if log not in tree:
        return {
            "stdout": "",
            "code": codes["missing"],
            "stderr": f"{name}: no such log: {log}",
            "expected_tree": tree,
        }
    if tree[log]["data"] == "":
        return {"stdout": "", "code": 0, "stderr": None, "expected_tree": tree}
    suffix = ".gz" if gz else ""
    pat = re.compile(re.escape(log) + r"\.([1-9][0-9]*)" + re.escape(suffix) + "$")
    new = {}
    for path, info in tree.items():
        m = pat.fullmatch(path)
        if path == log:
            continue
        if m:
            n = int(m.group(1)) + 1
            if n <= keep:
                new[f"{log}.{n}{suffix}"] = info
        else:
            new[path] = info
    new[f"{log}.1{suffix}"] = tree[log]
    new[log] = {"data": "", "mode": tree[log]["mode"]}
    return {"stdout": "", "code": 0, "stderr": None, "expected_tree": new}


def _shell_rot(rng: random.Random, level: int, spec: dict) -> list[dict]:
    spec["keep"] = rng.choice([3, 4, 5, 6])
    cases = []
    base = rng.choice(["app", "web", "worker", "api", "cron", "queue"])

    def gen(log: str, gens: list[int], mode: int, gz: bool = False, extra: bool = True):
        tree = {
            log: {
                "data": f"{base} current {rng.randint(1, 9999)}\n" * rng.randint(1, 3),
                "mode": mode,
            }
        }
        for g in gens:
            tree[f"{log}.{g}{'.gz' if gz else ''}"] = {
                "data": f"gen {g} {rng.randint(1, 999)}\n",
                "mode": 0o644,
            }
        if extra:
            d = log.rsplit("/", 1)[0] + "/" if "/" in log else ""
            tree[f"{log}.old"] = {"data": "old\n", "mode": 0o644}
            tree[f"{log}.01"] = {"data": "zero-one\n", "mode": 0o644}
            tree[f"{d}other.log.1"] = {"data": "other\n", "mode": 0o644}
        return tree

    def add(args, tree, why):
        cases.append({"args": args, "tree": tree, "why": why} | _rot_model(spec, args, tree))

    modes = [0o600, 0o640, 0o660, 0o604, 0o620]
    k = spec["keep"]
    add([f"{base}.log"], gen(f"{base}.log", [1, 2], rng.choice(modes)), "two generations")
    add(
        [f"logs dir/{base} server.log"],
        gen(f"logs dir/{base} server.log", list(range(1, k + 2)), rng.choice(modes)),
        "full set, spaces, oldest dropped",
    )
    add([f"{base}.log"], gen(f"{base}.log", [1, 3], rng.choice(modes)), "gap in generations")
    add(["none.log"], {"x.log": {"data": "x\n", "mode": 0o644}}, "missing log")
    empty = gen(f"{base}.log", [1], rng.choice(modes))
    empty[f"{base}.log"]["data"] = ""
    add([f"{base}.log"], empty, "empty log")
    add([], {}, "no arguments")
    add(
        ["-k", "2", f"{base}.log"],
        gen(f"{base}.log", [1, 2, 3, 7], rng.choice(modes)),
        "keep 2 drops the rest",
    )
    if level >= 1:
        add(["-k", "0", f"{base}.log"], gen(f"{base}.log", [1], 0o640), "bad keep")
        add(["-k", "x1", f"{base}.log"], gen(f"{base}.log", [1], 0o640), "bad keep")
        add([f"{base}.log", "more.log"], gen(f"{base}.log", [1], 0o640), "two logs")
        add(["-k", "1", f"{base}.log"], gen(f"{base}.log", [1, 2], rng.choice(modes)), "keep 1")
    if level >= 2:
        add(
            ["-z", f"{base}.log"],
            gen(f"{base}.log", [1, 2], rng.choice(modes), gz=True),
            "compressed generations",
        )
        t = gen(f"{base}.log", [1, 4], rng.choice(modes), gz=True)
        t[f"{base}.log.2"] = {"data": "plain two\n", "mode": 0o644}
        add(["-z", "-k", "4", f"{base}.log"], t, "compressed with a gap; plain files untouched")
    return cases


def _retry_model(spec: dict, args: list[str], seq: list[int]) -> dict:
    """seq: exit codes the flaky command returns on successive runs (0 = success)."""
    name, codes, level = spec["name"], spec["codes"], spec["level"]
    usage = {"stdout": "", "code": codes["usage"], "stderr": None, "runs": 0}
    n, delay, retry_on = spec["attempts"], 0, None
    rest = list(args)
    while rest and rest[0].startswith("-"):
        opt = rest.pop(0)
        if opt == "--":
            break
        if opt == "-n" and rest:
            val = rest.pop(0)
            if not re.fullmatch(r"[1-9][0-9]*", val):
                return usage
            n = int(val)
        elif opt == "-d" and level >= 1 and rest:
            val = rest.pop(0)
            if not re.fullmatch(r"[0-9]+", val):
                return usage
            delay = int(val)
        elif opt == "-r" and level >= 2 and rest:
            val = rest.pop(0)
            if not re.fullmatch(r"[0-9]+(,[0-9]+)*", val):
                return usage
            retry_on = {int(x) for x in val.split(",")}
        else:
            return usage
    if not rest:
        return usage
    cmd_args = rest[1:]
    lines, out, runs, code, sleeps = [], "", 0, 0, 0
    for attempt in range(1, n + 1):
        code = seq[min(attempt - 1, len(seq) - 1)]
        runs += 1
        out += f"run {runs}: " + "|".join(cmd_args) + "\n"
        if code == 0:
            break
        lines.append(f"{name}: attempt {attempt}/{n} failed with exit {code}")
        if retry_on is not None and code not in retry_on:
            lines.append(f"{name}: exit {code} is not retryable")
            break
        if attempt == n:
            lines.append(f"{name}: giving up after {n} attempts")
        else:
            sleeps += delay
    return {"stdout": out, "code": code, "stderr_lines": lines, "runs": runs, "sleep": sleeps}


def _shell_retry(rng: random.Random, level: int, spec: dict) -> list[dict]:
    spec["attempts"] = rng.choice([3, 4, 5])
    cases = []
    fail = rng.sample(
        [c for c in [3, 4, 5, 6, 7, 9, 11, 13, 42, 99] if c != spec["codes"]["usage"]], 4
    )
    n = spec["attempts"]

    def add(args, seq, why):
        cases.append({"args": args, "seq": seq, "why": why} | _retry_model(spec, args, seq))

    words = ["hello world", "a  b", "*", "--flag", "", "x'y", "$HOME", "tab\there"]
    arg_sets = [rng.sample(words, 3) for _ in range(4)]
    add(["FLAKY", *arg_sets[0]], [0], "success at once")
    add(["FLAKY", *arg_sets[1]], [fail[0], fail[1], 0], "succeeds on the third try")
    add(["FLAKY", "one arg"], [fail[2]] * (n + 2), "always fails: last status")
    add(["-n", "2", "--", "FLAKY", *arg_sets[2]], [fail[0], fail[3], 0], "-n 2 gives up")
    add(["-n", "1", "FLAKY"], [fail[1]], "single attempt")
    add([], [0], "no command")
    add(["-n", "0", "FLAKY"], [0], "bad count")
    add(["-n", "two", "FLAKY"], [0], "bad count")
    if level >= 1:
        add(["-d", "1", "-n", "3", "FLAKY", *arg_sets[3]], [fail[2], 0], "delay between tries")
        add(["-n", "2", "-d", "1", "FLAKY"], [fail[0], fail[0]], "no delay after the last")
        add(["-d", "-1", "FLAKY"], [0], "bad delay")
        add(["-z", "FLAKY"], [0], "unknown option")
    if level >= 2:
        a, b = fail[0], fail[1]
        add(["-r", f"{a},{b}", "-n", "5", "FLAKY", "x y"], [a, b, a, 0], "retryable codes")
        add(["-r", f"{a}", "FLAKY", "z"], [a, fail[3], 0], "non-retryable code stops")
        add(["-r", "1,,2", "FLAKY"], [0], "bad code list")
    return cases


SHELL_KINDS = {
    "csv-filter": (CSV_NAMES, _shell_csv, ["usage", "read", "column", "header"]),
    "renamer": (REN_NAMES, _shell_ren, ["usage", "dir", "skip"]),
    "log-rotate": (ROT_NAMES, _shell_rot, ["usage", "missing"]),
    "retry": (RETRY_NAMES, _shell_retry, ["usage"]),
}


@register
class ShellScript(Family):
    """Write a bash tool with an exact CLI contract (a CSV filter, an extension renamer, a log
    rotator or a retry wrapper). The tests run it on many generated cases: spaces in names,
    empty input, missing files, bad options; exact stdout, stderr lines and exit codes. Harder:
    more options (stdin, projection, delimiters, dry runs, recursion, compression, retryable
    codes) and more error paths."""

    name = "shell-script"
    title = "Write a bash script with a precise command-line contract"
    category = "shell-scripting"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = _level(difficulty)
        kind = params.get("kind") or _spread(rng, sorted(SHELL_KINDS), level)
        names, make_cases, code_names = SHELL_KINDS[kind]
        tool = rng.choice(names)
        team = rng.choice(TEAMS)
        folder = rng.choice(["/usr/local/bin", f"/opt/{team}/bin", f"/srv/{team}/tools"])
        path = f"{folder}/{tool}" + rng.choice(["", ".sh"])
        codes = dict(zip(code_names, rng.sample(SAFE_CODES, len(code_names)), strict=True))
        spec: dict[str, Any] = {"name": tool, "codes": codes, "level": level}
        cases = make_cases(rng, level, spec)
        files = {}
        if kind == "csv-filter":
            files[f"environment/samples/{spec['sample_name']}"] = spec["sample"]
        return Draft(
            context={
                "kind": kind,
                "tool": tool,
                "path": path,
                "spec": spec,
                "cases": cases,
                "level": level,
                "workdir": f"/home/{team}" if folder != "/usr/local/bin" else "/root",
            },
            files=files,
            outputs=[path],
            tags=["bash", kind],
        )


# =============================================================================================
# c-build-fix
# =============================================================================================

C_STATS: dict[str, tuple[str, bool]] = {
    # name: (C body, uses sqrt)
    "sum": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i];\n"
        "    return s;\n",
        False,
    ),
    "mean": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i];\n"
        "    return s / (double)n;\n",
        False,
    ),
    "rms": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i] * v[i];\n"
        "    return sqrt(s / (double)n);\n",
        True,
    ),
    "norm": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i] * v[i];\n"
        "    return sqrt(s);\n",
        True,
    ),
    "stddev": (
        "    double m = 0.0, s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        m += v[i];\n"
        "    m /= (double)n;\n    for (size_t i = 0; i < n; i++) {\n"
        "        double d = v[i] - m;\n        s += d * d;\n    }\n"
        "    return sqrt(s / (double)n);\n",
        True,
    ),
    "min": (
        "    double m = v[0];\n    for (size_t i = 1; i < n; i++)\n        if (v[i] < m)\n"
        "            m = v[i];\n    return m;\n",
        False,
    ),
    "max": (
        "    double m = v[0];\n    for (size_t i = 1; i < n; i++)\n        if (v[i] > m)\n"
        "            m = v[i];\n    return m;\n",
        False,
    ),
    "range": (
        "    double lo = v[0], hi = v[0];\n    for (size_t i = 1; i < n; i++) {\n"
        "        if (v[i] < lo)\n            lo = v[i];\n        if (v[i] > hi)\n"
        "            hi = v[i];\n    }\n    return hi - lo;\n",
        False,
    ),
    "median": (
        "    double *c = malloc(n * sizeof *c);\n    double m;\n"
        "    memcpy(c, v, n * sizeof *c);\n    qsort(c, n, sizeof *c, cmp_double);\n"
        "    m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;\n    free(c);\n"
        "    return m;\n",
        False,
    ),
    "absdev": (
        "    double m = 0.0, s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        m += v[i];\n"
        "    m /= (double)n;\n    for (size_t i = 0; i < n; i++)\n"
        "        s += fabs(v[i] - m);\n    return s / (double)n;\n",
        False,
    ),
    "variation": (
        "    double s = 0.0;\n    for (size_t i = 1; i < n; i++)\n"
        "        s += fabs(v[i] - v[i - 1]);\n    return s;\n",
        False,
    ),
}
C_STAT_LABELS = {
    "sum": ["sum", "total"],
    "mean": ["mean", "average", "avg"],
    "rms": ["rms", "quadratic-mean"],
    "norm": ["norm", "length", "l2"],
    "stddev": ["stddev", "sd", "sigma"],
    "min": ["min", "lowest", "minimum"],
    "max": ["max", "highest", "maximum"],
    "range": ["range", "spread"],
    "median": ["median", "middle"],
    "absdev": ["absdev", "mad", "mean-abs-dev"],
    "variation": ["variation", "path", "travel"],
}
C_STAT_DOCS = {
    "sum": "the sum of the values",
    "mean": "the arithmetic mean",
    "rms": "the root mean square, sqrt(sum of squares / count)",
    "norm": "the Euclidean norm, sqrt(sum of squares)",
    "stddev": "the population standard deviation (divide by count)",
    "min": "the smallest value",
    "max": "the largest value",
    "range": "largest minus smallest value",
    "median": "the median (mean of the two middle values for an even count)",
    "absdev": "the mean absolute deviation from the mean",
    "variation": "the sum of |v[i] - v[i-1]| over consecutive values (0 for one value)",
}
C_MODULES = [
    "spread",
    "center",
    "extrema",
    "norms",
    "moments",
    "order",
    "summary",
    "shape",
    "bounds",
    "energy",
    "trend",
    "scale",
]
C_SERIES = [
    ("series", "Series"),
    ("sample", "Sample"),
    ("vec", "Vec"),
    ("batch", "Batch"),
    ("column", "Column"),
    ("dataset", "DataSet"),
]
C_REPORT = ["report", "emit", "out", "show", "print"]
C_PROGRAMS = [
    "statx",
    "numsum",
    "datastat",
    "tally",
    "measure",
    "digest",
    "colstat",
    "quickstat",
    "figures",
    "crunch",
    "numbers",
    "metrics",
]
C_BREAKAGES_PLAIN = [
    "missing-object",
    "include-path",
    "missing-libm",
    "recursive-var",
    "tab-separator",
]
C_BREAKAGES_SUBTLE = [
    "header-guard",
    "prototype-mismatch",
    "static-function",
    "header-definition",
    "silent-prototype",
]


def _c_stat_value(stat: str, v: list[float]) -> float:
    import math

    n = len(v)
    if stat in ("sum", "mean"):
        s = 0.0
        for x in v:
            s += x
        return s if stat == "sum" else s / n
    if stat in ("rms", "norm"):
        s = 0.0
        for x in v:
            s += x * x
        return math.sqrt(s / n) if stat == "rms" else math.sqrt(s)
    if stat in ("stddev", "absdev"):
        m = 0.0
        for x in v:
            m += x
        m /= n
        s = 0.0
        for x in v:
            s += (x - m) * (x - m) if stat == "stddev" else abs(x - m)
        return math.sqrt(s / n) if stat == "stddev" else s / n
    if stat == "min":
        return min(v)
    if stat == "max":
        return max(v)
    if stat == "range":
        return max(v) - min(v)
    if stat == "median":
        c = sorted(v)
        return c[n // 2] if n % 2 else (c[n // 2 - 1] + c[n // 2]) / 2.0
    if stat == "variation":
        s = 0.0
        for i in range(1, n):
            s += abs(v[i] - v[i - 1])
        return s
    raise ValueError(stat)


def _c_function_span(text: str, fname: str) -> str | None:
    """The body (braces included) of the definition of fname in C source text."""
    m = re.search(r"^[^\n;#]*\b" + re.escape(fname) + r"\s*\([^;{]*\)\s*\{", text, re.M)
    if not m:
        return None
    depth, i = 0, m.end() - 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i : j + 1]
    return None


def _c_body_digest(text: str, fname: str) -> str | None:
    body = _c_function_span(text, fname)
    if body is None:
        return None
    return hashlib.sha256(re.sub(r"\s+", "", body).encode()).hexdigest()


class _CProject:
    """Generates the sources of a small statistics tool, correct or with breakages."""

    def __init__(self, rng: random.Random, level: int):
        self.level = level
        self.prog = rng.choice(C_PROGRAMS)
        self.series, self.Series = rng.choice(C_SERIES)
        self.report = rng.choice(C_REPORT)
        self.std = rng.choice(["c99", "c11", "gnu11", "c17"])
        self.opt = rng.choice(["-O2", "-O1", "-O2 -g"])
        self.objdir = rng.choice(["build", "obj", ".objs", "out"])
        self.incdir = rng.choice(["include", "inc", "headers"])
        self.bad_incdir = rng.choice(
            [d for d in ["include", "inc", "headers", "hdr", "includes"] if d != self.incdir]
        )
        self.precision = rng.choice([2, 3, 4])
        self.codes = dict(zip(["bad", "empty"], rng.sample([2, 3, 4, 5, 65, 66], 2), strict=True))
        nmods = 2 if level == 0 else 3
        self.modules = rng.sample(C_MODULES, nmods)
        sqrt_stats = [s for s, (_, q) in C_STATS.items() if q]
        stats = [rng.choice(sqrt_stats)]
        stats += rng.sample([s for s in C_STATS if s not in stats], rng.randint(nmods, nmods + 2))
        rng.shuffle(stats)
        # distribute: every module gets at least one stat
        self.by_module: dict[str, list[str]] = {m: [] for m in self.modules}
        for i, stat in enumerate(stats):
            mod = self.modules[i] if i < nmods else rng.choice(self.modules)
            self.by_module[mod].append(stat)
        self.stats = [(m, s) for m in self.modules for s in self.by_module[m]]
        self.labels = {s: rng.choice(C_STAT_LABELS[s]) for _, s in self.stats}
        self.install = level >= 2
        # breakages
        if level == 0:
            kinds = [rng.choice(C_BREAKAGES_PLAIN + C_BREAKAGES_SUBTLE)]
        elif level == 1:
            kinds = rng.sample(C_BREAKAGES_PLAIN + C_BREAKAGES_SUBTLE, 2)
        else:
            kinds = [rng.choice(C_BREAKAGES_SUBTLE), rng.choice(C_BREAKAGES_PLAIN)]
            rng.shuffle(kinds)
        self.breakages = kinds
        # targets of the module-level breakages
        mods = list(self.modules)
        rng.shuffle(mods)
        self.victim = mods[0]
        self.victim_stat = rng.choice(self.by_module[self.victim])
        self.guard_donor = next(m for m in self.modules if m != self.victim)
        self.proto_bug = rng.choice(["int n", "float ret", "double *v"])
        self.silent_ret = rng.choice(["float", "int"])
        self.dropped_obj = rng.choice(self.modules)

    # --- names ------------------------------------------------------------------------------
    def fn(self, mod: str, stat: str) -> str:
        return f"{mod}_{stat}"

    def guard(self, mod: str) -> str:
        return f"{mod.upper()}_H"

    def functions(self) -> dict[str, str]:
        """Function name -> source file that must define it."""
        out = {
            f"{self.series}_read": f"src/{self.series}.c",
            f"{self.series}_free": f"src/{self.series}.c",
            f"{self.report}_line": f"src/{self.report}.c",
            "main": "src/main.c",
        }
        for mod, stat in self.stats:
            out[self.fn(mod, stat)] = f"src/{mod}.c"
        return out

    # --- files ------------------------------------------------------------------------------
    def files(
        self, broken: frozenset[str] = frozenset(), drop: str | None = None
    ) -> dict[str, str]:
        files = {"Makefile": self.makefile(broken, drop)}
        inc = self.incdir
        files[f"{inc}/{self.series}.h"] = self.series_h()
        files[f"src/{self.series}.c"] = self.series_c()
        files[f"{inc}/{self.report}.h"] = self.report_h("header-definition" in broken)
        files[f"src/{self.report}.c"] = self.report_c("header-definition" in broken)
        for mod in self.modules:
            if mod == drop:
                continue
            files[f"{inc}/{mod}.h"] = self.module_h(mod, broken)
            files[f"src/{mod}.c"] = self.module_c(mod, broken)
        files["src/main.c"] = self.main_c(drop)
        if self.install:
            files[f"man/{self.prog}.1"] = self.manpage()
        return files

    def makefile(
        self, broken: frozenset[str], drop: str | None = None, single: bool = False
    ) -> str:
        o = self.objdir
        objs = ["main", self.series, *self.modules, self.report]
        if "missing-object" in broken:
            objs.remove(self.victim)
        if drop:
            objs.remove(drop)
        if single:
            objs = ["main"]
        inc = self.bad_incdir if "include-path" in broken else self.incdir
        lines = [f"# Build of {self.prog}", "CC = gcc"]
        flags = f"{self.opt} -std={self.std} -Wall -Werror=implicit-function-declaration"
        if "recursive-var" in broken:
            lines += [f"CFLAGS = {flags}", f"CFLAGS = $(CFLAGS) -I{inc}"]
        else:
            lines += [f"CFLAGS = {flags} -I{inc}"]
        lines.append("LDLIBS =" if "missing-libm" in broken else "LDLIBS = -lm")
        if self.install:
            lines.append("PREFIX = /usr/local")
        lines += [f"BIN = {self.prog}", "OBJS = " + " ".join(f"{o}/{x}.o" for x in objs), ""]
        ind = "    " if "tab-separator" in broken else "\t"
        lines += [
            "all: $(BIN)",
            "",
            "$(BIN): $(OBJS)",
            ind + "$(CC) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)",
            "",
        ]
        lines += [
            f"{o}/%.o: src/%.c $(wildcard {self.incdir}/*.h)",
            f"\t@mkdir -p {o}",
            "\t$(CC) $(CFLAGS) -c -o $@ $<",
            "",
        ]
        if self.install:
            if "install" in broken:
                lines += ["install: $(BIN)", "\tinstall -m 755 $(BIN) /usr/local/bin/$(BIN)", ""]
            else:
                lines += [
                    "install: $(BIN)",
                    "\tinstall -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1",
                    "\tinstall -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/$(BIN)",
                    f"\tinstall -m 644 man/{self.prog}.1 $(DESTDIR)$(PREFIX)/share/man/man1/{self.prog}.1",
                    "",
                ]
        lines += [
            "clean:",
            f"\trm -rf {o} $(BIN)",
            "",
            ".PHONY: all clean" + (" install" if self.install else ""),
        ]
        return "\n".join(lines) + "\n"

    def series_h(self) -> str:
        g, S, s = f"{self.series.upper()}_H", self.Series, self.series
        return (
            f"#ifndef {g}\n#define {g}\n\n#include <stddef.h>\n#include <stdio.h>\n\n"
            f"typedef struct {{\n    double *items;\n    size_t count;\n    size_t cap;\n}} {S};\n\n"
            f"/* Read whitespace-separated numbers until EOF; 0 on success, -1 on a bad token. */\n"
            f"int {s}_read({S} *s, FILE *in);\nvoid {s}_free({S} *s);\n\n#endif\n"
        )

    def series_c(self) -> str:
        S, s = self.Series, self.series
        return (
            f'#include <stdlib.h>\n\n#include "{s}.h"\n\n'
            f"int {s}_read({S} *s, FILE *in)\n{{\n    double x;\n    int r;\n\n"
            "    s->items = NULL;\n    s->count = 0;\n    s->cap = 0;\n"
            '    while ((r = fscanf(in, "%lf", &x)) == 1) {\n'
            "        if (s->count == s->cap) {\n"
            "            size_t cap = s->cap ? s->cap * 2 : 16;\n"
            "            double *p = realloc(s->items, cap * sizeof *p);\n"
            "            if (!p)\n                return -1;\n"
            "            s->items = p;\n            s->cap = cap;\n        }\n"
            "        s->items[s->count++] = x;\n    }\n    return r == EOF ? 0 : -1;\n}\n\n"
            f"void {s}_free({S} *s)\n{{\n    free(s->items);\n    s->items = NULL;\n"
            "    s->count = s->cap = 0;\n}\n"
        )

    def report_h(self, broken: bool) -> str:
        g, r = f"{self.report.upper()}_H", self.report
        var = f"int {r}_precision = {self.precision};" if broken else f"extern int {r}_precision;"
        return (
            f"#ifndef {g}\n#define {g}\n\n/* Digits after the decimal point. */\n{var}\n\n"
            f"void {r}_line(const char *label, double value);\n\n#endif\n"
        )

    def report_c(self, broken: bool) -> str:
        r = self.report
        define = "" if broken else f"int {r}_precision = {self.precision};\n\n"
        return (
            f'#include <stdio.h>\n\n#include "{r}.h"\n\n{define}'
            f"void {r}_line(const char *label, double value)\n{{\n"
            f'    printf("%s: %.*f\\n", label, {r}_precision, value);\n}}\n'
        )

    def module_h(self, mod: str, broken: frozenset[str]) -> str:
        g = self.guard(
            self.guard_donor if ("header-guard" in broken and mod == self.victim) else mod
        )
        decls = []
        for stat in self.by_module[mod]:
            ret, params = "double", "const double *v, size_t n"
            if mod == self.victim and stat == self.victim_stat:
                if "prototype-mismatch" in broken:
                    if self.proto_bug == "int n":
                        params = "const double *v, int n"
                    elif self.proto_bug == "float ret":
                        ret = "float"
                    else:
                        params = "double *v, size_t n"
                if "silent-prototype" in broken:
                    ret = self.silent_ret
            decls.append(f"{ret} {self.fn(mod, stat)}({params});")
        return (
            f"#ifndef {g}\n#define {g}\n\n#include <stddef.h>\n\n"
            + "\n".join(decls)
            + "\n\n#endif\n"
        )

    def module_c(self, mod: str, broken: frozenset[str], own_header: bool = True) -> str:
        stats = self.by_module[mod]
        heads = [
            "#include <math.h>",
            "#include <stdlib.h>",
            "#include <string.h>",
            "#include <stddef.h>",
        ]
        out = "\n".join(heads) + "\n\n"
        silent = "silent-prototype" in broken and mod == self.victim
        if own_header and not silent:
            out += f'#include "{mod}.h"\n\n'
        if "median" in stats:
            out += self.cmp_double()
        for stat in stats:
            static = (
                "static "
                if "static-function" in broken and mod == self.victim and stat == self.victim_stat
                else ""
            )
            out += (
                f"{static}double {self.fn(mod, stat)}(const double *v, size_t n)\n{{\n"
                f"{C_STATS[stat][0]}}}\n\n"
            )
        return out.rstrip("\n") + "\n"

    @staticmethod
    def cmp_double() -> str:
        return (
            "static int cmp_double(const void *a, const void *b)\n{\n"
            "    double x = *(const double *)a, y = *(const double *)b;\n\n"
            "    return (x > y) - (x < y);\n}\n\n"
        )

    def main_body(self, drop: str | None = None) -> str:
        s, r = self.series, self.report
        calls = "".join(
            f'    {r}_line("{self.labels[stat]}", {self.fn(mod, stat)}(data.items, data.count));\n'
            for mod, stat in self.stats
            if mod != drop
        )
        return (
            f"int main(void)\n{{\n    {self.Series} data;\n\n"
            f"    if ({s}_read(&data, stdin) != 0) {{\n"
            f'        fprintf(stderr, "{self.prog}: bad input\\n");\n'
            f"        {s}_free(&data);\n        return {self.codes['bad']};\n    }}\n"
            "    if (data.count == 0) {\n"
            f'        fprintf(stderr, "{self.prog}: no input\\n");\n'
            f"        {s}_free(&data);\n        return {self.codes['empty']};\n    }}\n"
            '    printf("count: %zu\\n", data.count);\n'
            f"{calls}    {s}_free(&data);\n    return 0;\n}}\n"
        )

    def main_c(self, drop: str | None = None) -> str:
        incs = [self.series, *[m for m in self.modules if m != drop], self.report]
        return (
            "#include <stdio.h>\n\n"
            + "".join(f'#include "{h}.h"\n' for h in incs)
            + "\n"
            + self.main_body(drop)
        )

    def single_main(self) -> str:
        """Everything in one file (a wholesale rewrite that behaves the same)."""
        out = (
            "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
            f"typedef struct {{\n    double *items;\n    size_t count;\n    size_t cap;\n}} {self.Series};\n\n"
        )
        out += self.series_c().split('#include "' + self.series + '.h"\n\n', 1)[1] + "\n"
        out += self.report_c(False).split('#include "' + self.report + '.h"\n\n', 1)[1] + "\n"
        for mod in self.modules:
            out += self.module_c(mod, frozenset(), own_header=False).split("\n\n", 1)[1] + "\n"
        return out + self.main_body()

    def manpage(self) -> str:
        return (
            f".TH {self.prog.upper()} 1\n.SH NAME\n{self.prog} \\- summary statistics of numbers\n"
            f".SH SYNOPSIS\n.B {self.prog}\n< numbers\n.SH DESCRIPTION\nReads numbers from "
            "standard input and prints summary statistics, one per line.\n"
        )

    def expected(self, values: list[float]) -> str:
        out = f"count: {len(values)}\n"
        for _mod, stat in self.stats:
            out += f"{self.labels[stat]}: {_c_stat_value(stat, values):.{self.precision}f}\n"
        return out


def _c_number(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        text = str(rng.randint(-50, 300))
    elif kind < 0.9:
        text = f"{rng.uniform(-200, 900):.{rng.choice([1, 2, 3])}f}"
    else:
        text = f"{rng.randint(1, 9)}e{rng.randint(0, 2)}"
    return "0" if float(text) == 0 else text


@register
class CBuildFix(Family):
    """A small C statistics tool (several modules, headers, a Makefile) that does not build,
    or builds a wrong binary. Easy: one breakage; medium: two; hard: two (one subtle: a header
    guard clash, a prototype that disagrees with its definition, a static function, a variable
    defined in a header, a silently wrong return type) plus an `install` target that must honour
    DESTDIR and PREFIX. The tests run `make clean && make`, run the binary on hidden inputs, and
    check that the functions' bodies were not rewritten."""

    name = "c-build-fix"
    title = "Repair a broken C project's build so that make produces a working binary"
    category = "build-systems"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = _level(difficulty)
        proj = _CProject(rng, level)
        if params.get("breakages"):
            proj.breakages = list(params["breakages"])
        team = rng.choice(TEAMS)
        root = rng.choice(
            [
                f"/srv/{team}/{proj.prog}",
                f"/home/dev/{proj.prog}",
                f"/opt/src/{proj.prog}",
                f"/work/{proj.prog}",
            ]
        )
        broken = frozenset(proj.breakages) | ({"install"} if proj.install else set())
        fixed_files = proj.files()
        broken_files = proj.files(broken)
        changed = {rel: text for rel, text in fixed_files.items() if broken_files.get(rel) != text}
        # fix every breakage but the last one
        partial = proj.files(frozenset(proj.breakages[-1:]))
        partial_changed = {r: t for r, t in partial.items() if broken_files.get(r) != t}
        functions = proj.functions()
        digests = {f: _c_body_digest(fixed_files[path], f) for f, path in functions.items()}
        assert all(digests.values()), digests
        cases = []
        for i in range(7):
            n = [1, 2, 3][i] if i < 3 else rng.randint(4, 40)
            values = [_c_number(rng) for _ in range(n)]
            sep = rng.choice([" ", "\n", "  ", "\t"])
            text = sep.join(values) + ("\n" if i % 2 else "")
            cases.append({"stdin": text, "stdout": proj.expected([float(x) for x in values])})
        sample_vals = [_c_number(rng) for _ in range(rng.randint(8, 15))]
        sample = "\n".join(sample_vals) + "\n"
        drop = proj.victim if proj.victim in proj.modules else proj.dropped_obj
        dropped = proj.files(drop=drop)
        dropped_changed = {r: t for r, t in dropped.items() if broken_files.get(r) != t}
        single = {
            "Makefile": proj.makefile(frozenset(), single=True),
            "src/main.c": proj.single_main(),
        }
        mut_make = fixed_files["Makefile"]
        if proj.install:
            mut_make = mut_make.replace("$(DESTDIR)", "")
        else:
            mut_make = mut_make.split("clean:")[0] + ".PHONY: all\n"
        files = {f"environment/project/{rel}": text for rel, text in broken_files.items()}
        files["environment/project/examples/input.txt"] = sample
        files["environment/project/examples/expected.txt"] = proj.expected(
            [float(x) for x in sample_vals]
        )
        stat_docs = [(proj.labels[s], C_STAT_DOCS[s]) for _, s in proj.stats]
        return Draft(
            context={
                "root": root,
                "prog": proj.prog,
                "level": level,
                "install": proj.install,
                "breakages": proj.breakages,
                "changed": changed,
                "partial_changed": partial_changed,
                "dropped_changed": dropped_changed,
                "dropped_files": [f"src/{drop}.c", f"{proj.incdir}/{drop}.h"],
                "single": single,
                "module_files": [f"src/{m}.c" for m in proj.modules]
                + [f"{proj.incdir}/{m}.h" for m in proj.modules],
                "functions": functions,
                "digests": digests,
                "cases": cases,
                "codes": proj.codes,
                "precision": proj.precision,
                "stat_docs": stat_docs,
                "objdir": proj.objdir,
                "mut_makefile": mut_make,
                "stat_functions": [
                    [proj.fn(m, st), f"src/{m}.c", proj.labels[st]] for m, st in proj.stats
                ],
                "manpage": fixed_files.get(f"man/{proj.prog}.1", ""),
            },
            files=files,
            outputs=[f"{root}/{proj.prog}"],
            verifier_timeout_sec=180.0,
            tags=["c", "make", *proj.breakages] + (["install", "destdir"] if proj.install else []),
        )


# =============================================================================================
# performance-budget
# =============================================================================================

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
GROUP_WORDS = [
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


PERF_PY_STAGES = {
    "dedup": (
        '''def unique(rows):
    """Drop repeated records: the first record with a given id wins."""
    out = []
    for rec in rows:
        if rec[ID] in [kept[ID] for kept in out]:
            continue
        out.append(rec)
    return out
''',
        '''def unique(rows):
    """Drop repeated records: the first record with a given id wins."""
    seen = set()
    out = []
    for rec in rows:
        if rec[ID] in seen:
            continue
        seen.add(rec[ID])
        out.append(rec)
    return out
''',
    ),
    "join": (
        '''def index_people(roster):
    return roster


def group_of(index, who):
    """The group of a member: their first line in the roster wins."""
    found = [rec[GROUP] for rec in index if rec[WHO] == who]
    return found[0] if found else "unassigned"
''',
        '''def index_people(roster):
    index = {}
    for rec in roster:
        if rec[WHO] not in index:
            index[rec[WHO]] = rec[GROUP]
    return index


def group_of(index, who):
    """The group of a member: their first line in the roster wins."""
    return index.get(who, "unassigned")
''',
    ),
    "top": (
        '''def rank_members(rows):
    return rows


def top_member(members, ranking):
    """The member with the largest total (ties: the smallest name)."""
    best, best_total = None, -1
    for name in sorted(members):
        total = 0
        for rec in ranking:
            amount = int(rec[QTY]) * int(rec[PRICE])
            if rec[WHO] == name:
                total += amount
        if total > best_total:
            best, best_total = name, total
    return best
''',
        '''def rank_members(rows):
    totals = {}
    for rec in rows:
        totals[rec[WHO]] = totals.get(rec[WHO], 0) + int(rec[QTY]) * int(rec[PRICE])
    return totals


def top_member(members, ranking):
    """The member with the largest total (ties: the smallest name)."""
    return min(members, key=lambda name: (-ranking.get(name, 0), name))
''',
    ),
}


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
        code = PERF_PY_STAGES[stage][0 if stage in slow else 1]
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


PERF_BASH_STAGES = {
    "fields": (
        """while IFS= read -r line; do
    [ -n "$line" ] || continue
    host=$(echo "$line" | cut -d' ' -f2)
    path=$(echo "$line" | cut -d' ' -f4)
    status=$(echo "$line" | cut -d' ' -f5)
    size=$(echo "$line" | cut -d' ' -f6)
""",
        """while read -r stamp host method path status size; do
    [ -n "$stamp" ] || continue
""",
    ),
    "lookup": (
        """    dc=$(grep -m1 "^$host " "$hosts" | cut -d' ' -f2)
""",
        """    dc=${dc_of[$host]:-}
""",
    ),
    "paths": (
        """    norm=$(echo "$path" | sed -E 's/[0-9]+/N/g')
""",
        """    norm=${path//+([0-9])/N}
""",
    ),
}


def perf_bash_script(name: str, top: int, slow: set[str]) -> str:
    def stage(key: str) -> str:
        return PERF_BASH_STAGES[key][0 if key in slow else 1]

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


PERF_SQL_STAGES = {
    "lookup": (
        """    def customer(cid):
        row = db.execute(
            "SELECT name, region FROM customers WHERE cid = ? ORDER BY rowid LIMIT 1", (cid,)
        ).fetchone()
        return row if row else ("?", "unknown")
""",
        """    known = {}
    for cid, name, region in db.execute("SELECT cid, name, region FROM customers ORDER BY rowid"):
        known.setdefault(cid, (name, region))

    def customer(cid):
        return known.get(cid, ("?", "unknown"))
""",
    ),
    "refunds": (
        """    def refunded(oid):
        return db.execute(
            "SELECT COALESCE(SUM(cents), 0) FROM refunds WHERE oid = ?", (oid,)
        ).fetchone()[0]
""",
        """    back = dict(db.execute("SELECT oid, SUM(cents) FROM refunds GROUP BY oid"))

    def refunded(oid):
        return back.get(oid, 0)
""",
    ),
    "totals": (
        """    spend = []
    for (cid,) in db.execute("SELECT DISTINCT cid FROM customers").fetchall():
        total = db.execute(
            "SELECT COALESCE(SUM(cents), 0) FROM orders WHERE cid = ?", (cid,)
        ).fetchone()[0]
        spend.append((total, cid))
""",
        """    sums = dict(db.execute("SELECT cid, SUM(cents) FROM orders GROUP BY cid"))
    spend = [(sums.get(cid, 0), cid) for (cid,) in db.execute("SELECT DISTINCT cid FROM customers")]
""",
    ),
}


def perf_sql_script(top: int, slow: set[str], drift: bool = False) -> str:
    def stage(key: str) -> str:
        code = PERF_SQL_STAGES[key][0 if key in slow else 1]
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

        level = _level(difficulty)
        kind = params.get("kind") or _spread(rng, sorted(PERF_KINDS), level)
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
            gen = inspect.getsource(perf_py_data)
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
            gen = inspect.getsource(perf_bash_data)
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
            gen = inspect.getsource(perf_sql_data)
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
            agent_timeout_sec=900.0,
            verifier_timeout_sec=240.0,
            tags=[kind, "optimisation", *slow],
        )


# =============================================================================================
# ctf-hidden-flag
# =============================================================================================

CTF_WORDS = [
    "amber",
    "basalt",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "jasper",
    "krypton",
    "lumen",
    "marble",
    "nebula",
    "onyx",
    "prism",
    "quartz",
    "raven",
    "sable",
    "tundra",
    "umber",
    "vortex",
    "willow",
    "xenon",
    "yonder",
    "zephyr",
    "copper",
    "falcon",
    "glacier",
    "hollow",
    "ivory",
    "juniper",
    "kestrel",
    "lotus",
    "mosaic",
]
CTF_APPS = ["ledger", "beacon", "orchard", "quarry", "tidepool", "lantern", "sprocket", "meridian"]
CTF_USERS = ["mallory", "trudy", "eve", "oscar", "chuck", "sybil", "grumpy", "nobody2"]
CTF_SIMPLE = ["b64", "b32", "hex", "gz-b64"]
CTF_XOR = ["xor-b64", "xor-hex"]
CTF_EXTRA = ["rev", "rot13", "b64", "b32", "hex"]
CTF_SPOTS = ["config-line", "sqlite", "git-history", "gzip-log", "png-text", "zip-comment"]
CTF_PIPE = {
    "b64": "base64 -w0",
    "b32": "base32 -w0",
    "hex": "od -An -tx1 | tr -d ' \\n'",
    "rot13": "tr 'A-Za-z' 'N-ZA-Mn-za-m'",
    "rev": "rev",
    "xor-b64": "python3 /opt/tools/xor.py {key} | base64 -w0",
    "xor-hex": "python3 /opt/tools/xor.py {key} | od -An -tx1 | tr -d ' \\n'",
    "gz-b64": "gzip -9n | base64 -w0",
}
XOR_TOOL = '''#!/usr/bin/env python3
"""xor.py KEYFILE: XOR standard input with the key (the KEYFILE's content, surrounding
whitespace stripped), repeated as needed; write the result to standard output."""
import sys

key = open(sys.argv[1], "rb").read().strip()
data = sys.stdin.buffer.read()
sys.stdout.buffer.write(bytes(b ^ key[i % len(key)] for i, b in enumerate(data)))
'''
PNG_TOOL = '''#!/usr/bin/env python3
"""pngmeta.py set FILE KEYWORD TEXT: add a tEXt chunk (KEYWORD, TEXT) before IEND."""
import struct
import sys
import zlib

_, cmd, path, keyword, text = sys.argv
data = open(path, "rb").read()
body = keyword.encode("latin-1") + b"\\0" + text.encode("latin-1")
chunk = struct.pack(">I", len(body)) + b"tEXt" + body
chunk += struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF)
end = data.rindex(b"IEND") - 4
open(path, "wb").write(data[:end] + chunk + data[end:])
'''


def _xor(data: bytes, key: bytes) -> bytes:
    return bytes(b ^ key[i % len(key)] for i, b in enumerate(data))


def _ctf_encode(name: str, data: bytes, key: bytes) -> bytes:
    if name == "b64":
        return base64.b64encode(data)
    if name == "b32":
        return base64.b32encode(data)
    if name == "hex":
        return data.hex().encode()
    if name == "rot13":
        return codecs.encode(data.decode("latin-1"), "rot13").encode("latin-1")
    if name == "rev":
        return data[::-1]
    if name == "xor-b64":
        return base64.b64encode(_xor(data, key))
    if name == "xor-hex":
        return _xor(data, key).hex().encode()
    if name == "gz-b64":
        return base64.b64encode(gzip.compress(data, mtime=0))
    raise ValueError(name)


def _png(rng: random.Random, meta: dict[str, bytes]) -> bytes:
    w, h = rng.randint(8, 24), rng.randint(8, 24)
    color = bytes(rng.randrange(256) for _ in range(3))
    raw = b"".join(b"\0" + color * w for _ in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    out += chunk(b"tEXt", b"Software\0pixelkit 2.1")
    out += chunk(b"IDAT", zlib.compress(raw, 9))
    for key, value in meta.items():
        out += chunk(b"tEXt", key.encode() + b"\0" + value)
    return out + chunk(b"IEND", b"")


def _zip(rng: random.Random, members: dict[str, str], comment: bytes) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, text in members.items():
            zf.writestr(
                zipfile.ZipInfo(name, date_time=(2023, rng.randint(1, 12), 1, 9, 30, 0)), text
            )
        zf.comment = comment
    return buf.getvalue()


@register
class CtfHiddenFlag(Family):
    """A flag FLAG{...} hidden at image build time, never in plain text on disk: encoded through
    a chain of transforms (base64, base32, hex, rot13, reversal, gzip, XOR with a key kept
    elsewhere) and stashed in a config line, a SQLite BLOB, a deleted file in git history, an
    unreachable git blob, a rotated gzip log, a PNG tEXt chunk or a zip comment. The intruder's
    shell history is the breadcrumb trail. Easy: one transform, one spot; medium: two transforms
    including XOR, a decoy flag; hard: the flag split in two parts hidden in two different
    spots with 2-3 transforms each, and two decoys."""

    name = "ctf-hidden-flag"
    title = "Recover a flag hidden through layers of encoding on the machine"
    category = "security"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = _level(difficulty)
        words = rng.sample(CTF_WORDS, 6 + level)[level:]
        flag = f"FLAG{{{words[0]}_{words[1]}_{rng.randrange(16**8):08x}}}"
        decoys = [
            f"FLAG{{{words[2 + 2 * i]}_{words[3 + 2 * i]}_{rng.randrange(16**8):08x}}}"
            for i in range(2)
        ]
        app = rng.choice(CTF_APPS)
        user = rng.choice(CTF_USERS)
        key_path = rng.choice(
            [
                f"/etc/{app}/deploy.key",
                f"/opt/{app}/.keys/session.key",
                f"/var/lib/{app}/secret.key",
            ]
        )
        key_text = f"{rng.choice(CTF_WORDS)}-{rng.randrange(16**6):06x}"
        key = key_text.encode()
        out_path = rng.choice(
            [
                "/root/recovered_flag.txt",
                f"/home/{user}/answer.txt",
                "/srv/ctf/answer.txt",
                "/tmp/found/flag.txt",
            ]
        )
        nparts = 2 if level == 2 else 1
        if nparts == 2:
            cut = rng.randint(8, len(flag) - 8)
            pieces = [flag[:cut], flag[cut:]]
        else:
            cut = len(flag)
            pieces = [flag]
        spot_pool = list(CTF_SPOTS)
        if params.get("spots"):
            spots = list(params["spots"])[:nparts]
        elif level == 2:
            spots = [rng.choice(["git-dangling", "git-history"])] + rng.sample(
                [s for s in spot_pool if not s.startswith("git")], 1
            )
            rng.shuffle(spots)
        else:
            spots = [rng.choice(spot_pool)]
        parts = []
        for i, (piece, spot) in enumerate(zip(pieces, spots, strict=True)):
            if level == 0:
                chain = [rng.choice(CTF_SIMPLE)]
            elif level == 1:
                chain = [rng.choice(CTF_XOR), rng.choice(CTF_EXTRA)]
                if rng.random() < 0.5:
                    chain.reverse()
            else:
                chain = [rng.choice(CTF_XOR)] + rng.sample(CTF_EXTRA, rng.randint(1, 2))
                rng.shuffle(chain)
            if params.get("chain"):
                chain = list(params["chain"])
            data = piece.encode()
            for step in chain:
                data = _ctf_encode(step, data, key)
            parts.append(
                {
                    "index": i,
                    "spot": spot,
                    "chain": chain,
                    "payload": data.decode(),
                    "label": rng.choice(
                        ["token", "blob", "sig", "nonce", "cache_id", "trace", "build_ref"]
                    )
                    + f"_{i + 1}",
                }
            )
        uses_key = any(s.startswith("xor") for p in parts for s in p["chain"])
        files: dict[str, str | bytes] = {}
        installs: list[tuple[str, str, str]] = []  # (staged name, destination, mode)
        setup: list[str] = []

        def stage(dest: str, content: str | bytes, mode: str = "644") -> None:
            name = f"f{len(installs):02d}"
            files[f"environment/ctf/{name}"] = content
            installs.append((name, dest, mode))

        stage("/opt/tools/xor.py", XOR_TOOL, "755")
        if uses_key or level >= 1:
            stage(key_path, key_text + "\n", "600")
        hist = ["cd /tmp", "ls -la", "read -rs SECRET"]
        if nparts == 2:
            hist += [
                f"printf '%s' \"${{SECRET:0:{cut}}}\" > /tmp/.p1",
                f"printf '%s' \"${{SECRET:{cut}}}\" > /tmp/.p2",
            ]
        else:
            hist += ["printf '%s' \"$SECRET\" > /tmp/.p1"]
        solve: list[str] = []
        sqlite_rows: list[str] = []
        app_dir = f"/srv/{app}"
        for part in parts:
            n = part["index"] + 1
            pipe = " | ".join(CTF_PIPE[s].format(key=key_path) for s in part["chain"])
            hist.append(f"cat /tmp/.p{n} | {pipe} > /tmp/.e{n}")
            payload, label, spot = part["payload"], part["label"], part["spot"]
            get = f"/tmp/solve/e{n}"
            if spot == "config-line":
                conf = f"/etc/{app}/{rng.choice(['app', 'runtime', 'cache', 'worker'])}.conf"
                lines = [
                    f"{k} = {v}"
                    for k, v in [
                        ("listen", f"0.0.0.0:{rng.randint(2000, 9000)}"),
                        ("workers", str(rng.randint(2, 16))),
                        ("log_level", rng.choice(["info", "warn", "debug"])),
                        ("cache_ttl", str(rng.randint(30, 900))),
                    ]
                ]
                lines.insert(rng.randint(1, len(lines)), f"{label} = {payload}")
                stage(conf, "# " + app + " settings\n" + "\n".join(lines) + "\n")
                hist.append(f'echo "{label} = $(cat /tmp/.e{n})" >> {conf}')
                solve.append(f"sed -n 's/^{label} = //p' {conf} | tr -d '\\n' > {get}")
            elif spot == "sqlite":
                db = f"/var/lib/{app}/state.db"
                table = rng.choice(["blobs", "kv_store", "attachments"])
                sqlite_rows.append(
                    f"INSERT INTO {table}(name, data) VALUES ('{label}', X'{payload.encode().hex()}');"
                )
                part["db"], part["table"] = db, table
                hist.append(
                    f'sqlite3 {db} "INSERT INTO {table}(name, data) VALUES '
                    f"('{label}', readfile('/tmp/.e{n}'))\""
                )
                solve.append(
                    f"python3 -c \"import sqlite3,sys; sys.stdout.buffer.write(sqlite3.connect('{db}')"
                    f".execute('SELECT data FROM {table} WHERE name = ?', ('{label}',)).fetchone()[0])\""
                    f" > {get}"
                )
            elif spot in ("git-history", "git-dangling"):
                repo = f"{app_dir}/{rng.choice(['config', 'deploy', 'infra'])}-repo" + (
                    "" if spot == "git-history" else "-old"
                )
                fname = rng.choice(["notes.bin", ".cache.dat", "session.tmp", "blob.txt"])
                stage(f"/tmp/ctf-git/{spot}-{n}", payload)
                part["repo"], part["fname"] = repo, fname
                setup += self._git_setup(
                    rng, repo, app, user, spot, fname, f"/tmp/ctf-git/{spot}-{n}"
                )
                if spot == "git-history":
                    hist += [
                        f"cp /tmp/.e{n} {repo}/{fname}",
                        f"cd {repo}",
                        f"git add {fname} && git commit -m 'wip'",
                        "git log --oneline | head",
                        f"git rm -q {fname} && git commit -m 'tidy up'",
                        "cd /tmp",
                    ]
                    solve.append(
                        f'git -C {repo} show "$(git -C {repo} log --all --diff-filter=A '
                        f'--format=%H -- {fname} | head -n 1):{fname}" > {get}'
                    )
                else:
                    hist += [f"git -C {repo} hash-object -w /tmp/.e{n}"]
                    solve.append(
                        f"sha=$(git -C {repo} fsck --unreachable --no-reflogs 2>/dev/null | "
                        f"awk '/unreachable blob/ {{print $3}}' | head -n 1)"
                    )
                    solve.append(f'git -C {repo} cat-file -p "$sha" > {get}')
            elif spot == "gzip-log":
                gen = rng.randint(2, 6)
                log = f"/var/log/{app}/{app}.log.{gen}.gz"
                lines = []
                for i in range(rng.randint(60, 140)):
                    lines.append(
                        f"2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}T{i % 24:02d}:"
                        f"{rng.randrange(60):02d}:00Z INFO request id={rng.randrange(16**8):08x} "
                        f"status={rng.choice([200, 200, 304, 404, 500])}"
                    )
                lines.insert(
                    rng.randrange(len(lines)),
                    f"2024-03-03T03:03:03Z DEBUG session {label}={payload}",
                )
                stage(log, gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
                hist += [
                    f'echo "$(date -Is) DEBUG session {label}=$(cat /tmp/.e{n})" >> /var/log/{app}/{app}.log.{gen}',
                    f"gzip -9 /var/log/{app}/{app}.log.{gen}",
                ]
                solve.append(f"zcat {log} | sed -n 's/.* {label}=//p' | tr -d '\\n' > {get}")
            elif spot == "png-text":
                png = f"{app_dir}/static/{rng.choice(['logo', 'banner', 'favicon-large'])}.png"
                stage(png, _png(rng, {label: payload.encode()}))
                stage("/opt/tools/pngmeta.py", PNG_TOOL, "755")
                hist.append(f'python3 /opt/tools/pngmeta.py set {png} {label} "$(cat /tmp/.e{n})"')
                solve.append(
                    "python3 - <<'__PNG__' > " + get + "\n"
                    "import struct, sys\n"
                    f"data = open({png!r}, 'rb').read()\npos = 8\n"
                    "while pos < len(data):\n"
                    "    size, kind = struct.unpack('>I4s', data[pos:pos + 8])\n"
                    "    body = data[pos + 8:pos + 8 + size]\n"
                    f"    if kind == b'tEXt' and body.split(b'\\0', 1)[0] == {label.encode()!r}:\n"
                    "        sys.stdout.buffer.write(body.split(b'\\0', 1)[1])\n"
                    "    pos += 12 + size\n"
                    "__PNG__"
                )
            else:  # zip-comment
                archive = f"/var/backups/{app}-{rng.randint(2021, 2024)}.zip"
                members = {
                    "README.txt": f"{app} backup\n",
                    f"etc/{app}.conf": f"workers = {rng.randint(2, 9)}\n",
                    "db/schema.sql": "CREATE TABLE t (id INTEGER);\n",
                }
                stage(archive, _zip(rng, members, payload.encode()))
                hist.append(f"zip -z {archive} < /tmp/.e{n}")
                solve.append(
                    f"python3 -c \"import zipfile,sys; sys.stdout.buffer.write(zipfile.ZipFile('{archive}')"
                    f'.comment)" > {get}'
                )
        hist += ["shred -u /tmp/.p* /tmp/.e*", "unset SECRET"]
        if level >= 1:
            hist.insert(2, f"echo '{decoys[0]}' > /root/flag.txt")
            stage("/root/flag.txt", decoys[0] + "\n")
        else:
            stage(
                f"/home/{user}/todo.txt",
                "- clean up the box\n- "
                + rng.choice(["rotate keys", "check the backups", "remove test users"])
                + "\n",
            )
        if level == 2:
            stage(f"{app_dir}/flag.bak", base64.b64encode(decoys[1].encode()).decode())
            hist.insert(4, f"printf '%s' '{decoys[1]}' | base64 -w0 > {app_dir}/flag.bak")
        stage(f"/home/{user}/.bash_history", "\n".join(hist) + "\n", "600")
        dbs = sorted({(p["db"], p["table"]) for p in parts if p["spot"] == "sqlite"})
        sql = ""
        for _db, table in dbs:
            sql += f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT, data BLOB);\n"
            for i in range(rng.randint(5, 12)):
                junk = bytes(rng.randrange(256) for _ in range(rng.randint(8, 40)))
                sql += (
                    f"INSERT INTO {table}(name, data) VALUES "
                    f"('{rng.choice(['avatar', 'thumb', 'draft', 'cfg'])}_{i}', X'{junk.hex()}');\n"
                )
            sql += "\n".join(sqlite_rows) + "\n"
            if level == 2:
                sql += (
                    f"INSERT INTO {table}(name, data) VALUES ('flag', "
                    f"X'{base64.b32encode(decoys[1][::-1].encode()).hex()}');\n"
                )
        if dbs:
            files["environment/ctf/state.sql"] = sql
        # Nothing generated may hold the flag (or a part of it) in plain text.
        for rel, content in files.items():
            blob = content.encode() if isinstance(content, str) else content
            for secret in [flag, flag[5:-1], *pieces]:
                assert secret.encode() not in blob or len(secret) < 8, (rel, secret)
        decode = {
            "parts": [
                {"chain": p["chain"], "file": f"/tmp/solve/e{p['index'] + 1}"} for p in parts
            ],
            "key": key_path,
        }
        return Draft(
            context={
                "level": level,
                "user": user,
                "app": app,
                "out_path": out_path,
                "installs": installs,
                "setup": setup,
                "db": dbs[0][0] if dbs else None,
                "solve": solve,
                "decode_json": json.dumps(decode),
                "flag": flag,
                "decoys": decoys,
                "nparts": nparts,
                "pieces": pieces,
            },
            files=files,
            secrets=[flag, flag[5:-1]],
            outputs=[out_path],
            forbidden_strings=[flag, flag[5:-1]],
            tags=[
                "ctf",
                "forensics",
                *sorted({p["spot"] for p in parts}),
                *sorted({s for p in parts for s in p["chain"]}),
            ],
        )

    @staticmethod
    def _git_setup(
        rng: random.Random, repo: str, app: str, user: str, spot: str, fname: str, staged: str
    ) -> list[str]:
        env = "GIT_AUTHOR_DATE='2024-02-0{d}T10:00:00Z' GIT_COMMITTER_DATE='2024-02-0{d}T10:00:00Z'"
        lines = [
            f"mkdir -p {repo}",
            f"git -C {repo} init -q -b main",
            f"git -C {repo} config user.name {user}",
            f"git -C {repo} config user.email {user}@{app}.internal",
            f"printf '# {app} %s\\n\\nDeployment settings.\\n' {spot.split('-')[1]} > {repo}/README.md",
            f"printf 'replicas = {rng.randint(1, 5)}\\n' > {repo}/app.conf",
            f"git -C {repo} add -A",
            f"{env.format(d=1)} git -C {repo} commit -qm 'initial import'",
        ]
        if spot == "git-history":
            lines += [
                f"cp {staged} {repo}/{fname}",
                f"git -C {repo} add {fname}",
                f"{env.format(d=2)} git -C {repo} commit -qm 'wip'",
                f"printf 'replicas = {rng.randint(6, 9)}\\n' > {repo}/app.conf",
                f"git -C {repo} rm -q {fname}",
                f"{env.format(d=3)} git -C {repo} commit -qam 'tidy up'",
            ]
        else:
            lines += [
                f"printf 'replicas = {rng.randint(6, 9)}\\n' > {repo}/app.conf",
                f"{env.format(d=2)} git -C {repo} commit -qam 'scale up'",
                f"git -C {repo} hash-object -w {staged} > /dev/null",
            ]
        return lines


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


def jt_report(inputs, spec, level, bug=""):
    """Reference of the `report` kind: inputs (file name -> text) -> outputs (file name -> text)."""
    import json
    import re

    t = spec["theme"]

    def dump(obj):
        if bug == "format":
            return json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False) + "\n"
        return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def total(rec):
        return sum(i[t["qty"]] * i[t["price"]] for i in rec.get(t["items"]) or [])

    def is_int(x, low):
        return type(x) is int and x >= low

    errors, records = [], []
    for name in sorted(inputs):
        for index, rec in enumerate(json.loads(inputs[name])):
            if level < 2:
                records.append((rec, name, index))
                continue
            rid = rec.get("id")
            items = rec.get(t["items"])
            if not (isinstance(rid, str) and re.fullmatch(re.escape(t["prefix"]) + "[0-9]+", rid)):
                err = "bad id"
            elif not is_int(rec.get("version"), 1):
                err = "bad version"
            elif rec.get("status") not in t["statuses"]:
                err = "bad status"
            elif not (
                isinstance(items, list)
                and items
                and all(
                    isinstance(i, dict)
                    and is_int(i.get(t["qty"]), 1)
                    and is_int(i.get(t["price"]), 0)
                    for i in items
                )
            ):
                err = "bad items"
            else:
                records.append((rec, name, index))
                continue
            errors.append(
                {
                    "file": name,
                    "index": index,
                    "id": rid if isinstance(rid, str) else None,
                    "error": err,
                }
            )
    if level == 2:
        best = {}
        for rec, name, index in records:
            key = rec["id"]
            rank = (rec["version"], name, index)
            if key not in best or (bug != "edge" and rank > best[key][0]):
                best[key] = (rank, rec)
        records = [(rec, "", 0) for _, rec in best.values()]
    recs = [rec for rec, _, _ in records]
    out = {}
    if level == 0:
        wanted = spec["status"]
        if bug == "edge":
            chosen = [r for r in recs if str(r.get("status", "")).lower() == wanted.lower()]
        else:
            chosen = [r for r in recs if r.get("status") == wanted]
        chosen.sort(key=lambda r: (-total(r), r["id"]))
        order = spec["key_order"] if bug != "format" else sorted(spec["key_order"])
        lines = []
        for r in chosen:
            values = {"id": r["id"], t["actor"]: r[t["actor"]]["name"], "total": total(r)}
            lines.append(json.dumps({k: values[k] for k in order}, ensure_ascii=False))
        out["selected.jsonl"] = "".join(line + "\n" for line in lines)
        return out
    groups = {}
    spend = {}
    for r in recs:
        if r.get("status") not in spec["statuses"]:
            continue
        region = (r.get(t["actor"]) or {}).get(t["region"])
        if region is None:
            if bug == "edge":
                continue
            region = "unknown"
        g = groups.setdefault(region, {"count": 0, "revenue": 0, "ids": []})
        g["count"] += 1
        g["revenue"] += total(r)
        g["ids"].append(r["id"])
        who = r[t["actor"]]["name"]
        spend.setdefault(region, {}).setdefault(who, 0)
        spend[region][who] += total(r)
    for region, g in groups.items():
        g["ids"].sort()
        g["top"] = min(spend[region].items(), key=lambda kv: (-kv[1], kv[0]))[0]
    out["summary.json"] = dump(groups)
    if level == 2:
        errors.sort(key=lambda e: (e["file"], e["index"]))
        out["errors.json"] = dump(errors)
    return out


def jt_merge(inputs, spec, level, bug=""):
    """Reference of the `merge` kind."""
    import json

    def merge(a, b, top=False):
        out = dict(a)
        for key, value in b.items():
            if value is None and level >= 1 and bug != "edge":
                out.pop(key, None)
            elif isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = merge(out[key], value)
            elif (
                top
                and level == 2
                and key == spec["by_name"]
                and isinstance(value, list)
                and isinstance(out.get(key), list)
                and bug != "edge"
            ):
                merged = [dict(x) for x in out[key]]
                for item in value:
                    match = next((m for m in merged if m.get("name") == item.get("name")), None)
                    if match is None:
                        merged.append(item)
                    else:
                        merged[merged.index(match)] = merge(match, item)
                out[key] = merged
            elif (
                top
                and level == 2
                and key == spec["union"]
                and isinstance(value, list)
                and isinstance(out.get(key), list)
            ):
                out[key] = list(out[key]) + [x for x in value if x not in out[key]]
            elif (
                bug == "edge"
                and level == 0
                and isinstance(value, list)
                and isinstance(out.get(key), list)
            ):
                out[key] = list(out[key]) + value
            else:
                out[key] = value
        return out

    result = {}
    for name in spec["order"]:
        result = merge(result, json.loads(inputs[name]), top=True)
    indent = 4 if bug == "format" else 2
    outputs = {
        spec["output"]: json.dumps(result, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"
    }
    if level == 2:
        problems = []
        port = result.get("server", {}).get("port")
        if not (type(port) is int and 1 <= port <= 65535):
            problems.append(f"server.port: not an integer between 1 and 65535: {json.dumps(port)}")
        level_name = result.get("logging", {}).get("level")
        if level_name not in ("debug", "info", "warn", "error"):
            problems.append(f"logging.level: unknown level: {json.dumps(level_name)}")
        pool = result.get("database", {}).get("pool", {})
        if not (
            type(pool.get("min")) is int
            and type(pool.get("max")) is int
            and pool["min"] <= pool["max"]
        ):
            problems.append(
                f"database.pool: min must not exceed max: "
                f"{json.dumps(pool.get('min'))} > {json.dumps(pool.get('max'))}"
            )
        for i, up in enumerate(result.get(spec["by_name"], [])):
            if not (type(up.get("weight")) is int and up["weight"] >= 1):
                problems.append(
                    f"{spec['by_name']}.{i}.weight: not a positive integer: "
                    f"{json.dumps(up.get('weight'))}"
                )
        outputs["problems.json"] = json.dumps(sorted(problems), indent=indent) + "\n"
    return outputs


def jt_reshape(inputs, spec, level, bug=""):
    """Reference of the `reshape` kind."""
    import json

    indent = 4 if bug == "format" else 2
    if level == 0:
        flat = {}

        def walk(prefix, value):
            if isinstance(value, dict) and value:
                for k, v in value.items():
                    walk(f"{prefix}.{k}" if prefix else k, v)
            elif isinstance(value, list) and value and bug != "edge":
                for i, v in enumerate(value):
                    walk(f"{prefix}.{i}", v)
            else:
                flat[prefix] = value

        walk("", json.loads(inputs[spec["input"]]))
        return {
            "flat.json": json.dumps(flat, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"
        }
    nodes, rejected = {}, []
    for number, line in enumerate(inputs[spec["input"]].split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            rejected.append({"line": number, "reason": "invalid json"})
            continue
        if not isinstance(rec, dict) or type(rec.get("id")) is not int:
            rejected.append({"line": number, "reason": "bad id"})
            continue
        if not isinstance(rec.get("name"), str):
            rejected.append({"line": number, "reason": "bad name"})
            continue
        if bug == "edge" and level == 2 and rec["id"] in nodes:
            continue
        nodes[rec["id"]] = rec
    children = {}
    for rec in nodes.values():
        children.setdefault(rec.get("parent"), []).append(rec["id"])

    def build(nid):
        rec = nodes[nid]
        kids = sorted(children.get(nid, []))
        if bug == "edge" and level == 1:
            kids = children.get(nid, [])
        node = {"id": nid, "name": rec["name"]}
        built = [build(k) for k in kids]
        if level == 2:
            node["size"] = rec.get("size", 0)
            node["total"] = node["size"] + sum(b["total"] for b in built)
        node["children"] = built
        return node

    roots = sorted(i for i, rec in nodes.items() if rec.get("parent") not in nodes)
    out = {
        "tree.json": json.dumps([build(r) for r in roots], indent=indent, ensure_ascii=False) + "\n"
    }
    if level == 2:
        out["rejected.json"] = json.dumps(rejected, indent=indent) + "\n"
    return out


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
        while True:
            rid = f"{t['prefix']}{rng.randint(1000, 99999)}"
            if rid not in used:
                used.add(rid)
                return rid

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
    rolled-up totals."""

    name = "json-transform"
    title = "Reshape JSON documents into an exactly specified output"
    category = "data-wrangling"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        import inspect

        level = _level(difficulty)
        kind = params.get("kind") or _spread(rng, sorted(JT_KINDS), level)
        func, make = JT_KINDS[kind]
        app = rng.choice(CTF_APPS + ["atlas", "nimbus", "quokka"])
        root = rng.choice([f"/srv/{app}", f"/data/{app}", f"/home/analyst/{app}", f"/opt/{app}"])
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
        inputs = make(rng, level, spec)
        expected = func(inputs, spec, level)
        out_dir = f"{root}/out"
        files = {f"environment/input/{name}": text for name, text in inputs.items()}
        return Draft(
            context={
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
            },
            files=files,
            outputs=[f"{out_dir}/{name}" for name in expected],
            tags=["json", kind] + (["validation"] if level == 2 else []),
        )
