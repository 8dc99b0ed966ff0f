"""checksum-verify's generation logic, without Docker: the expected report is what checking the
shipped files against the shipped lists gives, recomputed here independently; at hard, the
reference (shell, GNU coreutils) runs here on the shipped files, and each near miss (one list
left unchecked) writes a report that differs."""

from __future__ import annotations

import gzip
import hashlib
import random
import re
import subprocess

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.checksum_verify.family import CV_LISTS, CV_TRAPS
from factory.quality.structure import solution_steps
from factory.vocabulary import Difficulty

FAMILY = registry.get("checksum-verify")


draft = grammar.drafter(FAMILY)


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


@pytest.mark.parametrize("difficulty", [Difficulty.EASY, Difficulty.MEDIUM])
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
        missing = "missing" in hard.faults
        assert any(line.endswith("MISSING") for line in hard.context["report"]) == missing
        assert ("missing-as-failed" in hard.mutations) == missing
        assert "missing-as-failed" not in easy.mutations
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


# --- hard: several lists, in several folders and formats -------------------------------------

HARD_SEEDS = range(1, 13)
needs_tools = grammar.needs_tools("bash", "sed", "sort", "zcat", "md5sum", "sha512sum")
BSD = re.compile(r"^(?P<algo>[A-Z0-9]+) \((?P<name>.+)\) = (?P<digest>[0-9a-f]+)$")


def check_all(files: dict[str, bytes]) -> list[str]:
    """Every list of a hard task read here (GNU and BSD lines, gzip, sidecars)."""
    prefix = "environment/files/"
    shipped = {rel[len(prefix) :]: data for rel, data in files.items()}
    entries = []  # (folder, algorithm, digest, name)
    for path, data in shipped.items():
        folder, _, base = path.rpartition("/")
        algo = {"MD5SUMS": "md5", "SHA512SUMS": "sha512"}.get(base, "sha256")
        if base == "SHA256SUMS.gz":
            data = gzip.decompress(data)
        elif not (
            base in ("SHA256SUMS", "MD5SUMS", "SHA512SUMS", "CHECKSUMS") or base.endswith(".sha256")
        ):
            continue
        for line in data.decode().splitlines():
            bsd = BSD.match(line)
            if bsd:
                entries.append((folder, bsd["algo"].lower(), bsd["digest"], bsd["name"]))
            else:
                assert line[len(line.split(" ")[0]) + 1] in " *", line
                digest, name = line.split(" ", 1)
                entries.append((folder, algo, digest, name[1:]))
    lines = []
    for folder, algo, digest, name in entries:
        path = f"{folder}/{name}" if folder else name
        if path not in shipped:
            lines.append(f"{path}: MISSING")
        elif hashlib.new(algo, shipped[path]).hexdigest() != digest:
            lines.append(f"{path}: FAILED")
    return sorted(lines)


def run_solution(d, tmp_path, **extra) -> list[str]:
    """The hard reference (or a near miss of it) run here on the shipped files."""
    folder = tmp_path / "files"
    grammar.write_shipped(d, folder, "environment/files/")
    out, scratch = tmp_path / "report.txt", tmp_path / "checks"
    context = dict(d.context, folder=str(folder), out=str(out), scratch=str(scratch), **extra)
    script = FAMILY.template("solution/solve.sh.j2").render(**context)
    subprocess.run(["bash", "-c", script], check=True, capture_output=True)
    return out.read_text().splitlines()


def test_hard_composes_lists_from_the_grammar():
    grammar.assert_varied(draft)
    seen = set()
    for seed in range(1, 60):
        d = draft(Difficulty.HARD, seed)
        kinds = [f for f in d.faults if f != "missing"]
        assert 2 <= len(kinds) <= 4 and set(kinds) <= set(CV_LISTS)
        grammar.assert_traps_match(d, CV_TRAPS, kinds)
        # every list has something to report, so leaving one out shows
        for check in d.context["checks"]:
            prefix = f"{check['dir']}/" if check["dir"] else ""
            rows = [r for r in d.context["report"] if r.startswith(prefix)]
            assert rows if prefix else [r for r in rows if "/" not in r], (seed, check)
        seen |= set(d.faults)
    assert seen == set(CV_LISTS) | {"missing"}


@pytest.mark.parametrize("seed", HARD_SEEDS)
def test_hard_expected_report_is_what_checking_every_list_gives(seed):
    d = draft(Difficulty.HARD, seed)
    assert d.context["report"] == check_all(d.files)


@needs_tools
@pytest.mark.parametrize("seed", HARD_SEEDS)
def test_hard_reference_writes_the_report_and_each_near_miss_differs(seed, tmp_path):
    d = draft(Difficulty.HARD, seed)
    assert run_solution(d, tmp_path) == d.context["report"]
    slips = [name for name in d.mutations] + ["keeps-ok-lines", "lists-everything"]
    assert {f"leave-{k}" for k in d.faults if k != "missing"} <= set(slips)
    for slip in slips:
        assert run_solution(d, tmp_path, slip=slip) != d.context["report"], slip


def test_hard_steps_and_instruction():
    steps = sorted(
        len(
            solution_steps(
                FAMILY.template("solution/solve.sh.j2").render(**draft(Difficulty.HARD, s).context)
            )
        )
        for s in range(1, 42)
    )
    assert steps[len(steps) // 2] >= 8
    words = ("md5", "sha512", "gzip", ".gz", "bsd", "tag")
    grammar.check_hard_instructions(FAMILY, draft, range(1, 60), words)
