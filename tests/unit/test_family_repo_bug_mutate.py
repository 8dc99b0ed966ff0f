"""The repo-bug mutation engine: every operator, minimal text edits, determinism, compiling
mutants, and refusal of stale or overlapping edits."""

from __future__ import annotations

import pytest

from factory.families.terminal.repo_bug.mutate import (
    MutationError,
    Operator,
    apply_sites,
    compiles,
    find_sites,
    mutant_sources,
)

MODULE = '''"""A module."""

import math

LIMIT = 10  # module level: never mutated


class Box:
    size = 3  # class body: never mutated

    def grow(self, n):
        """Docstring."""
        total = self.size + n  # a comment stays
        if total > LIMIT and n:
            return LIMIT
        self.size = total
        return total

    def __repr__(self):
        return f"Box({self.size + 1})"


def window(items, k=2):
    out = []
    for i in range(len(items) - k + 1):
        out.append(items[i:i + k])
    while not out:
        out = [items[:k]]
    return out if out else None


def pick(a, b):
    return max(a, b) if a is not None else b


def flags():
    return [True, x in (1, 2)] if (x := 3) else []
'''


def sites_by(op: Operator):
    return [s for s in find_sites("pkg/mod.py", MODULE) if s.operator is op]


def test_every_operator_finds_its_sites():
    found = {s.operator for s in find_sites("pkg/mod.py", MODULE)}
    assert found == set(Operator)


@pytest.mark.parametrize(
    ("op", "original", "replacement"),
    [
        (Operator.BINOP, "+", "-"),
        (Operator.COMPARE, ">", ">="),
        (Operator.COMPARE, "is not", "is"),
        (Operator.COMPARE, "in", "not in"),
        (Operator.NEGATE, "total > LIMIT and n", "not (total > LIMIT and n)"),
        (Operator.NEGATE, "not out", "out"),
        (Operator.BOOLOP, "and", "or"),
        (Operator.REMOVE, "self.size = total", "pass"),
        (Operator.REMOVE, "return LIMIT", None),  # alone in its block: not removable
        (Operator.SWAP_ARGS, "a, b", "b, a"),
        (Operator.CONSTANT, "2", "3"),
        (Operator.CONSTANT, "1", "0"),
        (Operator.CONSTANT, "True", "False"),
        (Operator.SLICE, "i + k", "(i + k) - 1"),
        (Operator.SLICE, "i", "i + 1"),
    ],
)
def test_operator_edits(op, original, replacement):
    pairs = {(s.original, s.replacement) for s in sites_by(op)}
    if replacement is None:
        assert not any(o == original for o, _ in pairs)
    else:
        assert (original, replacement) in pairs


def test_only_code_inside_functions_is_mutated():
    sites = find_sites("pkg/mod.py", MODULE)
    lines = {s.line for s in sites}
    text = MODULE.splitlines()
    for number, line in enumerate(text, 1):
        if line.startswith(("LIMIT", "    size", "import")) or "__repr__" in line:
            assert number not in lines
    assert not any(s.function == "Box.__repr__" for s in sites)
    assert {s.function for s in sites} >= {"Box.grow", "window", "pick", "flags"}


def test_each_mutant_is_a_minimal_edit_that_compiles():
    for site in find_sites("pkg/mod.py", MODULE):
        mutant = apply_sites(MODULE, [site])
        assert mutant != MODULE
        assert compiles(mutant), site.describe()
        changed = [
            (a, b) for a, b in zip(MODULE.splitlines(), mutant.splitlines(), strict=True) if a != b
        ]
        assert len(changed) == 1, site.describe()  # one line, comments and layout kept
        assert "# a comment stays" in mutant


def test_sites_are_deterministic_and_ids_unique():
    first = find_sites("pkg/mod.py", MODULE)
    second = find_sites("pkg/mod.py", MODULE)
    assert first == second
    assert len({s.id for s in first}) == len(first)
    assert all(s.id.startswith("pkg/mod.py:") for s in first)


def test_several_sites_apply_together_and_stale_or_overlapping_ones_are_refused():
    binop = sites_by(Operator.BINOP)[0]
    remove = next(s for s in sites_by(Operator.REMOVE) if s.original == "self.size = total")
    both = apply_sites(MODULE, [remove, binop])
    assert "self.size - n" in both and "        pass\n        return total" in both
    with pytest.raises(MutationError):
        apply_sites(apply_sites(MODULE, [binop]), [binop])  # already applied: stale
    negate = next(s for s in sites_by(Operator.NEGATE) if "total > LIMIT" in s.original)
    boolop = sites_by(Operator.BOOLOP)[0]
    with pytest.raises(MutationError):
        apply_sites(MODULE, [negate, boolop])  # the boolop sits inside the negated test
    files = mutant_sources({"pkg/mod.py": MODULE, "pkg/other.py": "x = 1\n"}, [binop])
    assert list(files) == ["pkg/mod.py"]


def test_unparsable_source_has_no_sites():
    assert find_sites("bad.py", "def f(:\n") == []
