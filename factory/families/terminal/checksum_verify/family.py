"""checksum-verify: check a folder of downloads against its published SHA256SUMS list and report
the files that do not match (and, on hard tasks, those of several lists in several formats, and
the ones that are missing).

The small example family of CONTRIBUTING.md: everything it needs is in this folder."""

from __future__ import annotations

import gzip
import hashlib
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, register
from factory.families.slots import Slots, Slug, Word
from factory.families.terminal.knobs import fresh
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.traps import load_traps, traps_for
from factory.vocabulary import Difficulty

FOLDERS = ["/srv/downloads", "/data/mirror", "/opt/releases", "/home/user/incoming"]
STEMS = ["release", "dataset", "backup", "firmware", "report", "snapshot", "bundle", "export"]
TAGS = ["alpha", "beta", "final", "nightly", "eu", "us", "v2", "full", "delta", "lts"]
EXTS = ["tar.gz", "zip", "csv", "json", "iso", "bin", "txt", "sql"]
SUBDIRS = ["docs", "extras", "legacy"]
WORDS = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "kelp"]
# Per level: files listed, corrupted files, binary-mode lines, files in sub-folders, unlisted
# extra files, listed files that do not exist.
LEVELS = {
    Difficulty.EASY: dict(files=5, bad=1, binary=False, subdirs=False, extra=0, missing=0),
    Difficulty.MEDIUM: dict(files=8, bad=2, binary=True, subdirs=False, extra=1, missing=0),
    Difficulty.HARD: dict(files=12, bad=3, binary=True, subdirs=True, extra=2, missing=1),
}


#: Hard: besides the top-level SHA256SUMS, two to four sub-folders with a checksum list of their
#: own, each in a format of its own (kind -> list file name, algorithm, line style), and maybe a
#: listed file that is missing. The instruction names none of the formats.
CV_LISTS = {
    "subdir-list": ("SHA256SUMS", "sha256", "gnu"),
    "md5-list": ("MD5SUMS", "md5", "gnu"),
    "sha512-list": ("SHA512SUMS", "sha512", "gnu"),
    "bsd-list": ("CHECKSUMS", "sha256", "bsd"),  # `SHA256 (NAME) = HEX`, as `--tag` writes
    "gz-list": ("SHA256SUMS.gz", "sha256", "gnu"),  # the list compressed
    "sidecars": ("*.sha256", "sha256", "gnu"),  # one NAME.sha256 beside each file
}
CV_FOLDERS = ["docs", "extras", "legacy", "vendor", "assets", "archive", "firmware", "tools"]
CV_TRAPS = load_traps(Path(__file__).parent / "traps.toml", CV_LISTS)
"""The list formats the instruction does not name: kind -> Trap fields (traps.toml)."""


def _content(rng: random.Random, words: list[str]) -> bytes:
    lines = [" ".join(rng.choices(words, k=rng.randint(4, 12))) for _ in range(rng.randint(5, 60))]
    return ("\n".join(lines) + "\n").encode()


def _corrupt(rng: random.Random, data: bytes) -> bytes:
    """The same size with one byte changed (a bit rot the size alone does not show)."""
    at = rng.randrange(len(data) - 1)
    return data[:at] + bytes([data[at] ^ 0x20 or 0x21]) + data[at + 1 :]


class ChecksumSlots(Slots):
    """A folder of downloaded files: what the files are (the first part of each file name)
    and the words their text is made of."""

    stems: list[Slug] = Field(
        min_length=6,
        max_length=8,
        description="what the downloaded files are, one short name each",
        examples=[["tide-chart", "buoy-data", "harbour-map", "crew-list", "manifest", "permit"]],
    )
    words: list[Word] = Field(
        min_length=8,
        max_length=10,
        description="words the files' text is made of",
        examples=[["anchor", "quay", "pilot", "ebb", "swell", "hull", "mooring", "cargo"]],
    )


