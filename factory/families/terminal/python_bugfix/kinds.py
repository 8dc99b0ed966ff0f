"""The catalogue of function kinds a python-bugfix package is assembled from.

A kind's source uses @name@ tokens for every function name (renamed per task). A bug is a list of
(correct, buggy) snippet pairs; "reveal" cases are calls whose result differs under the bug
(expected values are computed by running the correct code); "edge" bugs break documented edge
cases only, and no visible test covers them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The package is assembled from "kinds" of functions. A kind's source uses @name@ tokens for
# every function name (renamed per task). A bug is a list of (correct, buggy) snippet pairs;
# "reveal" cases are calls whose result differs under the bug (expected values are computed
# here by running the correct code); "edge" bugs break documented edge cases only, and no
# visible test covers them.


@dataclass(frozen=True)
class Case:
    args: str
    """Python source of the argument tuple (may use names defined by ``setup``)."""
    setup: str = ""
    post: str = ""
    """Extra assertion lines after the call (e.g. the input was not modified)."""


@dataclass(frozen=True)
class Kind:
    key: str
    names: tuple[str, ...]
    code: str
    bugs: Mapping[str, tuple[tuple[str, str], ...]]
    reveal: Mapping[str, Case]
    """One visible-test case per non-edge bug."""
    edges: Mapping[str, tuple[tuple[str, str], ...]]
    edge_tests: str
    """Hidden pytest code (tokens allowed) that fails under every edge bug."""
    basic: tuple[Case, ...]
    """Visible cases that pass under every bug of this kind."""
    gen: str
    """Source of ``gen(rng)`` returning an argument tuple, for the hidden property checks."""
    helper: str = ""
    """For a user kind: the key of the kind it calls (in another module)."""
    imports: str = ""


KINDS: dict[str, Kind] = {}


def _kind(**kw: Any) -> None:
    kind = Kind(**kw)
    KINDS[kind.key] = kind


_kind(
    key="paginate",
    names=("paginate", "page_of", "get_page"),
    code='''
def @paginate@(items, page, per_page):
    """Return page number ``page`` (1-based) of ``items``, ``per_page`` items per page.

    The last page may be shorter; a page past the end is empty. Raises ValueError when
    ``page`` or ``per_page`` is smaller than 1. ``items`` is not modified.

    >>> @paginate@(["a", "b", "c", "d", "e"], 2, 2)
    ['c', 'd']
    """
    if page < 1 or per_page < 1:
        raise ValueError("page and per_page must be at least 1")
    start = (page - 1) * per_page
    return list(items[start:start + per_page])
''',
    bugs={"off-by-one": (("start = (page - 1) * per_page", "start = page * per_page"),)},
    reveal={"off-by-one": Case("(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 1, 3)")},
    edges={"no-page-check": (("if page < 1 or per_page < 1:", "if per_page < 1:"),)},
    edge_tests="""
def test_@paginate@_rejects_page_zero():
    with pytest.raises(ValueError):
        @paginate@([1, 2, 3], 0, 2)
""",
    basic=(Case("([], 3, 5)"), Case("(list(range(10)), 9, 4)")),
    gen="""
def gen(rng):
    items = [rng.randint(0, 99) for _ in range(rng.randint(0, 25))]
    return (items, rng.randint(-1, 8), rng.randint(-1, 6))
""",
)
_kind(
    key="merge_intervals",
    names=("merge_intervals", "merge_slots", "union_of"),
    code='''
def @merge_intervals@(intervals):
    """Merge half-open intervals ``(start, end)`` into a sorted list of disjoint intervals.

    The input may be in any order; intervals that overlap or touch (one ends exactly where
    another starts) are merged into one. Empty intervals (``start == end``) are dropped.
    Raises ValueError when an interval ends before it starts. The input is not modified.

    >>> @merge_intervals@([(5, 8), (1, 3), (2, 4)])
    [(1, 4), (5, 8)]
    """
    for start, end in intervals:
        if end < start:
            raise ValueError(f"interval {(start, end)!r} ends before it starts")
    merged = []
    for start, end in sorted(intervals):
        if start == end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [tuple(m) for m in merged]
''',
    bugs={
        "unsorted": (("for start, end in sorted(intervals):", "for start, end in intervals:"),),
        "touching": (
            ("if merged and start <= merged[-1][1]:", "if merged and start < merged[-1][1]:"),
        ),
    },
    reveal={
        "unsorted": Case("([(10, 12), (1, 4), (3, 6)],)"),
        "touching": Case("([(1, 3), (3, 5), (8, 9)],)"),
    },
    edges={"keeps-empty": (("        if start == end:\n            continue\n", ""),)},
    edge_tests="""
