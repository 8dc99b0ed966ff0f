"""regex-extract: extract every item of some kinds (emails, endpoints, versions, dates, ids) from
a corpus of text files, past decoys that almost match."""

from __future__ import annotations

import gzip
import posixpath
import random
import re
from collections import Counter
from collections.abc import Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.base import Draft, Family, register
from factory.families.terminal.import_job import IMPORT_FAULTS, ImportJob, Wiring, reachable_folder
from factory.families.terminal.knobs import pick
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.text_tasks import (
    EASY,
    HARD,
    MEDIUM,
    OUT_DIRS,
    csv_text,
    sha256_hex,
    text_draft,
)
from factory.families.terminal.traps import load_traps
from factory.vocabulary import Difficulty


class _Words(BaseModel):
    """The words a corpus is made of (words.toml)."""

    model_config = ConfigDict(extra="forbid")

    first: list[str]
    last: list[str]
    teams: list[str]
    domains: list[str]
    tlds: list[str]
    prefixes: list[str]
    words: list[str]
    dirs: list[str]


RX_VOCAB = load_toml_model(Path(__file__).parent / "words.toml", _Words, "regex-extract words")
RX_WRAPS = ["<{}>", "({})", '"{}"', "{},", "{}.", "{};", "[{}]", "'{}'", "({}).", "{}:", "{}!"]
RX_LEAD = "([{<\"'"
RX_TRAIL = ")]}>\"'.,;:!?"
RX_KIND_NAMES = {
    "email": "email",
    "order": "order_id",
    "endpoint": "endpoint",
    "date": "date",
    "version": "version",
}
RX_BUGS = ["edges", "validation", "listing"]
RX_BUG_NOTES = {
    "edges": "splits on whitespace but does not strip the surrounding punctuation",
    "validation": "accepts anything shaped roughly like an item (no range/calendar/label rules)",
    "listing": {
        "easy": "drops repeated items",
        "medium": "keeps repeated items",
        "hard": "counts raw spellings before normalising them",
    },
}
RX_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

_EMAIL = re.compile(
    r"[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}"
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)"
_ENDPOINT = re.compile(
    rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}:(?:[1-9]\d{{0,3}}|[1-5]\d{{4}}|6[0-4]\d{{3}}"
    r"|65[0-4]\d\d|655[0-2]\d|6553[0-5])"
)
_VERSION = re.compile(
    r"[vV]?(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?"
)


def _rx_date(token: str, hard: bool) -> str | None:
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", token)
    y = mo = d = None
    if m:
        y, mo, d = (int(x) for x in m.groups())
    elif hard and (m := re.fullmatch(r"(\d\d)/(\d\d)/(\d{4})", token)):
        d, mo, y = (int(x) for x in m.groups())
    elif hard and (m := re.fullmatch(r"(\d\d)-([A-Za-z]{3})-(\d{4})", token)):
        if m.group(2).lower() not in RX_MONTHS:
            return None
        d, mo, y = int(m.group(1)), RX_MONTHS.index(m.group(2).lower()) + 1, int(m.group(3))
    else:
        return None
    try:
        return date(y, mo, d).isoformat()
    except ValueError:
        return None


def _rx_strict(kind: str, token: str, pfx: str, hard: bool) -> str | None:
    """The normalised item when ``token`` is a valid item of ``kind``, else None."""
    if kind == "email":
        return token.lower() if _EMAIL.fullmatch(token) else None
    if kind == "order":
        flags = re.IGNORECASE if hard else 0
        return token.upper() if re.fullmatch(rf"{pfx}-\d{{4}}-\d{{6}}", token, flags) else None
    if kind == "endpoint":
        return token if _ENDPOINT.fullmatch(token) else None
    if kind == "date":
        return _rx_date(token, hard)
    if _VERSION.fullmatch(token) and (hard or token[0] not in "vV"):
        return token.lstrip("vV")
    return None


def _rx_loose(kind: str, token: str, pfx: str, hard: bool) -> str | None:
    """The near miss: the rough shape is enough."""
    strict = _rx_strict(kind, token, pfx, hard)
    if strict is not None:
        return strict
    if kind == "order":
        m = re.search(rf"{pfx}-\d+-\d+", token, re.IGNORECASE)
        return m.group(0).upper() if m else None
    shapes = {
        "email": r"[^\s@]+@[^\s@]+",
        "endpoint": r"\d+\.\d+\.\d+\.\d+:\d+",
        "date": r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{4}|\d{1,2}-[A-Za-z]{3}-\d{4}",
        "version": r"[vV]?\d+(?:\.\d+)+(?:-[0-9A-Za-z.]+)?",
    }
    return token if re.fullmatch(shapes[kind], token) else None


