"""What a task asks the solver to do, measured on structure rather than text.

Two tasks that differ only in names are the same exercise; MinHash over the text
(:mod:`factory.quality.dedup`) counts them as two. Here a task is reduced to

* its **fault combination**: the names from the family's fault grammar that the draft planted
  (``[metadata.factory] faults``);
* its **test structure**: the names of the hidden test functions;
* its **solution shape**: the commands of the reference solution (``solution/solve.sh``), each
  reduced to its program name (``chmod``, ``sed``, ``printf>`` for a file written).

:func:`solution_steps` also gives the *effort* of a reference solution: the commands and edits a
person would type, so that a generic 150-line solver run as one heredoc counts as one step.
:func:`named_traps` finds unannounced traps that an instruction names after all.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from factory.errors import TaskFormatError
from factory.tasks.model import load_task_config

# --- solution steps --------------------------------------------------------------------------

#: Shell words that structure a script without being a step of their own.
_KEYWORDS = {
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "{", "}", "(", ")", "!", "function", "select", ";;",
}  # fmt: skip
#: Commands that do nothing a person would count as a step (control flow, waiting, set-up).
_NOT_STEPS = {
    "break", "continue", "true", "false", ":", "exit", "return", "sleep", "wait", "set",
    "shift", "local", "readonly", "declare", "trap", "umask", "shopt",
}  # fmt: skip
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_FUNCTION = re.compile(r"^(function\s+)?[A-Za-z_][\w-]*\s*\(\)\s*\{?$")
_WRAPPERS = {"sudo", "env", "command", "exec", "nohup", "setsid", "time", "timeout", "xargs"}


@dataclass(frozen=True)
class Step:
    """One command or edit of a script."""

    text: str
    """The command as written (heredoc bodies left out)."""
    verb: str
    """Its program (``sed``, ``chmod``; ``python3-script`` for an inline program; a trailing
    ``>`` when the step writes a file through a redirection)."""


def _logical_lines(script: str) -> list[tuple[str, str | None]]:
    """(line, heredoc body or None): continuation lines joined, quotes followed across lines,
    heredoc bodies attached to the line that opens them, comments dropped."""
    out: list[tuple[str, str | None]] = []
    lines = script.splitlines()
    i = 0
    while i < len(lines):
        current = ""
        quote = ""
        while i < len(lines):
            line = lines[i]
            i += 1
            kept, quote = _strip_comment(line, quote)
            current += kept
            if quote:
                current += "\n"
                continue
            if current.endswith("\\"):
                current = current[:-1] + " "
                continue
            break
        text = current.strip()
        if not text:
            continue
        body = None
        mask = _unquoted(text)
        match = next((m for m in _HEREDOC.finditer(text) if mask[m.start()] == "<"), None)
        if match:
            end = match.group(2)
            collected = []
            while i < len(lines) and lines[i].strip() != end:
                collected.append(lines[i])
                i += 1
            i += 1  # the terminator
            body = "\n".join(collected)
        out.append((text, body))
    return out


def _strip_comment(line: str, quote: str) -> tuple[str, str]:
    """The line without its comment, and the quote still open at its end ('' when none)."""
    out = []
    prev = " "
    escaped = False
    for ch in line:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and prev in " \t;|&(":
            break
        out.append(ch)
        prev = ch
    return "".join(out), quote


def _unquoted(text: str) -> str:
    """The text with quoted parts blanked out (so operators inside strings are ignored)."""
    out = []
    quote = ""
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
            out.append(" ")
            continue
        if ch == "\\" and quote != "'":
            escaped = True
            out.append(" ")
        elif quote:
            if ch == quote:
                quote = ""
            out.append(" ")
        elif ch in "'\"":
            quote = ch
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _split_commands(text: str) -> list[str]:
    """Top-level commands of a logical line, split at ``;``, ``&&``, ``||`` and newlines outside
    quotes, ``$(...)`` and backquotes (a pipeline stays one command)."""
    mask = _unquoted(text)
    parts, start, depth, i = [], 0, 0, 0
    while i < len(mask):
        two = mask[i : i + 2]
        if two == "$(":
            depth += 1
            i += 2
            continue
        if mask[i] == "(" and depth:
            depth += 1
        elif mask[i] == ")" and depth:
            depth -= 1
        elif not depth and (two in ("&&", "||") or mask[i] in ";\n"):
            parts.append(text[start:i])
            i += 2 if two in ("&&", "||") else 1
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _words(command: str) -> list[str]:
    """The command's words, split at blanks outside quotes and ``$(...)``."""
    mask = _unquoted(command)
    words, start, depth = [], None, 0
    for i, ch in enumerate(mask + " "):
        if ch == "(" and (depth or mask[i - 1 : i] == "$"):
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if ch in " \t" and not depth:
            if start is not None:
                words.append(command[start:i])
                start = None
        elif start is None:
            start = i
    return words


