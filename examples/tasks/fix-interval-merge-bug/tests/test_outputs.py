import hashlib
import json
import random
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

# The library under test is the agent's code: it runs in a child process, never imported into
# the verifier (a module could otherwise end the test session "successfully" on import). Each
# test sends its calls in one batch and reads the results after a marker the child prints last.
_RUNNER = r"""
import json, sys
marker, calls = sys.argv[1], json.load(sys.stdin)
sys.path.insert(0, "/app")
import schedkit
out = []
for name, args, wrap in calls:
    given = [args[0]] + [tuple(a) if isinstance(a, list) else a for a in args[1:]]
    if wrap == "iter":
        given[0] = iter([tuple(x) for x in given[0]])
    elif wrap == "tuple":
        given[0] = tuple(tuple(x) for x in given[0])
    elif given and isinstance(given[0], list):
        given[0] = [tuple(x) for x in given[0]]
    snapshot = repr(given)
    try:
        value = getattr(schedkit, name)(*given)
        out.append({"ok": json.loads(json.dumps(value)), "kept": repr(given) == snapshot})
    except Exception as exc:
        out.append({"error": type(exc).__name__})
print(marker + json.dumps(out))
"""


def call(*calls):
    """Run ``(name, args[, wrap])`` calls in a fresh interpreter; their results, in order."""
    marker = f"@@results-{secrets.token_hex(8)}@@"
    batch = [[c[0], [_plain(a) for a in c[1]], c[2] if len(c) > 2 else ""] for c in calls]
    run = subprocess.run(
        [sys.executable, "-c", _RUNNER, marker],
        input=json.dumps(batch),
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/app",
    )
    assert marker in run.stdout, f"the library did not run: {(run.stderr or run.stdout)[-2000:]}"
    return json.loads(run.stdout.rsplit(marker, 1)[1])


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def merge(given, wrap=""):
    return _value(call(("merge", [given], wrap))[0])


def _value(result):
    if "error" in result:
        raise {"ValueError": ValueError, "TypeError": TypeError}.get(result["error"], RuntimeError)(
            result["error"]
        )
    return [tuple(x) for x in result["ok"]] if isinstance(result["ok"], list) else result["ok"]


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
    results = call(("merge", [given], "iter"), ("merge", [given], "tuple"), ("merge", [given]))
    assert [_value(r) for r in results] == [[(1, 5), (6, 9)]] * 3
    assert results[2]["kept"], "merge() changed the list it was given"


def test_merge_rejects_reversed_anywhere():
    with pytest.raises(ValueError):
        merge([(1, 2), (5, 4)])


def test_merge_matches_brute_force():
    rng = random.Random(7)
    cases = []
    for _ in range(400):
        given = []
        for _ in range(rng.randint(0, 12)):
            a = rng.randint(0, 60)
            given.append((a, a + rng.randint(0, 8)))
        cases.append(given)
    results = call(*[("merge", [given]) for given in cases])
    for given, result in zip(cases, results):
        assert _value(result) == _runs(_points(given)), given


def test_total_length():
    rng = random.Random(11)
    cases = [([], 0), ([(5, 10), (0, 5)], 10), ([(10, 20), (0, 15), (15, 16)], 20)]
    for _ in range(200):
        given = [(a, a + rng.randint(0, 6)) for a in (rng.randint(0, 40) for _ in range(8))]
        cases.append((given, len(_points(given))))
    results = call(*[("total_length", [given]) for given, _ in cases])
    for (given, want), result in zip(cases, results):
        assert _value(result) == want, given


def test_free_slots():
    cases = [
        ([], (0, 10), [(0, 10)]),
        ([(30, 40), (10, 20)], (0, 50), [(0, 10), (20, 30), (40, 50)]),
        ([(20, 30), (10, 20)], (0, 40), [(0, 10), (30, 40)]),
        ([(0, 50)], (10, 20), []),
    ]
    rng = random.Random(13)
    for _ in range(200):
        busy = [(a, a + rng.randint(0, 6)) for a in (rng.randint(0, 40) for _ in range(6))]
        lo = rng.randint(0, 20)
        hi = lo + rng.randint(0, 30)
        cases.append((busy, (lo, hi), _runs(set(range(lo, hi)) - _points(busy))))
    results = call(*[("free_slots", [busy, list(window)]) for busy, window, _ in cases])
    for (busy, window, want), result in zip(cases, results):
        assert _value(result) == want, (busy, window)