def _rx_items(
    texts: list[str], kinds: list[str], pfx: str, level: Difficulty, bug: str = ""
) -> list[tuple[str, str, str]]:
    """(kind, raw token, value) of every item, in reading order."""
    hard = level is HARD
    found = []
    for text in texts:
        for raw in text.split():
            token = raw if bug == "edges" else raw.lstrip(RX_LEAD).rstrip(RX_TRAIL)
            for kind in kinds:
                check = _rx_loose if bug == "validation" else _rx_strict
                value = check(kind, token, pfx, hard)
                if value is not None:
                    found.append((kind, token, value))
                    break
    return found


def _rx_output(texts: list[str], kinds: list[str], pfx: str, level: Difficulty, bug: str = ""):
    found = _rx_items(texts, kinds, pfx, level, bug)
    listing = bug == "listing"
    if level is EASY:
        values = [v for _, _, v in found]
        return "".join(f"{v}\n" for v in (dict.fromkeys(values) if listing else values))
    if level is MEDIUM:
        values = sorted(v for _, _, v in found)
        return "".join(f"{v}\n" for v in (values if listing else dict.fromkeys(values)))
    if listing:
        raw = Counter((k, t) for k, t, _ in found)
        norm = {(k, t): v for k, t, v in found}
        rows = sorted((RX_KIND_NAMES[k], norm[(k, t)], n) for (k, t), n in raw.items())
    else:
        counts = Counter((RX_KIND_NAMES[k], v) for k, _, v in found)
        rows = sorted((k, v, n) for (k, v), n in counts.items())
    return csv_text([["kind", "value", "count"], *[list(r) for r in rows]])


def _rx_valid(rng: random.Random, kind: str, pfx: str) -> str:
    """A canonical valid item."""
    if kind == "email":
        first, last = rng.choice(RX_VOCAB.first), rng.choice(RX_VOCAB.last)
        local = rng.choice(
            [
                f"{first}.{last}",
                f"{first[0]}{last}",
                f"{first}_{last}",
                f"{first}+{rng.choice(RX_VOCAB.teams)}",
                f"{rng.choice(RX_VOCAB.teams)}-{rng.choice(['alerts', 'desk', 'team', 'oncall'])}",
                f"{first}{rng.randint(1, 99)}",
            ]
        )
        sub = rng.choice(["", "", "mail.", "eu.", "corp-"])
        dom = f"{sub}{rng.choice(RX_VOCAB.domains)}"
        return f"{local}@{dom}.{rng.choice(RX_VOCAB.tlds)}"
    if kind == "order":
        return f"{pfx}-{rng.randint(2018, 2026)}-{rng.randint(1, 999999):06d}"
    if kind == "endpoint":
        ip = rng.choice(
            [
                f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            ]
        )
        port = rng.choice([22, 80, 443, 3000, 5432, 6379, 8080, 8443, 9090, 27017, 11211])
        return f"{ip}:{port if rng.random() < 0.6 else rng.randint(1024, 65535)}"
    if kind == "date":
        day = date(rng.randint(2015, 2030), 1, 1) + timedelta(days=rng.randint(0, 364))
        return day.isoformat()
    pre = rng.choice(["", "", "", "-rc.1", "-beta.2", "-alpha", "-rc2"])
    return f"{rng.randint(0, 12)}.{rng.randint(0, 30)}.{rng.randint(0, 60)}{pre}"


def _rx_variant(rng: random.Random, kind: str, value: str) -> str:
    """Hard: another spelling of the same item (normalises back to ``value``)."""
    if kind == "email":
        local, dom = value.split("@")
        return rng.choice([f"{local.capitalize()}@{dom}", f"{local}@{dom.upper()}", value.upper()])
    if kind == "order":
        return rng.choice([value.lower(), value.capitalize()])
    if kind == "date":
        y, m, d = value.split("-")
        mon = RX_MONTHS[int(m) - 1]
        return rng.choice([f"{d}/{m}/{y}", f"{d}-{mon.capitalize()}-{y}", f"{d}-{mon.upper()}-{y}"])
    if kind == "version":
        return rng.choice(["v", "V"]) + value
    return value