def test_@merge_intervals@_drops_empty():
    assert @merge_intervals@([(4, 4), (1, 2)]) == [(1, 2)]
""",
    basic=(Case("([],)"), Case("([(0, 10), (2, 3)],)")),
    gen="""
def gen(rng):
    out = []
    for _ in range(rng.randint(0, 8)):
        a = rng.randint(0, 40)
        out.append((a, a + rng.randint(-1 if rng.random() < 0.05 else 0, 7)))
    return (out,)
""",
)
_kind(
    key="percent_of",
    names=("percent_of", "percentage", "pct_of"),
    code='''
def @percent_of@(amount_cents, percent):
    """``percent`` % of ``amount_cents``, in whole cents, rounded half up (half a cent -> 1).

    Both arguments are integers; raises ValueError when either is negative.

    >>> @percent_of@(1999, 15)
    300
    """
    if amount_cents < 0 or percent < 0:
        raise ValueError("amount and percent must not be negative")
    return (amount_cents * percent * 2 + 100) // 200
''',
    bugs={
        "bankers-rounding": (
            (
                "return (amount_cents * percent * 2 + 100) // 200",
                "return round(amount_cents * percent / 100)",
            ),
        ),
        "truncates": (
            (
                "return (amount_cents * percent * 2 + 100) // 200",
                "return amount_cents * percent // 100",
            ),
        ),
    },
    reveal={"bankers-rounding": Case("(250, 1)"), "truncates": Case("(250, 1)")},
    edges={"no-check": (("if amount_cents < 0 or percent < 0:", "if amount_cents < 0:"),)},
    edge_tests="""
def test_@percent_of@_rejects_negative_percent():
    with pytest.raises(ValueError):
        @percent_of@(100, -5)
""",
    basic=(Case("(0, 50)"), Case("(12000, 25)")),
    gen="""
def gen(rng):
    return (rng.choice([rng.randint(0, 5000), rng.randint(0, 20) * 50]), rng.randint(-1, 100))
""",
)
_kind(
    key="split_evenly",
    names=("split_evenly", "split_amount", "allocate"),
    code='''
def @split_evenly@(total_cents, parts):
    """Split ``total_cents`` into ``parts`` integer shares that add up to ``total_cents``.

    Shares differ by at most one cent and the larger shares come first. Raises ValueError when
    ``parts`` is smaller than 1 or ``total_cents`` is negative.

    >>> @split_evenly@(1000, 3)
    [334, 333, 333]
    """
    if parts < 1 or total_cents < 0:
        raise ValueError("need at least one part and a non-negative total")
    base, extra = divmod(total_cents, parts)
    return [base + 1] * extra + [base] * (parts - extra)
''',
    bugs={
        "drops-remainder": (
            ("return [base + 1] * extra + [base] * (parts - extra)", "return [base] * parts"),
        ),
        "small-first": (
            (
                "return [base + 1] * extra + [base] * (parts - extra)",
                "return [base] * (parts - extra) + [base + 1] * extra",
            ),
        ),
    },
    reveal={"drops-remainder": Case("(1001, 4)"), "small-first": Case("(1001, 4)")},
    edges={
        "no-check": (("if parts < 1 or total_cents < 0:", "if total_cents < 0:"),),
    },
    edge_tests="""
def test_@split_evenly@_rejects_zero_parts():
    with pytest.raises(ValueError):
        @split_evenly@(100, 0)
""",
    basic=(Case("(900, 3)"), Case("(0, 2)")),
    gen="""
def gen(rng):
    return (rng.randint(-1, 3000), rng.randint(-1, 9))
