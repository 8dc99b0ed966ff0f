"""Program mutation on real source (SWE-smith style bug injection), by AST, deterministic.

:func:`find_sites` lists every place in one module where an operator can plant a bug: a swapped
arithmetic or boolean operator, a comparison moved across its boundary (off-by-one), a negated
condition, a removed statement or return, swapped call arguments, a wrong constant, a shifted
slice bound. Each :class:`Site` is a minimal *text* edit (a span of the original file and its
replacement), so a mutant differs from the original by a few characters and keeps every
comment and blank line - the diff a person would have to find. Only code inside functions is
mutated (module and class bodies run at import, where a bug breaks everything at once).
"""

from __future__ import annotations

import ast
import hashlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from factory.errors import RecipeError
from factory.families.terminal.words import WordTable

ENGINE_VERSION = 1
"""Bumped whenever a site's id or edit could change: cached screening results key on it."""


class Operator(str, Enum):
    """The kinds of planted bug."""

    BINOP = "binop"
    """An arithmetic or bitwise operator swapped (+ for -, // for *, ...)."""
    COMPARE = "compare"
    """A comparison across its boundary (< for <=) or inverted (== for !=, in for not in)."""
    NEGATE = "negate"
    """A condition negated (if x -> if not (x)), or its negation dropped."""
    BOOLOP = "boolop"
    """``and`` for ``or`` and back."""
    REMOVE = "remove"
    """A statement (call, assignment, return, ...) replaced by ``pass``."""
    SWAP_ARGS = "swap-args"
    """The first two positional arguments of a call swapped."""
    CONSTANT = "constant"
    """A number one off, or a boolean flipped."""
    SLICE = "slice"
    """A slice bound shifted by one."""


SUBTLE = frozenset({Operator.COMPARE, Operator.CONSTANT, Operator.SLICE, Operator.BINOP})
"""Operators whose bugs rarely crash: the code runs and returns a slightly wrong answer."""

_OPERATORS = WordTable(Path(__file__).parent / "operators.toml")


def _swaps(name: str) -> dict[type, tuple[str, str]]:
    """The table ``name`` of operators.toml keyed by the ``ast`` node classes it names."""
    swaps = _OPERATORS.typed(name, dict[str, tuple[str, str]])
    unknown = [op for op in swaps if not isinstance(getattr(ast, op, None), type)]
    if unknown:
        raise RecipeError(f"{_OPERATORS.path}: {name}: no ast node class {unknown[0]!r}")
    return {getattr(ast, op): pair for op, pair in swaps.items()}


_BINOPS = _swaps("binops")
_COMPARES = _swaps("compares")
_SKIP_FUNCTIONS = frozenset({"__repr__", "__str__", "__format__", "__dir__", "__del__"})


@dataclass(frozen=True)
class Site:
    """One planted bug: replace ``original`` (the text between the two positions) by
    ``replacement``. Positions are 1-based lines and 0-based character columns."""

    path: str
    """Module path relative to the project root, e.g. 'more_itertools/more.py'."""
    operator: Operator
    line: int
    col: int
    end_line: int
    end_col: int
    original: str
    replacement: str
    function: str
    """Qualified name of the enclosing function, as in ``code.co_qualname``."""

    @property
    def id(self) -> str:
        """Stable id: where, what kind, and a digest of the edit."""
        digest = hashlib.sha256(f"{self.original}\0{self.replacement}".encode()).hexdigest()[:8]
        return f"{self.path}:{self.line}:{self.col}:{self.operator.value}:{digest}"

    def describe(self) -> str:
        return (
            f"{self.operator.value} in {self.function}: {self.original!r} -> {self.replacement!r}"
        )


class MutationError(ValueError):
    """A site does not apply to the text it is given (overlapping or stale edits)."""


def _offsets(text: str) -> list[int]:
    starts, total = [0], 0
    for line in text.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def apply_sites(text: str, sites: list[Site]) -> str:
    """``text`` with every site's edit applied (sites of one file, non-overlapping)."""
    starts = _offsets(text)
    spans = []
    for site in sites:
        begin = starts[site.line - 1] + site.col
        end = starts[site.end_line - 1] + site.end_col
        if text[begin:end] != site.original:
            raise MutationError(f"{site.id}: the source does not hold {site.original!r} there")
        spans.append((begin, end, site.replacement))
    spans.sort()
    for (_, end, _), (begin, _, _) in zip(spans, spans[1:], strict=False):
        if begin < end:
            raise MutationError("overlapping mutation sites")
    for begin, end, replacement in reversed(spans):
        text = text[:begin] + replacement + text[end:]
    return text


