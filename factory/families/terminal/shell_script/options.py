"""The leading options of a shell-script tool's command line, as the models of its contract read
them (the scripts parse them with a `while`/`case` loop, not getopts: no bundled flags)."""

from __future__ import annotations

import re

ANY = r"(?s).*"
"""The pattern of an option's value that may be anything."""
POSITIVE = r"[1-9][0-9]*"


def parse_options(
    args: list[str],
    level: int,
    takes: dict[str, tuple[int, str | None]],
    *,
    dash_is_operand: bool = False,
) -> tuple[dict[str, str], list[str]] | None:
    """Read the options at the front of ``args`` that the tool has at ``level``: ``takes``
    maps each option to the lowest level that has it and the pattern its value (the next
    argument) must match, None for a flag; the last one given wins. ``--`` ends them, and so
    does ``-`` alone when ``dash_is_operand``. Returns the options found (a flag's value is "")
    and the operands, or None for a usage error: an option the tool does not have, or a value
    missing or malformed."""
    found: dict[str, str] = {}
    rest = list(args)
    while rest and rest[0].startswith("-") and not (dash_is_operand and rest[0] == "-"):
        opt = rest.pop(0)
        if opt == "--":
            break
        if opt not in takes or takes[opt][0] > level:
            return None
        pattern = takes[opt][1]
        if pattern is None:
            found[opt] = ""
        elif rest and re.fullmatch(pattern, rest[0]):
            found[opt] = rest.pop(0)
        else:
            return None
    return found, rest