""",
)
_kind(
    key="median",
    names=("median", "middle_value"),
    code='''
def @median@(values):
    """The median of a non-empty sequence of numbers: the middle value after sorting, or the
    mean of the two middle values when there is an even number of them.

    Raises ValueError for an empty sequence. The input is not modified.

    >>> @median@([3, 1, 2])
    2
    >>> @median@([4, 1, 2, 3])
    2.5
    """
    if len(values) == 0:
        raise ValueError("median of an empty sequence")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
''',
    bugs={
        "unsorted": (("ordered = sorted(values)", "ordered = list(values)"),),
        "even-count": (("return (ordered[mid - 1] + ordered[mid]) / 2", "return ordered[mid]"),),
        "sorts-input": (("ordered = sorted(values)", "values.sort()\n    ordered = values"),),
    },
    reveal={
        "unsorted": Case("([9, 1, 5, 3, 7],)"),
        "even-count": Case("([1, 2, 3, 10],)"),
        "sorts-input": Case("(data,)", setup="data = [5, 3, 1]", post="assert data == [5, 3, 1]"),
    },
    edges={
        "no-check": (
            (
                '    if len(values) == 0:\n        raise ValueError("median of an empty sequence")\n',
                "",
            ),
        ),
    },
    edge_tests="""
def test_@median@_rejects_empty():
    with pytest.raises(ValueError):
        @median@([])
""",
    basic=(Case("([1, 2, 3],)"), Case("([4],)")),
    gen="""
def gen(rng):
    return ([rng.randint(-50, 50) for _ in range(rng.randint(0, 9))],)
""",
)
_kind(
    key="weighted_average",
    names=("weighted_average", "weighted_mean"),
    code='''
def @weighted_average@(pairs):
    """The weighted average of ``(value, weight)`` pairs: sum(value * weight) / sum(weight).

    Weights are non-negative numbers. Raises ValueError when the weights add up to 0 (which
    includes an empty list).

    >>> @weighted_average@([(80, 1), (90, 3)])
    87.5
    """
    total = sum(weight for _, weight in pairs)
    if total == 0:
        raise ValueError("the weights add up to zero")
    return sum(value * weight for value, weight in pairs) / total
''',
    bugs={
        "floor-division": (
            (
                "return sum(value * weight for value, weight in pairs) / total",
                "return sum(value * weight for value, weight in pairs) // total",
            ),
        ),
    },
    reveal={"floor-division": Case("([(70, 1), (85, 2)],)")},
    edges={
        "no-check": (
            ('    if total == 0:\n        raise ValueError("the weights add up to zero")\n', ""),
        )
    },
    edge_tests="""
def test_@weighted_average@_rejects_zero_weight():
    with pytest.raises(ValueError):
        @weighted_average@([(5, 0)])
""",
    basic=(Case("([(10, 2)],)"), Case("([(60, 1), (80, 1)],)")),
    gen="""
def gen(rng):
    return ([(rng.randint(0, 100), rng.randint(0, 4)) for _ in range(rng.randint(0, 5))],)
""",
)
_kind(
    key="top_n",
    names=("top_n", "best_n", "leaders"),
    code='''
def @top_n@(scores, n):
    """The names of the ``n`` highest scores in ``scores`` (a dict name -> score), best first.

    Equal scores are ordered by name, alphabetically. Fewer names are returned when there are
    fewer than ``n``. Raises ValueError when ``n`` is negative.

    >>> @top_n@({"ann": 3, "bob": 5, "cid": 3}, 2)
    ['bob', 'ann']
    """
    if n < 0:
        raise ValueError("n must not be negative")
    ranked = sorted(scores, key=lambda name: (-scores[name], name))
    return ranked[:n]
''',
    bugs={
        "ties-unordered": (
            ("key=lambda name: (-scores[name], name))", "key=lambda name: -scores[name])"),
        ),
        "ties-reversed": (
            (
                "sorted(scores, key=lambda name: (-scores[name], name))",
                "sorted(scores, key=lambda name: (scores[name], name), reverse=True)",
            ),
        ),
    },
    reveal={
        "ties-unordered": Case("({'zed': 4, 'amy': 9, 'bea': 4}, 3)"),
        "ties-reversed": Case("({'amy': 4, 'zed': 4, 'bea': 9}, 3)"),
    },
    edges={
        "no-check": (('    if n < 0:\n        raise ValueError("n must not be negative")\n', ""),)
    },
    edge_tests="""
