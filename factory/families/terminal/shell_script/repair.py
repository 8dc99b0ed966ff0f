"""shell-script at hard: the tool is there already, as a colleague's broken draft. Six or seven
one-place bugs of the tool's kind (:data:`BUGS`, the names of ``bugs`` in ``tool.sh.j2``) and one
or two defects of the file itself (:data:`PACKAGING`: Windows line ends, no execute bit, a
``/bin/sh`` shebang) that the instruction does not name. The reference repairs the draft one
defect at a time: a ``sed`` edit per changed place, computed from the tool with and without
the bug; each defect left alone is a near miss."""

from __future__ import annotations

import difflib
import re
import shlex

#: The one-place bugs a draft of each tool may carry, each caught by a case of its tests.
BUGS = {
    "csv-filter": [
        "substring",  # a field that contains VALUE matches
        "exit-one",  # every error exits 1
        "tail-join",  # inputs joined with `tail -n +2`: a file without a final newline glues
        "no-header-check",
        "empty-count",  # -c on empty input prints an empty line
        "dir-accepted",  # a directory passes as a readable file
        "fields-by-sep",  # COLS split at the delimiter, not at commas
        "stdin-dash",  # `-` is not standard input
    ],
    "renamer": [
        "exit-one",
        "no-skip",  # an existing target is overwritten
        "dry-moves",  # -n renames all the same
        "hidden",  # hidden files renamed
        "nocase",  # FROM matched case-insensitively
        "no-dot-strip",  # a leading dot of FROM/TO is kept
        "prune",  # -r enters hidden directories
    ],
    "log-rotate": [
        "exit-one",
        "empty-rotates",  # an empty log is rotated
        "mode-lost",  # the new log gets 644
        "keep-off",  # one generation fewer than KEEP
        "ascending",  # generations renamed oldest-last: one overwrites the next
        "usage-keep",  # -k 0 accepted
        "leading-zero",  # LOG.01 taken for a generation
    ],
    "retry": [
        "unquoted",  # "$@" as $*
        "exit-one",  # gives up with 1
        "off-by-one",  # one attempt too many
        "codes-always",  # every failure is "not retryable" without -r
        "sleep-last",  # waits after the last attempt too
        "usage-delay",  # a negative delay accepted
        "usage-count",  # -n 0 accepted
        "message",  # "attempt I of N" instead of "attempt I/N"
    ],
}
#: Defects of the draft's file rather than its code.
PACKAGING = ["crlf", "no-exec", "sh-shebang"]
TRAPS = {
    "crlf": (
        "the draft has Windows line ends",
        ("CRLF", "carriage return", "line ending", "line endings", "Windows", "dos2unix", "\\r"),
    ),
    "no-exec": ("the draft is not executable", ("chmod", "not executable", "execute bit")),
    "sh-shebang": ("the draft's shebang is /bin/sh", ("/bin/sh", "dash", "POSIX sh")),
}


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
