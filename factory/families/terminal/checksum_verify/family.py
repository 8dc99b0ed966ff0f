"""checksum-verify: check a folder of downloads against its published SHA256SUMS list and report
the files that do not match (and, on hard tasks, the ones that are missing).

The small example family of CONTRIBUTING.md: everything it needs is in this folder."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, register
from factory.families.slots import Slots, Slug, Word
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
    reported; hard: files in sub-folders, a listed file that does not exist (reported as
    MISSING), same-size corruptions throughout."""

    name = "checksum-verify"
    title = "Find the downloads that do not match their published SHA256 checksums"
    category = "file-integrity"
    slots = ChecksumSlots

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = LEVELS[difficulty]
        folder = rng.choice(FOLDERS)
        stems, words = self.filled("stems", STEMS), self.filled("words", WORDS)
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
            "digests": {
                f"{folder}/{name}": hashlib.sha256(data).hexdigest()
                for name, data in sorted(shipped.items())
            },
        }
        mutations = {}
        if missing:  # the one near miss only hard tasks can show
            solve = self.template("solution/solve.sh.j2")
            mutations["missing-as-failed"] = solve.render(**context, slip="missing-as-failed")
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