def test_@top_n@_rejects_negative():
    with pytest.raises(ValueError):
        @top_n@({"a": 1, "b": 2}, -1)
""",
    basic=(Case("({'a': 1, 'b': 2, 'c': 3}, 2)"), Case("({}, 4)")),
    gen="""
def gen(rng):
    names = rng.sample(["ann", "bob", "cid", "dee", "eve", "fay", "gus", "hal"], rng.randint(0, 8))
    return ({name: rng.randint(0, 4) for name in names}, rng.randint(-1, 9))
""",
)
_kind(
    key="restock",
    names=("needs_restock", "low_stock", "to_reorder"),
    code='''
def @restock@(stock, threshold):
    """The SKUs whose quantity is at or below ``threshold``, sorted alphabetically.

    ``stock`` maps SKU -> quantity; a quantity of ``None`` means unknown and always counts as
    needing a restock.

    >>> @restock@({"b-2": 5, "a-1": 1, "c-3": None}, 2)
    ['a-1', 'c-3']
    """
    return sorted(sku for sku, qty in stock.items() if qty is None or qty <= threshold)
''',
    bugs={
        "strict": (("qty is None or qty <= threshold", "qty is None or qty < threshold"),),
        "unsorted": (
            (
                "return sorted(sku for sku, qty in stock.items() if qty is None or qty <= threshold)",
                "return [sku for sku, qty in stock.items() if qty is None or qty <= threshold]",
            ),
        ),
    },
    reveal={
        "strict": Case("({'ax-1': 3, 'bx-2': 4, 'cx-3': 9}, 4)"),
        "unsorted": Case("({'zz-9': 0, 'aa-1': 1}, 2)"),
    },
    edges={"no-unknown": (("if qty is None or qty <= threshold", "if qty <= threshold"),)},
    edge_tests="""
def test_@restock@_unknown_quantity():
    assert @restock@({"x": None, "y": 50}, 3) == ["x"]
""",
    basic=(Case("({'a': 10}, 5)"), Case("({}, 3)")),
    gen="""
def gen(rng):
    skus = rng.sample(["a-1", "b-2", "c-3", "d-4", "e-5", "f-6", "g-7"], rng.randint(0, 7))
    return ({s: rng.choice([None, *range(0, 8)]) for s in skus}, rng.randint(0, 6))
""",
)
_kind(
    key="tally",
    names=("tally", "count_words", "word_counts"),
    code='''
def @tally@(words, counts=None):
    """Count the words of ``words``, ignoring case and surrounding whitespace.

    Returns a dict word -> count, the words lower-cased and stripped; words that are empty
    after stripping are skipped. When ``counts`` is given it is updated in place and returned;
    otherwise a new dict is returned.

    >>> @tally@(["Red", "red ", "blue"])
    {'red': 2, 'blue': 1}
    """
    if counts is None:
        counts = {}
    for word in words:
        key = word.strip().lower()
        if key:
            counts[key] = counts.get(key, 0) + 1
    return counts
''',
    bugs={
        "shared-default": (
            ("def @tally@(words, counts=None):", "def @tally@(words, counts={}):"),
            ("    if counts is None:\n        counts = {}\n", ""),
        ),
        "case-sensitive": (("key = word.strip().lower()", "key = word.strip()"),),
    },
    reveal={
        "shared-default": Case("(['pear', 'Pear'],)", setup="@tally@(['apple'])"),
        "case-sensitive": Case("(['Fig', 'fig', 'FIG '],)"),
    },
    edges={
        "keeps-empty": (
            (
                "        if key:\n            counts[key]",
                "        if True:\n            counts[key]",
            ),
        )
    },
    edge_tests="""
def test_@tally@_skips_blank_words():
    assert @tally@(["  ", "a", ""]) == {"a": 1}
""",
    basic=(Case("([], {})"), Case("(['x', 'y', 'x'], {})")),
    gen="""
def gen(rng):
    pool = ["ant", "Ant", " ant", "bee", "BEE", "cow ", "", "  ", "dog"]
    return ([rng.choice(pool) for _ in range(rng.randint(0, 8))],)