@register
class ChecksumVerify(Family):
    """A folder of downloads and its SHA256SUMS list in the format ``sha256sum`` writes: report
    the listed files whose content does not match. easy: five files, one corrupted; medium:
    more files and corruptions, binary-mode (``*``) lines, an unlisted file that must not be
    reported; hard: besides the top-level list, two to four sub-folders with lists of their own
    in formats the instruction does not name (:data:`CV_LISTS`: MD5, SHA-512, BSD tag lines, a
    gzipped list, one sidecar file per download), each with a bad file, and maybe a listed file
    that does not exist (reported as MISSING); same-size corruptions throughout. Each hard task
    has a near miss per list (the reference leaving it unchecked)."""

    name = "checksum-verify"
    title = "Find the downloads that do not match their published SHA256 checksums"
    category = "file-integrity"
    slots = ChecksumSlots

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = LEVELS[difficulty]
        folder = rng.choice(FOLDERS)
        stems, words = self.filled("stems", STEMS), self.filled("words", WORDS)
        if difficulty is Difficulty.HARD:
            return self._hard(rng, folder, stems, words)
        names: list[str] = []
        while len(names) < level["files"] + level["extra"]:
            name = f"{rng.choice(stems)}-{rng.choice(TAGS)}-{rng.randint(1, 40)}.{rng.choice(EXTS)}"
            if level["subdirs"] and rng.random() < 0.4:
                name = f"{rng.choice(SUBDIRS)}/{name}"
            if name not in names:
                names.append(name)
        listed = names[: level["files"]]  # the rest are files the list does not name
        content = {name: _content(rng, words) for name in names}
        bad = rng.sample(listed, level["bad"] + level["missing"])
        missing, corrupted = bad[: level["missing"]], bad[level["missing"] :]
        manifest = ""
        for name in listed:
            mode = "*" if level["binary"] and rng.random() < 0.5 else " "
            manifest += f"{hashlib.sha256(content[name]).hexdigest()} {mode}{name}\n"
        shipped = {name: content[name] for name in names if name not in missing}
        for name in corrupted:
            shipped[name] = _corrupt(rng, shipped[name])
        shipped["SHA256SUMS"] = manifest.encode()
        out = f"{rng.choice(['/app', '/root', '/home/user'])}/{rng.choice(['report', 'bad-files'])}.txt"
        report = sorted([f"{n}: FAILED" for n in corrupted] + [f"{n}: MISSING" for n in missing])
        context = {
            "folder": folder,
            "out": out,
            "report": report,
            "binary": level["binary"],
            "subdirs": level["subdirs"],
            "missing": bool(level["missing"]),
            "hard": False,
            "digests": {
                f"{folder}/{name}": hashlib.sha256(data).hexdigest()
                for name, data in sorted(shipped.items())
            },
        }
        # the one near miss only hard tasks can show
        mutations = near_misses(self, context, ["missing-as-failed"] if missing else [], name="{}")
        return Draft(
            context=context,
            files={f"environment/files/{name}": data for name, data in shipped.items()},
            secrets=[n.rsplit("/", 1)[-1] for n in corrupted + missing],
            outputs=[out],
            separate_verifier=True,
            kept=sorted(context["digests"]),
            mutations=mutations,
            tags=["sha256sum", "integrity"],
        )

    def _hard(self, rng: random.Random, folder: str, stems: list[str], words: list[str]) -> Draft:
        """Lists in several folders and formats: the top-level SHA256SUMS and two to four
        sub-folders drawn from :data:`CV_LISTS`, each with at least one bad file."""
        kinds = sorted(rng.sample(sorted(CV_LISTS), rng.randint(2, 4)))
        has_missing = rng.random() < 0.5
        used: set[str] = set()

        def new_name() -> str:
            return fresh(
                lambda: (
                    f"{rng.choice(stems)}-{rng.choice(TAGS)}-{rng.randint(1, 40)}.{rng.choice(EXTS)}"
                ),
                used,
            )

        # (sub-folder or "" for the top, kind) -> the names its list holds
        groups = [("", "top")] + list(zip(rng.sample(CV_FOLDERS, len(kinds)), kinds, strict=True))
        shipped: dict[str, bytes] = {}
        report: list[str] = []
        checks = []
        missing_group = rng.randrange(len(groups)) if has_missing else None
        for index, (sub, kind) in enumerate(groups):
            listed = [new_name() for _ in range(rng.randint(4, 6) if sub else rng.randint(5, 7))]
            prefix = f"{sub}/" if sub else ""
            content = {name: _content(rng, words) for name in listed}
            bad = rng.sample(listed, rng.randint(1, 2) + (index == missing_group))
            gone = bad[:1] if index == missing_group else []
            list_name, algo, style = CV_LISTS.get(kind, ("SHA256SUMS", "sha256", "gnu"))
            lines = []
            for name in listed:
                digest = hashlib.new(algo, content[name]).hexdigest()
                if style == "bsd":
                    lines.append(f"{algo.upper()} ({name}) = {digest}\n")
                else:
                    mode = "*" if rng.random() < 0.4 else " "
                    lines.append(f"{digest} {mode}{name}\n")
            for name in listed:
                if name in gone:
                    report.append(f"{prefix}{name}: MISSING")
                    continue
                data = content[name]
                if name in bad:
                    data = _corrupt(rng, data)
                    report.append(f"{prefix}{name}: FAILED")
                shipped[prefix + name] = data
            if kind == "sidecars":
                for name, line in zip(listed, lines, strict=True):
                    shipped[f"{prefix}{name}.sha256"] = line.encode()
            elif kind == "gz-list":
                shipped[prefix + list_name] = gzip.compress(
                    "".join(lines).encode(), compresslevel=9, mtime=0
                )
            else:
                shipped[prefix + list_name] = "".join(lines).encode()
            checks.append({"kind": kind, "dir": sub, "list": list_name, "tool": f"{algo}sum"})
        for _ in range(2):  # files no list names
            shipped[new_name()] = _content(rng, words)
        out = f"{rng.choice(['/app', '/root', '/home/user'])}/{rng.choice(['report', 'bad-files'])}.txt"
        faults = kinds + (["missing"] if has_missing else [])
        context = {
            "folder": folder,
            "out": out,
            "report": sorted(report),
            "binary": True,
            "subdirs": True,
            "missing": True,
            "hard": True,
            "checks": checks,
            "scratch": "/tmp/checks",
            "digests": {
                f"{folder}/{name}": hashlib.sha256(data).hexdigest()
                for name, data in sorted(shipped.items())
            },
        }
        slips = [f"leave-{kind}" for kind in kinds] + (["missing-as-failed"] if has_missing else [])
        mutations = near_misses(self, context, slips, name="{}")
        bad_names = [line.rsplit(": ", 1)[0].rsplit("/", 1)[-1] for line in report]
        return Draft(
            context=context,
            files={f"environment/files/{name}": data for name, data in shipped.items()},
            secrets=bad_names,
            outputs=[out],
            separate_verifier=True,
            kept=sorted(context["digests"]),
            mutations=mutations,
            faults=faults,
            traps=traps_for(CV_TRAPS, kinds),
            tags=["sha256sum", "integrity"]
            + sorted({c["tool"] for c in checks} - {"sha256sum"})
            + (["gzip"] if "gz-list" in kinds else []),
        )