RX_DECOYS = {
    "email": ["double-dot", "dot-end", "no-dot-domain", "short-tld", "hyphen-label", "underscore"],
    "order": ["five-digits", "seven-digits", "short-year", "letter-prefix", "letter-suffix"],
    "endpoint": ["octet-range", "port-range", "port-zero", "leading-zero"],
    "date": ["bad-day", "bad-month", "unpadded"],
    "version": ["two-part", "four-part", "leading-zero"],
}


def _rx_decoy(rng: random.Random, kind: str, kind_of: str, pfx: str, hard: bool) -> str:
    """An almost-item of ``kind`` (decoy type ``kind_of``) that the rules reject."""
    if kind == "email":
        first, last = rng.choice(RX_VOCAB.first), rng.choice(RX_VOCAB.last)
        dom = f"{rng.choice(RX_VOCAB.domains)}.{rng.choice(['com', 'org', 'net'])}"
        return {
            "double-dot": f"{first}..{last}@{dom}",
            "dot-end": f"{first}.@{dom}",
            "no-dot-domain": f"{first}@{rng.choice(['localhost', 'intranet', 'mailhost'])}",
            "short-tld": f"{first}.{last}@{rng.choice(RX_VOCAB.domains)}.{rng.choice('cxz')}",
            "hyphen-label": f"{last}@{rng.choice(['-', ''])}{rng.choice(RX_VOCAB.domains)}-.com",
            "underscore": f"{first}@{rng.choice(RX_VOCAB.domains)}_{rng.choice(RX_VOCAB.teams)}.com",
        }[kind_of]
    if kind == "order":
        y, n = rng.randint(2018, 2026), rng.randint(1, 99999)
        return {
            "five-digits": f"{pfx}-{y}-{n:05d}",
            "seven-digits": f"{pfx}-{y}-{n:07d}",
            "short-year": f"{pfx}-{y % 100:02d}-{n:06d}",
            "letter-prefix": f"{rng.choice('XQZ')}{pfx}-{y}-{n:06d}",
            "letter-suffix": f"{pfx}-{y}-{n:06d}{rng.choice('abx')}",
        }[kind_of]
    if kind == "endpoint":
        o = [rng.randint(1, 254) for _ in range(4)]
        port = rng.choice([80, 443, 8080, 5432])
        if kind_of == "octet-range":
            o[rng.randint(0, 3)] = rng.randint(256, 999)
        elif kind_of == "leading-zero":
            i = rng.randint(1, 3)
            o[i] = f"0{rng.randint(0, 99)}"  # type: ignore[call-overload]
        elif kind_of == "port-range":
            port = rng.randint(65536, 99999)
        else:
            port = 0
        return ".".join(str(x) for x in o) + f":{port}"
    if kind == "date":
        y = rng.choice([2019, 2021, 2022, 2023, 2025])
        if kind_of == "bad-day":
            m, d = rng.choice([(2, 29), (2, 30), (4, 31), (6, 31), (9, 31), (11, 31)])
        elif kind_of == "bad-month":
            m, d = rng.choice([13, 14, 0, 20]), rng.randint(1, 28)
        else:
            m, d = rng.randint(1, 9), rng.randint(1, 9)
            return f"{y}-{m}-{d}"
        if hard and rng.random() < 0.5 and m <= 12:
            return f"{d:02d}/{m:02d}/{y}"
        return f"{y}-{m:02d}-{d:02d}"
    a, b, c = rng.randint(0, 9), rng.randint(1, 9), rng.randint(0, 40)
    return {
        "two-part": f"{a}.{b}",
        "four-part": f"{a}.{b}.{c}.{rng.randint(0, 9)}",
        "leading-zero": f"{a}.0{b}.{c}",
    }[kind_of]


def _rx_sentence(rng: random.Random, items: list[str], corpus: str) -> str:
    words = [rng.choice(RX_VOCAB.words) for _ in range(rng.randint(5, 12))]
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), str(rng.randint(2, 9999)))
    for item in items:
        words.insert(rng.randint(0, len(words)), item)
    words[0] = words[0].capitalize()
    prefix = rng.choice(RX_PREFIXES_BY_CORPUS[corpus]).format(
        who=rng.choice(RX_VOCAB.first),
        hh=f"{rng.randint(0, 23):02d}",
        mm=f"{rng.randint(0, 59):02d}",
    )
    return (f"{prefix} " if prefix else "") + " ".join(words) + rng.choice([".", ".", "!", "?", ""])