""",
)
_kind(
    key="parse_duration",
    names=("parse_duration", "to_seconds", "duration_seconds"),
    imports="import re",
    code='''
def @parse_duration@(text):
    """Parse a duration such as ``"1h30m"``, ``"45m"``, ``"2h"``, ``"90s"`` or ``"1h2m30s"``
    into a number of seconds.

    Units are ``h``, ``m`` and ``s``, each at most once and in that order, each with a whole
    number; surrounding whitespace is ignored. Raises ValueError for anything else, including
    an empty string.

    >>> @parse_duration@("1h30m")
    5400
    """
    text = text.strip()
    match = re.fullmatch(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?", text)
    if not text or not match:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds
''',
    bugs={
        "single-digit": (('r"(?:(\\d+)h)?', 'r"(?:(\\d)h)?'),),
        "no-strip": (("    text = text.strip()\n", ""),),
    },
    reveal={"single-digit": Case("('12h',)"), "no-strip": Case("(' 5m ',)")},
    edges={"accepts-empty": (("if not text or not match:", "if not match:"),)},
    edge_tests="""
def test_@parse_duration@_rejects_empty():
    with pytest.raises(ValueError):
        @parse_duration@("")
""",
    basic=(Case("('2h',)"), Case("('1h2m3s',)")),
    gen="""
def gen(rng):
    parts = ""
    for unit in "hms":
        if rng.random() < 0.5:
            parts += f"{rng.randint(0, 130)}{unit}"
    if rng.random() < 0.1:
        parts = rng.choice(["", "5x", "m5", "1m2h"])
    return (rng.choice(["", " ", "  "]) + parts + rng.choice(["", " "]),)
""",
)
_kind(
    key="parse_kv",
    names=("parse_kv", "parse_settings", "read_pairs"),
    code='''
def @parse_kv@(text):
    """Parse ``key = value`` lines into a dict.

    Blank lines and lines whose first non-blank character is ``#`` are ignored. Keys and values
    are stripped of surrounding whitespace; a value may itself contain ``=``; a later line
    overrides an earlier one with the same key. Raises ValueError for any other line that has
    no ``=``.

    >>> @parse_kv@("a = 1\\n# note\\nb=x=y")
    {'a': '1', 'b': 'x=y'}
    """
    result = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if "=" not in stripped:
            raise ValueError(f"line {number}: expected key = value")
        key, _, value = stripped.partition("=")
        result[key.strip()] = value.strip()
    return result
''',
    bugs={
        "splits-value": (
            ('key, _, value = stripped.partition("=")', 'key, value = stripped.split("=")[:2]'),
        ),
        "indented-comment": (
            (
                'if not stripped or stripped.startswith("#"):',
                'if not stripped or line.startswith("#"):',
            ),
        ),
    },
    reveal={
        "splits-value": Case("('url = http://h/?a=1\\nmode = fast',)"),
        "indented-comment": Case("('x = 1\\n   # old: y = 2\\ny = 3',)"),
    },
    edges={
        "no-error": (
            (
                '        if "=" not in stripped:\n            raise ValueError(f"line {number}: expected key = value")\n',
                "",
            ),
        )
    },
    edge_tests="""
def test_@parse_kv@_rejects_garbage():
    with pytest.raises(ValueError):
        @parse_kv@("a = 1\\nnonsense")
""",
    basic=(Case("('',)"), Case("('a=1\\nb = 2\\na = 3',)")),
    gen="""
def gen(rng):
    lines = []
    for _ in range(rng.randint(0, 6)):
        lines.append(rng.choice([
            f"{rng.choice('abc')} = {rng.randint(0, 9)}",
            f"  {rng.choice('abc')}={rng.choice(['x=y', 'z', ' q '])}",
            "# comment", "   # indented = comment", "", "   ",
            "broken" if rng.random() < 0.2 else "k = v",
        ]))
    return ("\\n".join(lines),)
