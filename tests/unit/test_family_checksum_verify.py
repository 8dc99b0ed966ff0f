"""checksum-verify's generation logic, without Docker: the expected report is what checking the
shipped files against the shipped list gives, recomputed here independently."""

from __future__ import annotations

import hashlib
import random

import pytest

from factory.families import registry
from factory.vocabulary import Difficulty

FAMILY = registry.get("checksum-verify")


def draft(difficulty: Difficulty, seed: int):
    return FAMILY.draft(random.Random(seed), difficulty, {})


def check(files: dict[str, bytes]) -> list[str]:
    """What `sha256sum -c` finds, as the report's lines."""
    prefix = "environment/files/"
    shipped = {rel[len(prefix) :]: data for rel, data in files.items()}
    lines = []
    for entry in shipped["SHA256SUMS"].decode().splitlines():
        digest, name = entry[:64], entry[66:]
        assert entry[64] == " " and entry[65] in " *", entry
        if name not in shipped:
            lines.append(f"{name}: MISSING")
        elif hashlib.sha256(shipped[name]).hexdigest() != digest:
            lines.append(f"{name}: FAILED")
    return sorted(lines)


@pytest.mark.parametrize("difficulty", list(Difficulty))
@pytest.mark.parametrize("seed", range(1, 7))
def test_expected_report_is_what_checking_the_shipped_files_gives(difficulty, seed):
    d = draft(difficulty, seed)
    assert d.context["report"] == check(d.files)
    listed = d.files["environment/files/SHA256SUMS"].decode()
    unlisted = [
        rel for rel in d.files if rel != "environment/files/SHA256SUMS" and rel[18:] not in listed
    ]
    assert not any(line.startswith(rel[18:]) for rel in unlisted for line in d.context["report"])


def test_difficulty_knobs():
    for seed in range(1, 6):
        easy, medium, hard = (draft(level, seed) for level in Difficulty)
        assert len(easy.context["report"]) == 1 and "*" not in easy.files[
            "environment/files/SHA256SUMS"
        ].decode().replace(" *", "")  # no binary-mode marks on easy lists
        assert len(medium.context["report"]) == 2
        assert [line for line in hard.context["report"] if line.endswith("MISSING")]
        assert "missing-as-failed" in hard.mutations and "missing-as-failed" not in easy.mutations
        assert not any(line.endswith("MISSING") for line in medium.context["report"])


def test_a_corruption_keeps_the_size_and_changes_the_digest():
    from factory.families.terminal.checksum_verify.family import _corrupt

    for seed in range(50):
        rng = random.Random(seed)
        data = bytes(rng.randrange(256) for _ in range(rng.randint(2, 300)))
        bad = _corrupt(rng, data)
        assert len(bad) == len(data) and bad != data


def test_same_seed_same_task():
    assert draft(Difficulty.MEDIUM, 4).files == draft(Difficulty.MEDIUM, 4).files
    assert draft(Difficulty.MEDIUM, 4).files != draft(Difficulty.MEDIUM, 5).files
