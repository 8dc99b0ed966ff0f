import re
from pathlib import Path


def expected() -> int:
    lines = Path("/app/logs/service.log").read_text().splitlines()
    return sum(1 for line in lines if re.search(r"\[ERROR\]", line))


def test_file_exists():
    assert Path("/app/error_count.txt").is_file()


def test_count_is_right():
    text = Path("/app/error_count.txt").read_text().strip()
    assert text.isdigit(), f"not a number: {text!r}"
    assert int(text) == expected()


def test_pytest_is_the_pinned_one():
    # The verifier asked uv for pytest 8.4.1; the imported task must provide it offline.
    import pytest

    assert pytest.__version__ == "8.4.1"