""",
)
_kind(
    key="compare_versions",
    names=("compare_versions", "version_cmp", "cmp_versions"),
    code='''
def @compare_versions@(a, b):
    """Compare dotted version strings numerically: -1 if a < b, 0 if equal, 1 if a > b.

    Every part is a non-negative integer; missing parts count as 0, so ``"1.2" == "1.2.0"`` and
    ``"1.10" > "1.9"``.

    >>> @compare_versions@("1.10", "1.9")
    1
    """
    left = [int(part) for part in a.split(".")]
    right = [int(part) for part in b.split(".")]
    width = max(len(left), len(right))
    left += [0] * (width - len(left))
    right += [0] * (width - len(right))
    return (left > right) - (left < right)
''',
    bugs={
        "string-parts": (
            ('left = [int(part) for part in a.split(".")]', 'left = a.split(".")'),
            ('right = [int(part) for part in b.split(".")]', 'right = b.split(".")'),
            ("left += [0] * (width - len(left))", 'left += ["0"] * (width - len(left))'),
            ("right += [0] * (width - len(right))", 'right += ["0"] * (width - len(right))'),
        ),
    },
    reveal={"string-parts": Case("('2.10.0', '2.9.3')")},
    edges={
        "no-padding": (
            (
                "    left += [0] * (width - len(left))\n    right += [0] * (width - len(right))\n",
                "",
            ),
        )
    },
    edge_tests="""
def test_@compare_versions@_missing_parts():
    assert @compare_versions@("3.1", "3.1.0") == 0
""",
    basic=(Case("('1.0', '2.0')"), Case("('4.2.1', '4.2.1')")),
    gen="""
def gen(rng):
    def version():
        return ".".join(str(rng.choice([0, 1, 2, 9, 10, 11])) for _ in range(rng.randint(1, 4)))
    return (version(), version())
