from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from fixtures.files import write_files

from factory.quality.dedup import NUM_PERM, DedupIndex, band_params, signature, similarity
from factory.quality.leaks import find_leaks
from factory.validate.probes import cheat_scripts

TEXT = "Count the ERROR lines of /var/log/app.log and write the number to /app/count.txt. " * 3


def test_minhash_similarity():
    assert similarity(signature(TEXT), signature(TEXT)) == 1.0
    close = TEXT.replace("/app/count.txt", "/app/total.txt")
    far = "Rotate the nginx logs weekly and compress old ones with gzip, keeping four weeks."
    assert similarity(signature(TEXT), signature(close)) > 0.5
    assert similarity(signature(TEXT), signature(far)) < 0.2


def test_dedup_index():
    index = DedupIndex()
    assert index.check_and_add("a", "h1", TEXT, 0.9) is None
    assert index.check_and_add("b", "h1", "anything", 0.9) == ("a", 1.0)
    dup = index.check_and_add("c", "h2", TEXT + " ", 0.9)
    assert dup is not None and dup[0] == "a"
    assert index.check_and_add("d", "h3", "something else entirely, about cron jobs", 0.9) is None


def make_task(
    root: Path, instruction: str, env: dict[str, str], solution: str, tests: dict[str, str]
) -> Path:
    files = {
        "instruction.md": instruction,
        "solution/solve.sh": solution,
        **{f"environment/{k}": v for k, v in env.items()},
        **{f"tests/{k}": v for k, v in tests.items()},
    }
    return write_files(root, files)


def test_leaks(tmp_path):
    solution = (
        "#!/bin/bash\n# a long enough solution script to count as a real file\necho 42 > /app/x\n"
    )
    test_py = (
        "def test_x():\n    assert open('/app/x').read().strip() == '42'  # long enough line\n"
    )
    clean = make_task(
        tmp_path / "clean",
        "Write the answer to /app/x.",
        {"Dockerfile": "FROM x\n"},
        solution,
        {"test_outputs.py": test_py},
    )
    assert find_leaks(clean, ("42",)) == []
    leaky = make_task(
        tmp_path / "leaky",
        "Write 42 to /app/x.",
        {"Dockerfile": "FROM x\n", "copy_of_tests.py": test_py},
        solution,
        {"test_outputs.py": test_py},
    )
    leaks = find_leaks(leaky, ("42",))
    assert any("gives away the answer '42'" in leak for leak in leaks)
    assert any("copy_of_tests.py is a copy of tests/test_outputs.py" in leak for leak in leaks)


def test_secret_match_respects_word_boundaries(tmp_path):
    task = make_task(
        tmp_path / "t",
        "Use port 8080 and version 1.42.0.",
        {"Dockerfile": "FROM x\n"},
        "#!/bin/sh\n",
        {"test.sh": "true\n"},
    )
    assert find_leaks(task, ("42", "808")) == []
    assert find_leaks(task, ("8080",))


def test_cheat_scripts():
    scripts = cheat_scripts(["/app/out.txt", "/app/reports/"], attacks="none")
    assert set(scripts) == {"exit-0", "fake-reward", "empty-outputs"}
    assert ": > /app/out.txt" in scripts["empty-outputs"]
    assert "mkdir -p /app/reports" in scripts["empty-outputs"]
    assert "reward.txt" in scripts["fake-reward"]
    assert set(cheat_scripts([], attacks="none")) == {"exit-0", "fake-reward"}
    assert set(cheat_scripts([])) == {"exit-0", "fake-reward", "tamper"}


def _edited(text: str, rng: random.Random, edits: int) -> str:
    words = text.split()
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(["alpha", "beta", "gamma", "delta"])
    return " ".join(words)


@pytest.mark.parametrize("threshold", [0.95, 0.9, 0.8, 0.7])
def test_the_lsh_index_finds_what_an_exhaustive_scan_finds(threshold):
    rng = random.Random(int(threshold * 100))
    vocabulary = [f"w{i}" for i in range(60)]
    texts: list[str] = []
    for i in range(300):
        if i >= 5 and i % 3 == 0:  # many near-duplicates, on both sides of the threshold
            texts.append(_edited(texts[rng.randrange(i)], rng, rng.randint(1, 8)))
        else:
            texts.append(" ".join(rng.choice(vocabulary) for _ in range(120)))
    index = DedupIndex()
    kept: dict[str, object] = {}
    found = 0
    for i, text in enumerate(texts):
        sig = signature(text)
        scores = [(other, similarity(sig, s)) for other, s in kept.items()]
        best = max(scores, key=lambda item: item[1], default=None)
        expected = best if best is not None and best[1] >= threshold else None
        task_id = f"t{i:04d}"
        assert index.check_and_add(task_id, f"h{i}", text, threshold) == expected, (i, best)
        if expected is None:
            kept[task_id] = sig
        found += expected is not None
    assert found >= 5  # the case is not trivial


def test_band_params_leave_no_duplicate_unfound():
    for threshold in (1.0, 0.99, 0.95, 0.9, 0.85, 0.8, 0.7, 0.5, 0.1):
        bands, rows = band_params(threshold)
        allowed_mismatches = NUM_PERM - math.ceil(threshold * NUM_PERM - 1e-9)
        assert bands * rows <= NUM_PERM and bands > allowed_mismatches


def test_each_threshold_has_its_index_over_every_kept_task():
    index = DedupIndex()
    base = " ".join(f"word{i}" for i in range(200))
    near = base.replace("word50", "other").replace("word150", "other")  # ~0.9 similar
    assert index.check_and_add("a", "h1", base, 0.97) is None
    assert index.check_and_add("b", "h2", near, 0.97) is None  # not close enough at 0.97
    hit = index.check_and_add("c", "h3", near + " ", 0.5)
    assert hit is not None and hit[0] == "b" and hit[1] == 1.0  # the later index saw both


def test_signatures_are_deterministic():
    assert list(signature(TEXT).hashvalues) == list(signature(TEXT).hashvalues)
    assert signature("").hashvalues.shape == (NUM_PERM,)
