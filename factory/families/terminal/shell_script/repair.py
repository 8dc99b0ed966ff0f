"""shell-script at hard: the tool is there already, as a colleague's broken draft. Six or seven
one-place bugs of the tool's kind (:data:`BUGS`, the names of ``bugs`` in ``tool.sh.j2``) and one
or two defects of the file itself (:data:`PACKAGING`: Windows line ends, no execute bit, a
``/bin/sh`` shebang) that the instruction does not name; both are listed in defects.toml. The
reference repairs the draft one defect at a time: a ``sed`` edit per changed place, computed from
the tool with and without the bug; each defect left alone is a near miss."""

from __future__ import annotations

import difflib
import re
import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.vocabulary import Trap


class _Packaging(BaseModel):
    """A defect of the draft's file (defects.toml): the unannounced part, the words that would
    give it away."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trap: str
    tells: tuple[str, ...]


class _Defects(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bugs: dict[str, list[str]]
    packaging: dict[str, _Packaging]


_DEFECTS = load_toml_model(Path(__file__).parent / "defects.toml", _Defects, "shell-script defects")
#: The one-place bugs a draft of each tool may carry, each caught by a case of its tests.
BUGS = _DEFECTS.bugs
#: Defects of the draft's file rather than its code.
PACKAGING = list(_DEFECTS.packaging)
#: packaging defect -> its trap.
TRAPS = {name: Trap(d.trap, d.tells) for name, d in _DEFECTS.packaging.items()}


def _text(line: str) -> str:
    """A line as the text of sed's a, i and c commands (GNU one-line form)."""
    return line.replace("\\", "\\\\")


def line_edits(before: str, after: str, path: str) -> list[str]:
    """``sed -i`` commands that turn the text ``before`` of ``path`` into ``after``, one per
    changed place, the last place first (so the line numbers of the earlier ones still hold)."""
    old, new = before.splitlines(), after.splitlines()
    steps = []

    def sed(script: str) -> None:
        steps.append(f"sed -i {shlex.quote(script)} {shlex.quote(path)}")

    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in reversed(ops):
        if tag == "equal":
            continue
        where = f"{i1 + 1}" if i2 - i1 <= 1 else f"{i1 + 1},{i2}"
        if tag == "replace" and j2 - j1 == 1:
            sed(where + "c\\" + _text(new[j1]))
            continue
        if tag in ("delete", "replace"):
            sed(where + "d")
        if tag in ("insert", "replace"):
            at = f"{i1 + 1}i" if i1 < len(old) else "$a"
            for line in reversed(new[j1:j2]):  # each one before line i1 + 1: the last first
                sed(at + "\\" + _text(line))
    return steps


_CHANGE = re.compile(r"^sed -i '(\d+)c\\")


def merged(steps: list[str]) -> list[str]:
    """``steps`` with a line changed twice (two bugs on one line) changed once, to its last
    text: an earlier ``Nc`` edit is dropped when only other ``c`` edits (which keep the line
    numbers) come between it and a later ``Nc``."""
    out: list[str] = []
    for step in steps:
        line = _CHANGE.match(step)
        if line:
            for earlier in reversed(out):
                other = _CHANGE.match(earlier)
                if not other:
                    break
                if other.group(1) == line.group(1):
                    out.remove(earlier)
                    break
        out.append(step)
    return out
