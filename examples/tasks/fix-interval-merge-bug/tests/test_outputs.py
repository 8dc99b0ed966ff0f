import hashlib
import random
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, "/app")

from schedkit import free_slots, merge, total_length  # noqa: E402

VISIBLE_TESTS_SHA256 = "9362009829783a7b4ad070ff8b09d4675f5d8009fb8e56a091549616af43e3f9"


def _points(intervals):
    covered = set()
    for start, end in intervals:
        covered.update(range(start, end))
    return covered


def _runs(points):
    """Sorted disjoint non-touching intervals covering exactly ``points``."""
    out = []
    for x in sorted(points):
        if out and out[-1][1] == x:
            out[-1][1] = x + 1
        else:
            out.append([x, x + 1])
    return [tuple(r) for r in out]


def test_visible_tests_untouched_and_passing():
    visible = Path("/app/tests/test_intervals.py")
    assert hashlib.sha256(visible.read_bytes()).hexdigest() == VISIBLE_TESTS_SHA256
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd="/app",
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-2000:]


@pytest.mark.parametrize(
    "given, expected",
    [
        ([], []),
        ([(1, 3)], [(1, 3)]),
        ([(5, 8), (1, 3), (2, 4)], [(1, 4), (5, 8)]),
        ([(1, 2), (2, 3)], [(1, 3)]),
        ([(2, 3), (1, 2)], [(1, 3)]),
        ([(0, 10), (2, 3), (4, 5)], [(0, 10)]),
        ([(4, 6), (4, 6), (4, 6)], [(4, 6)]),
        ([(3, 3), (1, 2), (7, 7)], [(1, 2)]),
        ([(9, 12), (0, 1), (1, 4), (12, 13), (6, 7)], [(0, 4), (6, 7), (9, 13)]),
        ([(-5, -1), (-1, 0), (10, 20)], [(-5, 0), (10, 20)]),
    ],
)
def test_merge_cases(given, expected):
    assert merge(given) == expected


def test_merge_accepts_any_iterable_and_keeps_input():
    given = [(6, 9), (1, 2), (2, 5)]
    snapshot = list(given)
    assert merge(iter(given)) == [(1, 5), (6, 9)]
    assert merge(tuple(given)) == [(1, 5), (6, 9)]
    assert merge(given) == [(1, 5), (6, 9)]
    assert given == snapshot


def test_merge_rejects_reversed_anywhere():
    with pytest.raises(ValueError):
        merge([(1, 2), (5, 4)])


def test_merge_matches_brute_force():
    rng = random.Random(7)
    for _ in range(400):
        given = []
        for _ in range(rng.randint(0, 12)):
            a = rng.randint(0, 60)
            given.append((a, a + rng.randint(0, 8)))
        assert merge(given) == _runs(_points(given)), given


def test_total_length():
    assert total_length([]) == 0
    assert total_length([(5, 10), (0, 5)]) == 10
    assert total_length([(10, 20), (0, 15), (15, 16)]) == 20
    rng = random.Random(11)
    for _ in range(200):
        given = [(a, a + rng.randint(0, 6)) for a in (rng.randint(0, 40) for _ in range(8))]
        assert total_length(given) == len(_points(given)), given


def test_free_slots():
    assert free_slots([], (0, 10)) == [(0, 10)]
    assert free_slots([(30, 40), (10, 20)], (0, 50)) == [(0, 10), (20, 30), (40, 50)]
    assert free_slots([(20, 30), (10, 20)], (0, 40)) == [(0, 10), (30, 40)]
    assert free_slots([(0, 50)], (10, 20)) == []
    rng = random.Random(13)
    for _ in range(200):
        busy = [(a, a + rng.randint(0, 6)) for a in (rng.randint(0, 40) for _ in range(6))]
        lo = rng.randint(0, 20)
        hi = lo + rng.randint(0, 30)
        want = _runs(set(range(lo, hi)) - _points(busy))
        assert free_slots(busy, (lo, hi)) == want, (busy, (lo, hi))