""",
)
_kind(
    key="chunk",
    names=("chunk", "batched", "in_groups"),
    code='''
def @chunk@(items, size):
    """Split ``items`` into consecutive lists of ``size`` items; the last one may be shorter.

    Raises ValueError when ``size`` is smaller than 1. ``items`` is not modified.

    >>> @chunk@([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    return [list(items[i:i + size]) for i in range(0, len(items), size)]
''',
    bugs={
        "drops-last": (
            (
                "for i in range(0, len(items), size)]",
                "for i in range(0, len(items) - size + 1, size)]",
            ),
        ),
    },
    reveal={"drops-last": Case("(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 3)")},
    edges={
        "no-check": (
            ('    if size < 1:\n        raise ValueError("size must be at least 1")\n', ""),
        )
    },
    edge_tests="""
def test_@chunk@_rejects_zero():
    with pytest.raises(ValueError):
        @chunk@([1, 2], 0)
""",
    basic=(Case("([], 2)"), Case("([1, 2, 3, 4], 2)")),
    gen="""
def gen(rng):
    return ([rng.randint(0, 9) for _ in range(rng.randint(0, 12))], rng.randint(-1, 5))
""",
)
_kind(
    key="letter_grade",
    names=("letter_grade", "grade_for"),
    code='''
def @letter_grade@(score, cutoffs):
    """The grade for ``score``. ``cutoffs`` is a list of ``(minimum, grade)`` pairs in any order;
    the result is the grade of the highest minimum that ``score`` reaches (``score >= minimum``),
    or ``"F"`` when it reaches none.

    >>> @letter_grade@(80, [(90, "A"), (80, "B"), (70, "C")])
    'B'
    """
    for minimum, grade in sorted(cutoffs, reverse=True):
        if score >= minimum:
            return grade
    return "F"
''',
    bugs={
        "strict": (("if score >= minimum:", "if score > minimum:"),),
        "unsorted": (
            (
                "for minimum, grade in sorted(cutoffs, reverse=True):",
                "for minimum, grade in cutoffs:",
            ),
        ),
    },
    reveal={
        "strict": Case("(70, [(90, 'A'), (70, 'B'), (50, 'C')])"),
        "unsorted": Case("(95, [(60, 'C'), (90, 'A'), (75, 'B')])"),
    },
    edges={},
    edge_tests="",
    basic=(Case("(10, [(50, 'P')])"), Case("(100, [])")),
    gen="""
def gen(rng):
    grades = rng.sample([(90, "A"), (80, "B"), (70, "C"), (60, "D"), (85, "B+")], rng.randint(0, 5))
    return (rng.choice([rng.randint(40, 100), 60, 70, 80, 85, 90]), grades)
""",
)
# user kinds: they call a helper kind that lives in the other module
_kind(
    key="discounted",
    names=("discounted", "sale_price"),
    helper="percent_of",
    code='''
def @discounted@(price_cents, percent):
    """The price after a discount of ``percent`` %, in cents: the discount is ``percent`` % of
    the price, rounded half up to whole cents (see ``@percent_of@``).

    >>> @discounted@(1999, 15)
    1699
    """
    return price_cents - @percent_of@(price_cents, percent)
''',
    bugs={},
    reveal={"percent_of": Case("(650, 10)")},
    edges={},
    edge_tests="",
    basic=(Case("(1000, 0)"), Case("(2000, 50)")),
    gen="""
def gen(rng):
    return (rng.choice([rng.randint(0, 5000), rng.randint(0, 30) * 50]), rng.randint(0, 100))
""",
)
_kind(
    key="share_bill",
    names=("share_bill", "split_bill"),
    helper="split_evenly",
    code='''
def @share_bill@(total_cents, names):
    """Split a bill of ``total_cents`` between ``names`` (a non-empty list) as evenly as
    possible: a dict name -> share in cents, the shares adding up to the total; when it does
    not divide evenly, the names listed first pay one cent more.

    >>> @share_bill@(1000, ["ann", "bob", "cid"])
    {'ann': 334, 'bob': 333, 'cid': 333}
    """
    return dict(zip(names, @split_evenly@(total_cents, len(names))))
''',
    bugs={},
    reveal={"split_evenly": Case("(2003, ['kim', 'lou', 'max', 'ned'])")},
    edges={},
    edge_tests="",
    basic=(Case("(900, ['a', 'b', 'c'])"), Case("(5, ['solo'])")),
    gen="""
def gen(rng):
    names = rng.sample(["ann", "bob", "cid", "dee", "eve", "fay"], rng.randint(1, 6))
    return (rng.randint(0, 3000), names)
""",
)
_kind(
    key="free_minutes",
    names=("free_minutes", "idle_minutes"),
    helper="merge_intervals",
    code='''
def @free_minutes@(busy, day_start, day_end):
    """How many minutes between ``day_start`` and ``day_end`` are not covered by any of the
    ``busy`` intervals (half-open ``(start, end)`` pairs in minutes, in any order, possibly
    overlapping or reaching outside the day).

    >>> @free_minutes@([(60, 120), (90, 150)], 0, 480)
    390
    """
    free = day_end - day_start
    for start, end in @merge_intervals@(busy):
        free -= max(0, min(end, day_end) - max(start, day_start))
    return free
''',
    bugs={},
    reveal={"merge_intervals": Case("([(300, 360), (0, 60), (30, 90), (90, 100)], 0, 600)")},
    edges={},
    edge_tests="",
    basic=(Case("([], 0, 100)"), Case("([(10, 20)], 0, 100)")),
    gen="""
def gen(rng):
    busy = []
    for _ in range(rng.randint(0, 6)):
        a = rng.randint(0, 100)
        busy.append((a, a + rng.randint(0, 30)))
    lo = rng.randint(0, 50)
    return (busy, lo, lo + rng.randint(0, 90))
""",
)
_kind(
    key="total_seconds",
    names=("total_seconds", "sum_durations"),
    helper="parse_duration",
    code='''
def @total_seconds@(durations):
    """The total number of seconds of a list of durations written like ``"1h30m"`` (see
    ``@parse_duration@``).

    >>> @total_seconds@(["1h", "30m", "15s"])
    5415
    """
    return sum(@parse_duration@(text) for text in durations)
''',
    bugs={},
    reveal={"parse_duration": Case("(['10h', ' 20m', '11m '],)")},
    edges={},
    edge_tests="",
    basic=(Case("([],)"), Case("(['1h', '2m'],)")),
    gen="""
def gen(rng):
    def one():
        text = ""
        for unit in "hms":
            if rng.random() < 0.6:
                text += f"{rng.randint(0, 40)}{unit}"
        return rng.choice(["", " "]) + (text or "0s") + rng.choice(["", " "])
    return ([one() for _ in range(rng.randint(0, 5))],)
""",
)
_kind(
    key="summary",
    names=("summary", "describe"),
    helper="median",
    code='''
def @summary@(values):
    """``(minimum, median, maximum)`` of a non-empty list of numbers (see ``@median@``); the
    list is not modified.

    >>> @summary@([4, 1, 3])
    (1, 3, 4)
    """
    return min(values), @median@(values), max(values)
''',
    bugs={},
    reveal={
        "median": Case(
            "(marks,)",
            setup="marks = [8, 2, 6, 4, 9, 1]",
            post="assert marks == [8, 2, 6, 4, 9, 1]",
        )
    },
    edges={},
    edge_tests="",
    basic=(Case("([5],)"), Case("([1, 2, 3],)")),
    gen="""
def gen(rng):
    return ([rng.randint(-20, 20) for _ in range(rng.randint(1, 8))],)
""",
)
_kind(
    key="most_common",
    names=("most_common", "top_words"),
    helper="tally",
    code='''
def @most_common@(words, n):
    """The ``n`` most frequent words of ``words`` (counted like ``@tally@`` does), most frequent
    first; equal counts are ordered alphabetically.

    >>> @most_common@(["b", "a", "B", "c"], 2)
    ['b', 'a']
    """
    counts = @tally@(words)
    return sorted(counts, key=lambda word: (-counts[word], word))[:n]
''',
    bugs={},
    reveal={
        "tally": Case(
            "(['Owl', 'owl', 'bat', 'Cat'], 2)", setup="@most_common@(['bat', 'bat', 'cat'], 1)"
        )
    },
    edges={},
    edge_tests="",
    basic=(Case("([], 3)"), Case("(['x'], 1)")),
    gen="""
def gen(rng):
    pool = ["elk", "Elk", "fox", "gnu ", "GNU", "hen"]
    return ([rng.choice(pool) for _ in range(rng.randint(0, 8))], rng.randint(0, 4))
""",
)
_kind(
    key="latest",
    names=("latest", "newest_version"),
    helper="compare_versions",
    imports="import functools",
    code='''
def @latest@(versions):
    """The highest of a non-empty list of dotted version strings (compared like
    ``@compare_versions@`` does); of equal versions the one listed first.

    >>> @latest@(["1.9", "1.10", "1.2"])
    '1.10'
    """
    return max(versions, key=functools.cmp_to_key(@compare_versions@))
''',
    bugs={},
    reveal={"compare_versions": Case("(['3.9.1', '3.10.0', '3.2'],)")},
    edges={},
    edge_tests="",
    basic=(Case("(['1.0'],)"), Case("(['1.0', '2.0'],)")),
    gen="""
def gen(rng):
    def version():
        return ".".join(str(rng.choice([0, 1, 2, 9, 10])) for _ in range(rng.randint(1, 3)))
    return ([version() for _ in range(rng.randint(1, 5))],)
""",
)
_kind(
    key="grade_report",
    names=("grade_report", "grades_for"),
    helper="letter_grade",
    code='''
def @grade_report@(scores, cutoffs):
    """A dict name -> grade for ``scores`` (a dict name -> score), each graded like
    ``@letter_grade@`` does with ``cutoffs``.

    >>> @grade_report@({"ann": 91, "bob": 75}, [(90, "A"), (70, "B")])
    {'ann': 'A', 'bob': 'B'}
    """
    return {name: @letter_grade@(score, cutoffs) for name, score in scores.items()}
''',
    bugs={},
    reveal={"letter_grade": Case("({'ivy': 80, 'jon': 95}, [(60, 'C'), (95, 'A'), (80, 'B')])")},
    edges={},
    edge_tests="",
    basic=(Case("({}, [(50, 'P')])"), Case("({'a': 10}, [(50, 'P')])")),
    gen="""
def gen(rng):
    cut = rng.sample([(90, "A"), (80, "B"), (70, "C")], rng.randint(0, 3))
    names = rng.sample(["ann", "bob", "cid", "dee"], rng.randint(0, 4))
    return ({n: rng.choice([rng.randint(50, 100), 70, 80, 90]) for n in names}, cut)
""",
)