def _verb(command: str, body: str | None) -> str | None:
    words = _words(command)
    if words and words[0] in ("for", "select", "case"):
        return None  # a loop or case header: its body holds the steps
    while words and (words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0])):
        if _ASSIGNMENT.match(words[0]) and len(words) == 1:
            inner = words[0].split("=", 1)[1].strip('"')
            if inner.startswith("$(") and not inner.startswith("$(("):
                return _verb(inner[2:].rstrip(")"), body)  # x=$(cmd): the command is a step
        words.pop(0)
    while words and words[0] in _WRAPPERS:
        words.pop(0)
        while words and words[0].startswith("-"):
            words.pop(0)
    if not words or words[0] in _NOT_STEPS or words[0].startswith("$(("):
        return None
    verb = words[0].rsplit("/", 1)[-1].strip("'\"")
    if verb in ("python3", "python", "bash", "sh", "perl", "node") and body is not None:
        return f"{verb}-script"
    if re.search(r"(^|[^<>&0-9])>>?\s*[^&\s]", _unquoted(command)) and verb not in (
        "echo",
        "true",
    ):
        return verb + ">"
    return verb


def solution_steps(script: str) -> list[Step]:
    """The commands and edits of a shell script, as a person would count them: one per simple
    command or pipeline (``cd x && make`` is two), one per file written with a heredoc, none for
    comments, control keywords (``for``, ``if``, ``done``), function headers, bare assignments
    and do-nothing builtins (``sleep``, ``set``, ``break``)."""
    steps = []
    for line, body in _logical_lines(script):
        if line.startswith("#!") or _FUNCTION.match(line):
            continue
        for command in _split_commands(line):
            verb = _verb(command, body)
            if verb is not None:
                steps.append(Step(command, verb))
    return steps


# --- traps -----------------------------------------------------------------------------------


def named_traps(instruction: str, traps: Iterable[tuple[str, Sequence[str]]]) -> list[str]:
    """Traps (name, tells) that the instruction names: one line per tell found."""
    found = []
    for name, tells in traps:
        for tell in tells:
            before = r"(?<![\w-])" if re.match(r"\w", tell) else ""
            after = r"(?![\w-])" if re.search(r"\w$", tell) else ""
            pattern = before + re.escape(tell) + after
            if tell and re.search(pattern, instruction, re.IGNORECASE):
                found.append(f"{name}: the instruction says {tell!r}")
    return found


# --- structure of a task ---------------------------------------------------------------------

_TEST_FN = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)", re.M)
_PARAMETRIZE = re.compile(r"@pytest\.mark\.parametrize")


