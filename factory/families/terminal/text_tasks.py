"""What the text-processing families share (log-report, regex-extract, text-transform,
csv-json-wrangle): agent timeouts, output folders, people and product names, CSV text,
digests, which answers an instruction happens to mention, and the draft they build."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from factory.families.base import Draft, Family
from factory.families.terminal.import_job import Wiring
from factory.vocabulary import Difficulty

EASY, MEDIUM, HARD = Difficulty.EASY, Difficulty.MEDIUM, Difficulty.HARD
AGENT_TIMEOUT = {EASY: 300.0, MEDIUM: 600.0, HARD: 900.0}


def mentioned(text: str, secret: str) -> bool:
    """Same rule as the leak check: a word-like secret must appear as a whole word."""
    if re.fullmatch(r"[\w.\-]+", secret):
        return re.search(rf"(?<![\w.\-]){re.escape(secret)}(?![\w\-]|\.\w)", text) is not None
    return secret in text


def unmentioned(
    family: Family, context: dict[str, Any], level: Difficulty, answers: list[str]
) -> list:
    """The answers that the instruction does not mention by coincidence (a status code that
    happens to equal a count is no leak)."""
    text = family.template("instruction.md.j2").render(
        **context, difficulty=level.value, task_id="t"
    )
    return [a for a in answers if a and not mentioned(text, a)]


def text_draft(
    family: Family,
    level: Difficulty,
    context: dict[str, Any],
    files: dict[str, str | bytes],
    faults: list[str],
    wiring: Wiring,
    answers: list[str],
    outputs: list[str],
    tags: list[str],
    kept: list[str] | None = None,
) -> Draft:
    """The draft of a text-processing task: ``context``, ``files``, ``faults``, the family's
    ``outputs`` and ``tags``, with what the import job adds (``wiring``, see
    :meth:`Wiring.draft`). Its secrets are the ``answers`` the instruction does not mention; the
    inputs the tests check unchanged are ``kept`` (by default every file that
    ``context["digests"]`` names); the agent's time is the level's."""
    return wiring.draft(
        outputs,
        context=context,
        files=files,
        secrets=unmentioned(family, context, level, answers),
        kept=sorted(context["digests"]) if kept is None else kept,
        tags=tags,
        agent_timeout_sec=AGENT_TIMEOUT[level],
        faults=faults,
    )


def csv_text(rows: list[list[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


OUT_DIRS = [
    "/root/reports",
    "/srv/reports",
    "/opt/ops/out",
    "/home/analyst/out",
    "/var/tmp/analysis",
    "/data/results",
    "/workspace/output",
    "/srv/exports",
]


def utc_offset(off: int, iso: bool) -> str:
    if iso and off == 0:
        return "Z"
    hh, mm = divmod(abs(off), 60)
    return f"{'+' if off >= 0 else '-'}{hh:02d}{':' if iso else ''}{mm:02d}"


def sha256_hex(data: bytes | str) -> str:
    import hashlib

    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


TT_FIRST = ["Mary Ann", "John", "Aiko", "Pedro", "Fatima", "Lars", "Grace", "Chen", "Olga"]
TT_FIRST += ["Kwame", "Sofia", "Jean Luc", "Hannah", "Ravi", "Elena", "Tomasz", "Nia", "Diego"]
TT_LAST = ["Lee", "van der Berg", "Okonkwo", "Smith", "Garcia Lopez", "Nakamura", "Ivanova"]
TT_LAST += ["Murphy", "da Silva", "Kowalski", "Haddad", "Nguyen", "O'Brien", "Schmidt", "Patel"]
TT_CITIES = ["New York", "Oslo", "Rio de Janeiro", "Lyon", "Cape Town", "Osaka", "Austin"]
TT_CITIES += ["Kuala Lumpur", "Porto", "Leeds", "San Jose", "Tallinn", "Buenos Aires", "Graz"]
TT_PRODUCTS = ["Blue Widget XL", "Steel Bracket", "Hex Bolt M8", "Cable Tie Pack", "Gear Oil"]
TT_PRODUCTS += ["Copper Pipe", "Safety Gloves", "LED Panel", "Drill Bit Set", "Pallet Wrap"]
TT_HARD_PRODUCTS = ['Pipe 12" steel', "Bolts, M8 (100 pcs)", 'Hose 3/4" x 50 ft', "Nuts, hex"]
