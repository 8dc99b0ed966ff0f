"""shell-script: write a small command-line tool in bash to a specification (options, exit
codes, edge cases). Four tools, each with a model in Python that the hidden tests compare
against: :mod:`.csv_tool`, :mod:`.file_tools`, :mod:`.retry_tool`. At hard the tool is a broken
draft to repair (:mod:`.repair`)."""

from __future__ import annotations

import random
import shlex
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.knobs import level_and_kind
from factory.families.terminal.words import TEAMS
from factory.vocabulary import Difficulty

from .csv_tool import CSV_NAMES, csv_cases
from .file_tools import (
    REN_NAMES,
    ROT_NAMES,
    rename_cases,
    rotate_cases,
)
from .repair import BUGS, PACKAGING, TRAPS, line_edits, merged
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
        level, kind = level_and_kind(rng, difficulty, params, SHELL_KINDS)
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
        mutations: dict[str, str] = {}
        if difficulty is Difficulty.HARD:
            return self._hard(rng, context, files, mutations, team)
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

    def tool(self, context: Mapping[str, Any], bugs: list[str]) -> str:
        """The tool with ``bugs`` planted (none: the reference)."""
        text = self.template("solution/tool.sh.j2").render(**context, bugs=bugs)
        return text.rstrip("\n") + "\n"

    def repair(self, context: Mapping[str, Any], faults: list[str], left: str = "") -> list[str]:
        """The commands that repair the draft with ``faults``, one defect at a time, leaving
        the defect ``left`` alone (a near miss)."""
        path = shlex.quote(context["path"])
        steps = []
        if "crlf" in faults and left != "crlf":
            steps.append(f"sed -i 's/\\r$//' {path}")
        if "sh-shebang" in faults and left != "sh-shebang":
            steps.append(f"sed -i '1s|^#!/bin/sh$|#!/bin/bash|' {path}")
        remaining = [f for f in faults if f not in PACKAGING]
        for bug in list(remaining):
            if bug == left:
                continue
            fixed = [b for b in remaining if b != bug]
            before, after = self.tool(context, remaining), self.tool(context, fixed)
            steps += line_edits(before, after, context["path"])
            remaining = fixed
        if "no-exec" in faults and left != "no-exec":
            steps.append(f"chmod 755 {path}")
        return merged(steps)

    def _hard(
        self,
        rng: random.Random,
        context: dict[str, Any],
        files: dict[str, str | bytes],
        mutations: dict[str, str],
        team: str,
    ) -> Draft:
        """The tool as a broken draft (:mod:`.repair`): six or seven bugs of its kind and one
        or two defects of its file; the reference repairs each."""
        kind = context["kind"]
        if context["path"].startswith("/usr/local/bin/"):
            # the separate verifier restores /usr/local/bin from the image (its toolchain), which
            # holds the draft here: the repaired tool would never reach the tests
            context["path"] = context["path"].replace("/usr/local/bin/", f"/opt/{team}/bin/", 1)
        bugs = sorted(rng.sample(BUGS[kind], rng.randint(6, 7)))
        packaging = sorted(rng.sample(PACKAGING, rng.randint(1, 2)))
        faults = bugs + packaging
        draft = self.tool(context, bugs)
        if "sh-shebang" in packaging:
            draft = draft.replace("#!/bin/bash\n", "#!/bin/sh\n", 1)
        if "crlf" in packaging:
            draft = draft.replace("\n", "\r\n")
        files[f"environment/draft/{context['path'].rsplit('/', 1)[1]}"] = draft.encode()
        context = {
            **context,
            "draft_mode": "644" if "no-exec" in packaging else "755",
            "repair": self.repair(context, faults),
        }
        solve = self.template("solution/solve.sh.j2")
        for fault in faults:
            left = {**context, "repair": self.repair(context, faults, left=fault)}
            mutations[f"unfixed-{fault}"] = solve.render(**left)
        if kind == "csv-filter":
            # the whole tool rewritten with a `tail -n +2` join: a file without a final newline
            # glues its last row to the next file's first row (found by hand, see issue 17)
            mutations["tail-join"] = solve.render(**{**context, "repair": []}, bug="tail-join")
        return Draft(
            context=context,
            mutations=mutations,
            files=files,
            outputs=[context["path"]],
            separate_verifier=True,
            faults=faults,
            traps=[TRAPS[f] for f in packaging],
            agent_timeout_sec=900.0,
            tags=["bash", kind, "debugging"],
        )