@dataclass(frozen=True)
class TaskStructure:
    """What a task asks of the solver, without its names and data."""

    faults: tuple[str, ...]
    """The fault combination (sorted names from the family's grammar)."""
    tests: tuple[str, ...]
    """The hidden tests' function names (sorted; a parametrized test counts once)."""
    steps: tuple[str, ...]
    """The reference solution's commands, as verbs, in order."""

    @property
    def features(self) -> frozenset[str]:
        """The structure as one set of features (for Jaccard distances between tasks)."""
        counts = Counter(self.steps)
        return frozenset(
            [f"fault:{f}" for f in self.faults]
            + [f"test:{t}" for t in self.tests]
            + [f"step:{v}:{n}" for v, c in counts.items() for n in range(1, c + 1)]
        )


def structure_of(faults: Iterable[str], tests_text: str, solution_text: str) -> TaskStructure:
    return TaskStructure(
        faults=tuple(sorted(set(faults))),
        tests=tuple(sorted(set(_TEST_FN.findall(tests_text)))),
        steps=tuple(s.verb for s in solution_steps(solution_text)),
    )


def read_structure(task_dir: Path) -> TaskStructure:
    """The structure of a task directory (faults from ``task.toml``, tests, solution)."""
    try:
        faults = load_task_config(task_dir / "task.toml").provenance.faults
    except TaskFormatError:
        faults = []
    tests = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted((task_dir / "tests").glob("*.py"))
    )
    solve = task_dir / "solution" / "solve.sh"
    solution = solve.read_text(encoding="utf-8", errors="replace") if solve.is_file() else ""
    return structure_of(faults, tests, solution)


@dataclass
class Diversity:
    """Structural diversity of a group of tasks."""

    tasks: int
    fault_combinations: int
    """Distinct fault combinations (tasks without a grammar count as one empty combination)."""
    test_structures: int
    solution_shapes: int
    structures: int
    """Distinct (faults, tests, solution shape) triples."""
    mean_distance: float | None
    """Mean Jaccard distance between the tasks' structural feature sets (0: all alike;
    None for fewer than two tasks)."""
    median_steps: float
    top_combinations: list[tuple[tuple[str, ...], int]] = field(default_factory=list)

    def per_100(self, count: int) -> float:
        return 100.0 * count / self.tasks if self.tasks else 0.0


#: Pairs compared for the mean distance at most (a fixed, evenly spread sample beyond that).
MAX_PAIRS = 20_000


def diversity(structures: Sequence[TaskStructure]) -> Diversity:
    """Distinct fault combinations, test structures and solution shapes of ``structures``."""
    pairs = list(combinations(range(len(structures)), 2))
    if len(pairs) > MAX_PAIRS:
        stride = len(pairs) / MAX_PAIRS
        pairs = [pairs[int(i * stride)] for i in range(MAX_PAIRS)]
    features = [s.features for s in structures]
    distances = [
        1.0 - len(features[a] & features[b]) / max(1, len(features[a] | features[b]))
        for a, b in pairs
    ]
    steps = sorted(len(s.steps) for s in structures)
    combos = Counter(s.faults for s in structures)
    return Diversity(
        tasks=len(structures),
        fault_combinations=len(combos),
        test_structures=len({s.tests for s in structures}),
        solution_shapes=len({s.steps for s in structures}),
        structures=len(set(structures)),
        mean_distance=sum(distances) / len(distances) if distances else None,
        median_steps=_median(steps),
        top_combinations=combos.most_common(3),
    )


def _median(values: Sequence[int]) -> float:
    if not values:
        return 0.0
    mid = len(values) // 2
    return float(values[mid]) if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def admits(combination: Sequence[str], accepted: Sequence[Sequence[str]], minimum: float) -> bool:
    """Whether a candidate with fault ``combination`` keeps a group whose ``accepted`` tasks
    have these combinations at or above ``minimum`` distinct combinations per task. A new
    combination, an empty one (no grammar) or a target of 0 always does."""
    key = tuple(sorted(set(combination)))
    seen = {tuple(sorted(set(c))) for c in accepted}
    if minimum <= 0 or not key or key not in seen:
        return True
    return len(seen) / (len(accepted) + 1) >= minimum
