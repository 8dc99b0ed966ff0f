"""python-bugfix: fix the bugs of a small generated Python package so that it matches its
docstrings. The package is assembled from the function kinds of :mod:`.kinds`."""

from __future__ import annotations

import copy
import difflib
import hashlib
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from factory.datafiles import load_toml_model
from factory.families.base import Draft, Family, Trap, register
from factory.vocabulary import Difficulty

from .kinds import KINDS, Case


class _Domain(BaseModel):
    """A domain a package is drawn from (domains.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    what: str
    packages: tuple[str, ...]
    core: tuple[str, ...]
    front: tuple[str, ...]
    core_kinds: tuple[str, ...]
    front_kinds: tuple[str, ...]

    @model_validator(mode="after")
    def _known_kinds(self) -> _Domain:
        unknown = sorted(set(self.core_kinds + self.front_kinds) - set(KINDS))
        if unknown:
            raise ValueError(f"{self.what}: unknown kind '{unknown[0]}' (not in kinds/)")
        return self


class _Domains(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: list[_Domain]


PY_DOMAINS = load_toml_model(
    Path(__file__).parent / "domains.toml", _Domains, "python-bugfix domains"
).domain
"""The domains a package is drawn from (domains.toml)."""


def _resolve(source: str, names: Mapping[str, str]) -> str:
    for key, name in names.items():
        source = source.replace(f"@{key}@", name)
    return source


def _kind_code(key: str, bugs: list[tuple[str, str]], names: Mapping[str, str]) -> str:
    """The source of one kind, with the given (kind, bug) pairs applied where they belong."""
    kind = KINDS[key]
    code = kind.code.strip("\n") + "\n"
    for bug_key, bug in bugs:
        if bug_key != key:
            continue
        for old, new in {**kind.bugs, **kind.edges}[bug]:
            if code.count(old) != 1:
                raise ValueError(f"{key}/{bug}: snippet not found once: {old!r}")
            code = code.replace(old, new)
    return _resolve(code, names)


def _call_src(args: str, names: Mapping[str, str]) -> str:
    """The argument list of a call, from the source of an argument tuple."""
    inner = _resolve(args, names).strip()
    assert inner.startswith("(") and inner.endswith(")"), args
    return inner[1:-1].strip().removesuffix(",")


def _compatible(key: str, bugs: list[str]) -> bool:
    """Whether these bugs of one kind can be applied together (their snippets do not overlap)."""
    try:
        _kind_code(key, [(key, b) for b in bugs], {})
    except ValueError:
        return False
    return True


def _reference_namespace(keys: list[str], names: Mapping[str, str]) -> dict[str, Any]:
    import functools
    import re

    namespace: dict[str, Any] = {"re": re, "functools": functools}
    for key in sorted(keys, key=lambda k: bool(KINDS[k].helper)):
        exec(_kind_code(key, [], names), namespace)  # noqa: S102 - our own catalogue
    return namespace


def _run_case(
    namespace: dict[str, Any], fn: str, case: Case, names: Mapping[str, str]
) -> tuple[Any, Any]:
    """Run a case with the correct code: (the arguments, the result)."""
    local = dict(namespace)
    if case.setup:
        exec(_resolve(case.setup, names), local)  # noqa: S102
    args = eval(_resolve(case.args, names), local)  # noqa: S307
    return copy.deepcopy(args), local[fn](*args)


PY_TRAPS = [
    Trap(
        "the failing test's function suffers from a bug in a helper of another module",
        ("helper", "elsewhere", "another module", "only suffers"),
    ),
    Trap(
        "bugs no visible test covers",
        ("not every problem", "edge case", "edge cases", "not covered by"),
    ),
]


def _edits(broken: Mapping[str, str], fixed: Mapping[str, str]) -> list[dict[str, Any]]:
    """The fix as one small patch per changed place (what a person edits one after the other),
    each with the lines to look at first."""
    edits = []
    for path in sorted(broken):
        if broken[path] == fixed[path]:
            continue
        old, new = broken[path].splitlines(keepends=True), fixed[path].splitlines(keepends=True)
        matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
        for group in matcher.get_grouped_opcodes(1):
            first, last = group[0][1], group[-1][2]
            hunk = "".join(
                difflib.unified_diff(
                    old[first:last], new[group[0][3] : group[-1][4]], f"a/{path}", f"b/{path}"
                )
            )
            # unified_diff numbers the excerpt from 1: move the hunk to where it is in the file
            # once the edits before it are made (where the fixed file has it)
            start = group[0][3] + 1
            hunk = re.sub(
                r"^@@ -1(,\d+)? \+1(,\d+)? @@",
                lambda m, at=start: f"@@ -{at}{m.group(1) or ''} +{at}{m.group(2) or ''} @@",
                hunk,
                count=1,
                flags=re.M,
            )
            edits.append(
                {
                    "path": path,
                    "first": max(1, start - 2),
                    "last": start + last - first + 2,
                    "patch": hunk,
                }
            )
    return edits


@register
class PythonBugfix(Family):
    """A small generated Python package in /app (five domains, twenty-two function kinds with
    randomised names) with a visible failing test. easy: one bug; medium: the bug plus an
    undocumented-by-tests edge case; hard: the failing test exercises a function in one module
    while the bug sits in a helper of another module, plus an edge case elsewhere. Hidden tests
    compare every function with a reference on fixed and random inputs and check the visible
    tests are unchanged and pass."""

    name = "python-bugfix"
    title = "Fix the bugs of a small Python package so that it matches its docstrings"
    category = "software-engineering"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        dom = rng.choice(PY_DOMAINS)
        pkg = rng.choice(dom.packages)
        core, front = rng.choice(dom.core), rng.choice(dom.front)
        core_kinds, front_kinds = list(dom.core_kinds), list(dom.front_kinds)
        rng.shuffle(core_kinds)
        rng.shuffle(front_kinds)
        keys = core_kinds + front_kinds
        names = {k: rng.choice(KINDS[k].names) for k in keys}
        plain = [k for k in keys if KINDS[k].bugs]
        if level == "hard":
            users = [k for k in front_kinds if KINDS[k].helper]
            shown = rng.choice(users)
            target = KINDS[shown].helper
            bug = rng.choice(sorted(set(KINDS[target].bugs) - set(KINDS[shown].hides)))
            case = KINDS[shown].reveal[target]
        else:
            target = rng.choice(plain)
            shown = target
            bug = rng.choice(sorted(KINDS[target].bugs))
            case = KINDS[target].reveal[bug]
        active = [(target, bug)]
        if level != "easy":
            # medium: an edge case of the same function when it has one that does not
            # overlap the bug; otherwise (and for hard) one of another function
            same = [e for e in sorted(KINDS[target].edges) if _compatible(target, [bug, e])]
            if level == "medium" and same:
                active.append((target, rng.choice(same)))
            else:
                pool = [k for k in keys if KINDS[k].edges and k not in {shown, target}]
                edge_kind = rng.choice(pool)
                active.append((edge_kind, rng.choice(sorted(KINDS[edge_kind].edges))))
        if level == "hard":
            # and a bug of a third function that no visible test shows
            taken = {shown, target, active[-1][0]}
            third = rng.choice([k for k in plain if k not in taken])
            active.append((third, rng.choice(sorted(KINDS[third].bugs))))
        module_of = {k: core for k in core_kinds} | {k: front for k in front_kinds}

        def module_text(mod: str, mod_keys: list[str], bugs: list[tuple[str, str]]) -> str:
            imports = sorted({KINDS[k].imports for k in mod_keys if KINDS[k].imports})
            helpers = sorted(names[KINDS[k].helper] for k in mod_keys if KINDS[k].helper)
            head = f'"""{pkg}.{mod}: {dom.what} helpers."""\n\n'
            if imports:
                head += "\n".join(imports) + "\n\n"
            if helpers:
                head += f"from {pkg}.{core} import {', '.join(helpers)}\n\n"
            body = "\n\n".join(_kind_code(k, bugs, names) for k in mod_keys)
            return head + "\n" + body

        def sources(bugs: list[tuple[str, str]]) -> dict[str, str]:
            return {
                f"{pkg}/{core}.py": module_text(core, core_kinds, bugs),
                f"{pkg}/{front}.py": module_text(front, front_kinds, bugs),
            }

        broken, fixed = sources(active), sources([])
        ns = _reference_namespace(keys, names)

        # the visible tests: two passing cases per function, one case that shows the bug
        def literal(value: Any) -> str:
            return f"pytest.approx({value!r})" if isinstance(value, float) else repr(value)

        tests = [
            "import pytest\n",
            f"from {pkg} import {', '.join(sorted(names.values()))}\n",
        ]
        for k in keys:
            for i, c in enumerate(KINDS[k].basic, 1):
                _, want = _run_case(ns, names[k], c, names)
                tests.append(
                    f"\ndef test_{names[k]}_{i}():\n"
                    f"    assert {names[k]}({_call_src(c.args, names)}) == {literal(want)}\n"
                )
        args, want = _run_case(ns, names[shown], case, names)
        body = ""
        if case.setup:
            body += f"    {_resolve(case.setup, names)}\n"
        body += f"    assert {names[shown]}({_call_src(case.args, names)}) == {literal(want)}\n"
        if case.post:
            body += f"    {case.post}\n"
        n_shown = len(KINDS[shown].basic) + 1
        tests.append(f"\ndef test_{names[shown]}_{n_shown}():\n{body}")
        visible = "\n".join(tests)
        init = (
            f'"""{pkg}: a small library for {dom.what}."""\n\n'
            f"from {pkg}.{core} import {', '.join(names[k] for k in core_kinds)}\n"
            f"from {pkg}.{front} import {', '.join(names[k] for k in front_kinds)}\n\n"
            f"__all__ = {sorted(names.values())!r}\n"
        )
        files = {f"environment/app/{path}": text for path, text in broken.items()}
        files[f"environment/app/{pkg}/__init__.py"] = init
        files[f"environment/app/tests/test_{pkg}.py"] = visible
        files["environment/app/pytest.ini"] = "[pytest]\ntestpaths = tests\npythonpath = .\n"

        patch = "".join(
            "".join(
                difflib.unified_diff(
                    broken[path].splitlines(keepends=True),
                    fixed[path].splitlines(keepends=True),
                    f"a/{path}",
                    f"b/{path}",
                )
            )
            for path in sorted(broken)
            if broken[path] != fixed[path]
        )
        edits = _edits(broken, fixed)
        # near misses
        others = [k for k in plain if k not in {target, shown} | {k for k, _ in active}]
        other = rng.choice(others)
        collateral = sources([(other, rng.choice(sorted(KINDS[other].bugs)))])
        if level == "easy":
            edge_kind = (
                target if KINDS[target].edges else rng.choice([k for k in keys if KINDS[k].edges])
            )
            partial = sources([(edge_kind, rng.choice(sorted(KINDS[edge_kind].edges)))])
        else:
            partial = sources(active[1:])
        wrapper = (
            f"\n\n_{names[shown]}_impl = {names[shown]}\n\n\n"
            f"def {names[shown]}(*args, **kwargs):\n"
            f"    if args == {args!r} and not kwargs:\n"
            f"        return {want!r}\n"
            f"    return _{names[shown]}_impl(*args, **kwargs)\n"
        )
        changed = sorted(path for path in broken if broken[path] != fixed[path])
        what_kind = {
            "easy": "",
            "medium": "Not every problem is covered by a failing test: check the functions against "
            "their docstrings, including the edge cases the docstrings describe.",
            "hard": "Users also report wrong results from functions that no test covers.",
        }[level]
        cases = []
        for k in keys:
            kind = KINDS[k]
            for c in list(kind.basic) + list(kind.reveal.values()):
                cases.append(
                    {
                        "fn": names[k],
                        "setup": _resolve(c.setup, names),
                        "args": _resolve(c.args, names),
                        "post": c.post,
                    }
                )
        return Draft(
            context={
                "pkg": pkg,
                "what": dom.what,
                "core": core,
                "front": front,
                "level": level,
                "names": names,
                "keys": keys,
                "visible_name": f"test_{pkg}.py",
                "visible_sha": hashlib.sha256(visible.encode()).hexdigest(),
                "patch": patch,
                "edits": edits,
                "note": what_kind,
                "reference": "\n\n".join(
                    _resolve(
                        KINDS[k].code.strip("\n") + "\n",
                        {kk: f"ref_{n}" for kk, n in names.items()},
                    )
                    for k in keys
                ),
                "gens": {names[k]: KINDS[k].gen.strip("\n") + "\n" for k in keys},
                "edge_tests": "\n\n".join(
                    _resolve(KINDS[k].edge_tests.strip("\n"), names)
                    for k in keys
                    if KINDS[k].edge_tests
                ),
                "cases": cases,
                "collateral": {p: t for p, t in collateral.items()},
                "partial": {p: t for p, t in partial.items()},
                "fixed": fixed,
                "shown": shown,
                "wrapper_module": f"{pkg}/{module_of[shown]}.py",
                "wrapper": wrapper,
                "seed": rng.randint(1, 10**6),
            },
            files=files,
            outputs=[f"/app/{path}" for path in changed],
            separate_verifier=True,
            # the tests run the package and its visible tests (pytest.ini included) from /app
            artifacts=["/app/"],
            tags=["python", "debugging", "pytest"],
            faults=sorted(f"{key}:{bug}" for key, bug in active),
            traps=PY_TRAPS if level == "hard" else [],
        )