RX_CORPORA = [
    ("support tickets", "/srv/support/tickets", ["ticket-{n}.txt"]),
    ("mail archive", "/var/mail/archive", ["{y}-{m:02d}-{w}.eml"]),
    ("chat export", "/srv/chat/export", ["{w}.log", "channel-{w}.log"]),
    ("team notes", "/home/analyst/notes", ["{w}.md", "{w}-notes.md"]),
    ("incident reports", "/opt/incidents", ["inc-{n}.txt", "{w}-report.txt"]),
]
RX_PREFIXES_BY_CORPUS = {
    "support tickets": ["Customer:", "Agent:", "Update:", "Internal note:", "", ""],
    "mail archive": ["Subject:", ">", "> >", "", "", "PS:"],
    "chat export": ["<{who}>", "[{hh}:{mm}] {who}:", "* {who}"],
    "team notes": ["-", "*", "TODO:", "", "##"],
    "incident reports": ["Impact:", "Timeline:", "Root cause:", "Action item:", ""],
}
#: Hard: the sub-problems a task composes (two to four): three about how the corpus stores its
#: text, the rest about the output's consumer, an import job run by cron as another account
#: (:mod:`..import_job`).
RX_INPUT_FAULTS = [
    "gzip-files",  # one or two files archived with gzip (their text counts)
    "utf16-file",  # one file exported in UTF-16 (with a byte order mark)
    "symlink-dup",  # a symbolic link to a file of the tree (not a regular file: counted once)
]
RX_HARD_FAULTS = RX_INPUT_FAULTS + IMPORT_FAULTS
RX_TRAPS = load_traps(Path(__file__).parent / "traps.toml", RX_INPUT_FAULTS)
"""The input faults the instruction does not announce: fault -> Trap (traps.toml)."""


