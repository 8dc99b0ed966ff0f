"""shell-script: write a small command-line tool in bash to a specification (options, exit
codes, edge cases). Four tools, each with a model in Python that the hidden tests compare
against: :mod:`.csv_tool`, :mod:`.file_tools`, :mod:`.retry_tool`."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.knobs import level_of, spread
from factory.families.terminal.words import TEAMS
from factory.vocabulary import Difficulty

from .csv_tool import CSV_NAMES, csv_cases
from .file_tools import (
    REN_NAMES,
    ROT_NAMES,
    rename_cases,
    rotate_cases,
)
from .retry_tool import RETRY_NAMES, retry_cases

SAFE_CODES = [2, 3, 4, 5, 6, 7, 9, 64, 65, 66, 69, 70, 73, 74, 75, 77, 78]


SHELL_KINDS = {
    "csv-filter": (CSV_NAMES, csv_cases, ["usage", "read", "column", "header"]),
    "renamer": (REN_NAMES, rename_cases, ["usage", "dir", "skip"]),
    "log-rotate": (ROT_NAMES, rotate_cases, ["usage", "missing"]),
    "retry": (RETRY_NAMES, retry_cases, ["usage"]),
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
        level = level_of(difficulty)
        kind = params.get("kind") or spread(rng, sorted(SHELL_KINDS), level)
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
        context = {
            "kind": kind,
            "tool": tool,
            "path": path,
            "spec": spec,
            "cases": cases,
            "level": level,
            "workdir": f"/home/{team}" if folder != "/usr/local/bin" else "/root",
        }
        mutations = {}
        if kind == "csv-filter" and level >= 2:
            # Joins the inputs with `tail -n +2`: a file without a final newline glues its last
            # row to the next file's first row (found by hand, see issue 17).
            mutations["tail-join"] = self.template("solution/solve.sh.j2").render(
                **context, bug="tail-join"
            )
        return Draft(
            context=context,
            mutations=mutations,
            files=files,
            outputs=[path],
            separate_verifier=True,
            tags=["bash", kind],
        )