def compiles(text: str, path: str = "<mutant>") -> bool:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = _offsets(text)
        self.scope: list[str] = []
        self.function: str | None = None
        self.sites: list[Site] = []

    # --- helpers ------------------------------------------------------------------------
    def _segment(self, line: int, col: int, end_line: int, end_col: int) -> str:
        return self.text[self.starts[line - 1] + col : self.starts[end_line - 1] + end_col]

    def _add(self, op: Operator, node_span: tuple[int, int, int, int], new: str) -> None:
        if self.function is None:
            return
        original = self._segment(*node_span)
        if not original or original == new:
            return
        self.sites.append(Site(self.path, op, *node_span, original, new, self.function))

    @staticmethod
    def _span(node: ast.AST) -> tuple[int, int, int, int]:
        return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def _token_between(
        self, left: ast.AST, right: ast.AST, token: str
    ) -> tuple[int, int, int, int] | None:
        """Span of ``token`` in the gap between two nodes (outside parentheses' content)."""
        begin = self.starts[left.end_lineno - 1] + left.end_col_offset  # type: ignore[attr-defined]
        end = self.starts[right.lineno - 1] + right.col_offset  # type: ignore[attr-defined]
        gap = self.text[begin:end]
        if "#" in gap or "\\" in gap:
            return None
        index = -1
        for i in range(len(gap) - len(token) + 1):
            if gap[i : i + len(token)] != token:
                continue
            before = gap[i - 1] if i else " "
            after = gap[i + len(token)] if i + len(token) < len(gap) else " "
            if token.isalpha() or " " in token:
                if before.isalnum() or after.isalnum():
                    continue
            elif before in "<>=!*/&|" or after in "<>=!*/&|":
                continue
            index = i
            break
        if index < 0:
            return None
        pos = begin + index
        return self._pos(pos) + self._pos(pos + len(token))

    def _pos(self, offset: int) -> tuple[int, int]:
        # the line whose start is the last one <= offset
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo]

    # --- scopes ---------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:  # noqa: N802
        self.scope.append(node.name)
        outer, self.function = self.function, None  # class bodies run at import
        for item in node.body:
            self.visit(item)
        self.function = outer
        self.scope.pop()

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qualname = ".".join([*self.scope, node.name])
        self.scope += [node.name, "<locals>"]
        outer = self.function
        self.function = None if node.name in _SKIP_FUNCTIONS else qualname
        body = node.body
        if body and _is_docstring(body[0]):
            body = body[1:]
        self._block(body)
        self.function = outer
        self.scope = self.scope[:-2]

    visit_FunctionDef = _visit_function  # noqa: N815
    visit_AsyncFunctionDef = _visit_function  # noqa: N815

    def _block(self, body: list[ast.stmt]) -> None:
        """A statement list: each statement may be removed (when it is not alone)."""
        for stmt in body:
            if (
                len(body) > 1
                and self.function is not None
                and isinstance(stmt, ast.Expr | ast.Assign | ast.AugAssign | ast.Return)
                and not _is_docstring(stmt)
                and stmt.lineno == stmt.end_lineno
            ):
                self._add(Operator.REMOVE, self._span(stmt), "pass")
            self.visit(stmt)

    def generic_visit(self, node: ast.AST) -> None:
        for _name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                if not (isinstance(node, ast.If) and _is_type_checking(node)):
                    self._block(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    # --- operators ------------------------------------------------------------------------
    def visit_Assert(self, node: ast.Assert) -> None:  # noqa: N802
        return  # assertions guard invariants; a bug there only changes error paths

    def visit_Raise(self, node: ast.Raise) -> None:  # noqa: N802
        return  # error messages: nothing a test of behaviour would see

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:  # noqa: N802
        return  # f-strings: positions inside them are unreliable across Python versions

    def visit_BinOp(self, node: ast.BinOp) -> None:  # noqa: N802
        pair = _BINOPS.get(type(node.op))
        if pair and not _is_string(node.left) and not _is_string(node.right):
            span = self._token_between(node.left, node.right, pair[0])
            if span:
                self._add(Operator.BINOP, span, pair[1])
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:  # noqa: N802
        pair = _BINOPS.get(type(node.op))
        if pair and not _is_string(node.value):
            span = self._token_between(node.target, node.value, pair[0] + "=")
            if span:
                self._add(Operator.BINOP, span, pair[1] + "=")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:  # noqa: N802
        token, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        span = self._token_between(node.values[0], node.values[1], token)
        if span:
            self._add(Operator.BOOLOP, span, other)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:  # noqa: N802
        pair = _COMPARES.get(type(node.ops[0]))
        if pair:
            token = pair[0]
            span = self._token_between(node.left, node.comparators[0], token)
            if span is None and " " in token:  # 'not in' / 'is not' written with more spaces
                span = None
            if span:
                self._add(Operator.COMPARE, span, pair[1])
        self.generic_visit(node)

    def _negate(self, test: ast.expr) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._segment(*self._span(test.operand))
            self._add(Operator.NEGATE, self._span(test), inner)
        elif test.lineno == test.end_lineno:
            text = self._segment(*self._span(test))
            simple = isinstance(test, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
            self._add(
                Operator.NEGATE, self._span(test), f"not {text}" if simple else f"not ({text})"
            )

    def visit_If(self, node: ast.If) -> None:  # noqa: N802
        if _is_type_checking(node) or _is_main_guard(node):
            return
        self._negate(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:  # noqa: N802
        if not (isinstance(node.test, ast.Constant)):
            self._negate(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:  # noqa: N802
        self._negate(node.test)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802
        args = node.args
        if (
            len(args) >= 2
            and not any(isinstance(a, ast.Starred) for a in args[:2])
            and args[0].lineno == args[1].end_lineno
        ):
            first = self._segment(*self._span(args[0]))
            second = self._segment(*self._span(args[1]))
            if first != second:
                gap = self._segment(
                    args[0].end_lineno, args[0].end_col_offset, args[1].lineno, args[1].col_offset
                )
                span = (
                    args[0].lineno,
                    args[0].col_offset,
                    args[1].end_lineno,
                    args[1].end_col_offset,
                )
                self._add(Operator.SWAP_ARGS, span, second + gap + first)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:  # noqa: N802
        value = node.value
        if isinstance(value, bool):
            self._add(Operator.CONSTANT, self._span(node), str(not value))
        elif isinstance(value, int) and self._segment(*self._span(node)).isdigit():
            self._add(Operator.CONSTANT, self._span(node), str(value + 1 if value != 1 else 0))

    def visit_Slice(self, node: ast.Slice) -> None:  # noqa: N802
        for bound, delta in ((node.lower, "+ 1"), (node.upper, "- 1")):
            if bound is None:
                continue
            text = self._segment(*self._span(bound))
            if isinstance(bound, ast.Constant) and isinstance(bound.value, int):
                continue  # a constant bound is already a CONSTANT site
            if isinstance(bound, ast.Name | ast.Attribute | ast.Call | ast.Subscript):
                self._add(Operator.SLICE, self._span(bound), f"{text} {delta}")
            elif bound.lineno == bound.end_lineno:
                self._add(Operator.SLICE, self._span(bound), f"({text}) {delta}")
        self.generic_visit(node)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)
    )


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
    return name == "TYPE_CHECKING"


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def find_sites(path: str, text: str) -> list[Site]:
    """Every mutation site of one module, in source order; [] when it does not parse here.
    A site's mutant is not compiled here (that is the caller's check, on the few it keeps)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ast.parse(text, path)
    except (SyntaxError, ValueError):
        return []
    finder = _Finder(path, text)
    finder.visit(tree)
    seen: set[str] = set()
    out = []
    for site in sorted(
        finder.sites, key=lambda s: (s.line, s.col, s.operator.value, s.replacement)
    ):
        if site.id in seen:
            continue
        seen.add(site.id)
        out.append(site)
    return out


def iter_project_sites(sources: dict[str, str]) -> Iterator[Site]:
    """Sites of every module of a project (``sources``: path -> text), by path."""
    for path in sorted(sources):
        yield from find_sites(path, sources[path])


def mutant_sources(sources: dict[str, str], sites: list[Site]) -> dict[str, str]:
    """The files ``sites`` change, mutated (path -> new text)."""
    by_path: dict[str, list[Site]] = {}
    for site in sites:
        by_path.setdefault(site.path, []).append(site)
    return {path: apply_sites(sources[path], group) for path, group in sorted(by_path.items())}