@register
class RegexExtract(Family):
    """Messy text files with items (emails, order ids, ip:port endpoints, dates, versions)
    in the middle of prose, wrapped in punctuation. Easy: one kind in one file, every
    occurrence in order; medium: several files, near-miss decoys, distinct sorted values;
    hard: two kinds over a nested tree, more decoys, spellings to normalise and counts."""

    name = "regex-extract"
    title = "Extract and normalise structured items from messy text files"
    category = "text-processing"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        hard = level is HARD
        corpus, root, patterns = rng.choice(RX_CORPORA)
        kinds = rng.sample(list(RX_DECOYS), 2 if hard else 1)
        kinds.sort(key=list(RX_DECOYS).index)
        pfx = rng.choice(RX_VOCAB.prefixes)
        outdir = rng.choice(OUT_DIRS)
        faults: list[str] = []
        if hard:
            faults = sorted(rng.sample(RX_HARD_FAULTS, rng.randint(2, 4)))
            outdir = reachable_folder(rng, outdir, OUT_DIRS)
        for _ in range(40):
            names: list[str] = []
            n_files = pick(rng, level, (1, 1), (3, 5), (5, 8))
            while len(names) < n_files:
                name = rng.choice(patterns).format(
                    n=rng.randint(100, 9999),
                    y=rng.randint(2021, 2025),
                    m=rng.randint(1, 12),
                    w=rng.choice(RX_VOCAB.teams + ["general", "random", "releases", "oncall"]),
                )
                if hard and rng.random() < 0.7:
                    name = f"{rng.choice(RX_VOCAB.dirs)}/{name}"
                if hard and rng.random() < 0.25:
                    name = f"{rng.choice(RX_VOCAB.dirs)}/{name}"
                if name not in names:
                    names.append(name)
            # the items, then the decoys, each with the file it goes to
            planted: list[tuple[int, str, bool]] = []
            per_kind = pick(rng, level, (6, 10), (10, 18), (10, 18))
            for kind in kinds:
                values = [_rx_valid(rng, kind, pfx) for _ in range(per_kind)]
                for value in values:
                    planted.append((rng.randrange(n_files), value, True))
                for value in rng.sample(values, 2):  # repeats (other spellings when hard)
                    raw = _rx_variant(rng, kind, value) if hard else value
                    planted.append((rng.randrange(n_files), raw, True))
                n_decoys = pick(rng, level, (2, 3), (4, 6), (5, 8))
                types = rng.sample(RX_DECOYS[kind], 1 if level is EASY else 3)
                if hard:
                    types = rng.sample(RX_DECOYS[kind], len(RX_DECOYS[kind]))
                for i in range(n_decoys):
                    decoy = _rx_decoy(rng, kind, types[i % len(types)], pfx, hard)
                    planted.append((rng.randrange(n_files), decoy, False))
            rng.shuffle(planted)
            # wrap some of them in punctuation (always at least one valid item)
            tokens = []
            first = next(i for i, p in enumerate(planted) if p[2])
            for i, (f, item, _) in enumerate(planted):
                if i == first or rng.random() < 0.35:
                    item = rng.choice(RX_WRAPS).format(item)
                tokens.append((f, item))
            texts = []
            for f in range(n_files):
                mine = [t for g, t in tokens if g == f]
                lines = []
                while mine or len(lines) < 6:
                    take = [mine.pop(0) for _ in range(min(len(mine), rng.choice([0, 1, 1, 2])))]
                    lines.append(_rx_sentence(rng, take, corpus))
                    if rng.random() < 0.15:
                        lines.append("")
                eol = "\r\n" if hard and rng.random() < 0.3 else "\n"
                texts.append(eol.join(lines) + eol)
            expected = _rx_output(texts, kinds, pfx, level)
            found = _rx_items(texts, kinds, pfx, level)
            sane = len(found) == sum(1 for p in planted if p[2])
            # the files whose text changes the answer (one left out, or counted twice)
            weighty = (
                [
                    i
                    for i in range(n_files)
                    if _rx_output(texts[:i] + texts[i + 1 :], kinds, pfx, level) != expected
                    and _rx_output(texts + [texts[i]], kinds, pfx, level) != expected
                ]
                if hard
                else []
            )
            enough = sum(
                {"gzip-files": 2, "utf16-file": 1, "symlink-dup": 1}.get(f, 0) for f in faults
            )
            if (
                sane
                and all(_rx_output(texts, kinds, pfx, level, b) != expected for b in RX_BUGS)
                and len(weighty) >= enough
            ):
                break
        else:  # pragma: no cover
            raise RuntimeError("regex-extract: could not draw data that exposes every near miss")
        out = f"{outdir}/{'items' if hard else kinds[0] + 's'}.{'csv' if hard else 'txt'}"
        # How the files lie in the image (hard: some archived, one in UTF-16, a link).
        stored: dict[str, str | bytes] = dict(zip(names, texts, strict=True))
        pool = rng.sample(weighty, len(weighty)) if hard else []
        gz = [names[pool.pop()] for _ in range(rng.randint(1, 2))] if "gzip-files" in faults else []
        utf16 = names[pool.pop()] if "utf16-file" in faults else None
        link = None
        for name in gz:
            stored[f"{name}.gz"] = gzip.compress(str(stored.pop(name)).encode(), mtime=0)
        if utf16:
            stored[utf16] = b"\xff\xfe" + str(stored[utf16]).encode("utf-16-le")
        if "symlink-dup" in faults:  # another name for one of the files, in another folder
            target = names[pool.pop()]
            tdir, _, stem = target.rpartition("/")
            dirs = sorted(({n.rpartition("/")[0] for n in names} | {""}) - {tdir})
            folder = rng.choice(dirs) if dirs else tdir
            path = f"{folder}/{stem}".lstrip("/")
            if folder == tdir or path in names:
                path = f"{tdir}/latest-{stem}".lstrip("/")
            rel = posixpath.relpath(target, posixpath.dirname(path) or ".")
            link = {"path": path, "target": rel}
        files = {f"environment/corpus/{name}": data for name, data in stored.items()}
        context = {
            "corpus": corpus,
            "root": root,
            "names": names,
            "kinds": kinds,
            "kind_names": RX_KIND_NAMES,
            "pfx": pfx,
            "outdir": outdir,
            "out": out,
            "expected": expected,
            "bugs": RX_BUGS,
            "bug_notes": [
                RX_BUG_NOTES["edges"],
                RX_BUG_NOTES["validation"],
                RX_BUG_NOTES["listing"][level.value],  # type: ignore[index]
            ],
            "digests": {f"{root}/{n}": sha256_hex(t) for n, t in stored.items()},
            "hard": hard,
            "faults": faults,
        }
        wiring = Wiring.none()
        tags = ["regex", *kinds]
        if hard:
            app = root.strip("/").replace("/", "-")
            job = ImportJob.draw(rng, app, out, "kind,value,count", faults)
            context.update(
                job=job.context(),
                work=f"/tmp/{app}-text",
                gz=gz,
                utf16=utf16,
                link=link,
            )
            files.update(job.files())
            unfixed = near_misses(self, context, faults, difficulty=level.value)
            wiring = job.wire(faults, RX_TRAPS, unfixed)
            tags += ["cron", "encoding"]
        return text_draft(self, level, context, files, faults, wiring, [expected], [out], tags)
