"""text-transform's hard report task: the sub-problems it composes (two to four). Three are about
how the legacy system left its export, the rest about the CSV's consumer, an import job run by
cron as another account (:mod:`..import_job`)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

from factory.families.terminal.import_job import IMPORT_FAULTS
from factory.families.terminal.traps import load_traps

from .report import parse_report

TT_INPUT_FAULTS = [
    "rotated-pages",  # the first page(s) were rotated into <report>.1.gz; the file holds the rest
    "tab-padding",  # some data rows are padded with tabs (8-column stops), not spaces
    "utf16-export",  # the export (each part of it) is in UTF-16 with a byte order mark
]
TT_HARD_FAULTS = TT_INPUT_FAULTS + IMPORT_FAULTS
TT_TRAPS = load_traps(Path(__file__).parent / "traps.toml", TT_INPUT_FAULTS)
"""The input faults the instruction does not announce: fault -> Trap (traps.toml)."""
ICONV = "iconv -f UTF-16 -t UTF-8"


def data_lines(text: str, spec: dict[str, Any]) -> list[int]:
    """The indexes of the report's data rows (as the reference reads them)."""
    found, seen_ruler = [], False
    for idx, line in enumerate(text.split("\n")[:-1]):
        s = line.lstrip("\f")
        ruler = bool(s.strip()) and set(s) <= {"-", " "}
        if not seen_ruler:
            seen_ruler = ruler
            continue
        if not s.strip() or ruler or s.startswith(("Total:", "#", spec["title"])):
            continue
        if s.rstrip() != spec["header"].rstrip():
            found.append(idx)
    return found


def _tabbed(line: str) -> str:
    """The line with every 8-column chunk that ends in two or more spaces ending in a tab
    instead (``expand`` turns it back into the line)."""
    out = []
    for start in range(0, len(line), 8):
        chunk = line[start : start + 8]
        kept = chunk.rstrip(" ")
        out.append(kept + "\t" if len(chunk) == 8 and len(chunk) - len(kept) >= 2 else chunk)
    return "".join(out)


def tab_pad(rng: random.Random, text: str, spec: dict[str, Any], expected: list) -> str:
    """The report with a third to a half of its data rows padded with tabs; drawn again until
    reading it by character position gives other rows than ``expected``."""
    lines = text.split("\n")
    rows = data_lines(text, spec)
    for _ in range(20):
        chosen = rng.sample(rows, max(2, int(len(rows) * rng.uniform(0.33, 0.5))))
        padded = [_tabbed(line) if i in chosen else line for i, line in enumerate(lines)]
        out = "\n".join(padded)
        if out.expandtabs(8) == text and parse_report(out, spec) != expected:
            return out
    raise RuntimeError("text-transform: tab padding left the rows as they were")


def split_pages(rng: random.Random, text: str) -> tuple[str, str]:
    """(the rotated first pages, the rest): the split falls before a page's title line
    (a form feed), leaving at least one page on each side."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("\f")]
    cut = rng.choice(starts[: max(1, len(starts) - 1)])
    return "\n".join(lines[:cut]) + "\n", "\n".join(lines[cut:])


def stored_files(
    rng: random.Random, text: str, spec: dict[str, Any], expected: list, faults: list[str]
) -> dict[str, bytes]:
    """The export as it lies in the image: name suffix ("" for the report's file, ".1.gz" for
    the rotated first pages) -> bytes."""
    if "tab-padding" in faults:
        text = tab_pad(rng, text, spec, expected)
    parts = {"": text}
    if "rotated-pages" in faults:
        first, rest = split_pages(rng, text)
        parts = {"": rest, ".1.gz": first}
    out = {}
    for suffix, part in parts.items():
        data = part.encode("utf-16") if "utf16-export" in faults else part.encode()
        out[suffix] = gzip.compress(data, mtime=0) if suffix else data
    return out


def prep(src: str, work: str, faults: list[str], slip: str = "") -> list[str]:
    """The reference's commands that put the whole report, as plain UTF-8 text padded with
    spaces, into ``work`` (``slip``: that fault left as it is); none without an input fault."""
    fixes = [f for f in faults if f in TT_INPUT_FAULTS and f != slip]
    if not any(f in TT_INPUT_FAULTS for f in faults):
        return []
    filters = ([ICONV] if "utf16-export" in fixes else []) + (
        ["expand"] if "tab-padding" in fixes else []
    )
    parts = ([f"zcat {src}.1.gz"] if "rotated-pages" in fixes else []) + [src]
    lines = []
    for i, part in enumerate(parts):
        to = f"{'>>' if i else '>'} {work}"
        if part.startswith("zcat "):
            steps = [part, *filters]
        elif filters:
            steps = [f"{filters[0]} {part}", *filters[1:]]
        else:
            steps = [f"{'cat' if i else 'cp'} {part}"]
            to = f">> {work}" if i else work
        lines.append(f"{' | '.join(steps)} {to}")
    return lines
