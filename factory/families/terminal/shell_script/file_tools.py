"""shell-script's file tools: bulk-rename extensions and rotate logs; their models and test
cases."""

from __future__ import annotations

import random
import re
from typing import Any

from .options import POSITIVE, parse_options

REN_NAMES = ["extswap", "renext", "bulkmv", "rext", "chext", "mvext", "swapext"]
ROT_NAMES = ["logrot", "rotlog", "logcycle", "roll-log", "logshift", "rotate-log", "agelog"]


def _answer(tree: dict, code: int, *, stdout: str = "", stderr: str | None = None) -> dict:
    """What a file tool's model expects of one call: its output, exit code, error line (None
    for none) and the tree it leaves."""
    return {"stdout": stdout, "code": code, "stderr": stderr, "expected_tree": tree}


def _ren_model(spec: dict, args: list[str], tree: dict[str, str | None]) -> dict:
    """tree: relative path -> content (None = directory). Returns stdout/code/stderr/tree."""
    name, codes, level = spec["name"], spec["codes"], spec["level"]
    parsed = parse_options(args, level, {"-n": (1, None), "-r": (2, None)})
    if parsed is None:
        return _answer(tree, codes["usage"])
    given, rest = parsed
    dry, recurse = "-n" in given, "-r" in given
    if len(rest) != 3:
        return _answer(tree, codes["usage"])
    root, old, new = rest
    if level >= 1:
        old, new = old.removeprefix("."), new.removeprefix(".")
    if root not in tree or tree[root] is not None:
        return _answer(tree, codes["dir"], stderr=f"{name}: not a directory: {root}")
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
    return _answer(
        new_tree,
        codes["skip"] if skipped else 0,
        stdout="".join(line + "\n" for line in out),
        stderr=err[0] if err else None,
    )


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


def rename_cases(rng: random.Random, level: int, spec: dict) -> list[dict]:
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
    parsed = parse_options(args, level, {"-k": (0, POSITIVE), "-z": (2, None)})
    if parsed is None:
        return _answer(tree, codes["usage"])
    given, rest = parsed
    keep, gz = int(given.get("-k", spec["keep"])), "-z" in given
    if len(rest) != 1:
        return _answer(tree, codes["usage"])
    log = rest[0]
    if log not in tree:
        return _answer(tree, codes["missing"], stderr=f"{name}: no such log: {log}")
    if tree[log]["data"] == "":
        return _answer(tree, 0)
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
    return _answer(new, 0)


def rotate_cases(rng: random.Random, level: int, spec: dict) -> list[dict]:
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
