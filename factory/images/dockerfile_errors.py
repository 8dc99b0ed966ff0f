"""A Dockerfile syntax error in the user's own terms.

The engine reports a parse error against the Dockerfile factory sent, which is not the user's:
factory inserts a ``LABEL`` after every ``FROM`` and may rewrite BuildKit syntax, so the line
number is off, and the message arrives wrapped in an HTTP error with the whole URL-encoded
request. This module finds the line the user wrote and keeps the builder's short reason.
"""

from __future__ import annotations

import re

_PARSE_ERROR = re.compile(r"dockerfile parse error (?:on )?line (\d+): (.+)", re.IGNORECASE)
_MAX_REASON = 160


def _strip(line: str) -> str:
    return " ".join(line.split())


def user_line(sent: str, original: str, sent_line: int) -> int | None:
    """The line of ``original`` that line ``sent_line`` (1-based) of ``sent`` came from, found
    by its text; None when factory wrote that line itself."""
    sent_lines = sent.splitlines()
    if not 1 <= sent_line <= len(sent_lines):
        return None
    wanted = _strip(sent_lines[sent_line - 1])
    if not wanted:
        return None
    # Which occurrence of that text in the sent file, so repeated lines map one to one.
    nth = sum(1 for line in sent_lines[: sent_line - 1] if _strip(line) == wanted)
    seen = 0
    for number, line in enumerate(original.splitlines(), start=1):
        if _strip(line) == wanted:
            if seen == nth:
                return number
            seen += 1
    return None


def explain_parse_error(message: str, sent: str, original: str, dockerfile: str) -> str | None:
    """'environment/Dockerfile line 3: unknown instruction: RUNN' for a parse error reported
    against ``sent``; None when ``message`` is not a parse error."""
    match = _PARSE_ERROR.search(message)
    if not match:
        return None
    reason = match.group(2).strip().rstrip('")').strip()
    if len(reason) > _MAX_REASON:
        reason = reason[: _MAX_REASON - 3] + "..."
    line = user_line(sent, original, int(match.group(1)))
    where = f"{dockerfile} line {line}" if line else dockerfile
    return f"{where}: {reason}"
