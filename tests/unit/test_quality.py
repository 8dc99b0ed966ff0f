from __future__ import annotations

from pathlib import Path

from factory.quality.dedup import DedupIndex, signature, similarity
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
    for rel, text in {
        "instruction.md": instruction,
        "solution/solve.sh": solution,
        **{f"environment/{k}": v for k, v in env.items()},
        **{f"tests/{k}": v for k, v in tests.items()},
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


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
