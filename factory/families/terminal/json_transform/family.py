"""json-transform: transform JSON documents (a report, a merge, a reshape) exactly as specified.
The reference transformations, whose source the tasks embed, are in
``shipped/transforms.py``."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.import_job import IMPORT_FAULTS, ImportJob, Wiring, reachable_folder
from factory.families.terminal.knobs import level_and_kind
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.traps import load_traps
from factory.families.terminal.words import CTF_APPS
from factory.vocabulary import Difficulty

from .inputs import JT_THEMES, merge_inputs, report_inputs, reshape_inputs
from .shipped.transforms import (
    jt_merge,
    jt_report,
    jt_reshape,
)

# =============================================================================================
# json-transform
# =============================================================================================

#: Hard: the sub-problems a task composes (two to four): three about how the input files are
#: stored, the rest about the output's consumer, an import job run by cron as another account
#: (:mod:`..import_job`).
JT_INPUT_FAULTS = [
    "gzip-input",  # one input file archived with gzip (stored as <name>.gz)
    "bom",  # one input file starts with a UTF-8 byte order mark
    "legacy-encoding",  # one input file (with non-ASCII text) written in ISO-8859-1
]
JT_HARD_FAULTS = JT_INPUT_FAULTS + IMPORT_FAULTS
JT_TRAPS = load_traps(Path(__file__).parent / "traps.toml", JT_INPUT_FAULTS)
"""The input faults the instruction does not announce: fault -> Trap (traps.toml)."""
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
    "report": (jt_report, report_inputs),
    "merge": (jt_merge, merge_inputs),
    "reshape": (jt_reshape, reshape_inputs),
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

        level, kind = level_and_kind(rng, difficulty, params, JT_KINDS)
        func, make = JT_KINDS[kind]
        app = rng.choice(CTF_APPS + ["atlas", "nimbus", "quokka"])
        roots = [f"/srv/{app}", f"/data/{app}", f"/home/analyst/{app}", f"/opt/{app}"]
        root = rng.choice(roots)
        if level == 2:
            root = reachable_folder(rng, root, roots)
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
            job = ImportJob.draw(rng, app, f"{out_dir}/{main[kind]}", None, faults)
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
