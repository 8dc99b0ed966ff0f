"""Held-out tests: remove test functions from a test file, and put them back exactly.

The agent sees the file without the hidden tests; the verifier holds only the removed blocks
and where they go (``inserts``), rebuilds the original file (``restore`` in the task's
``tests/verify.py``) and checks its digest. So a task's
``tests/`` carries a few functions, not the project's whole test suite.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

from .report import parse


@dataclass(frozen=True)
class Hidden:
    """A test file with some test functions taken out."""

    path: str
    visible: str
    """The file as the agent sees it."""
    inserts: list[tuple[int, str]]
    """(line index in the original, removed text), ascending: put back in this order."""
    original_sha256: str
    hidden: list[str]
    """Function-level ids of the tests taken out."""


def _blocks(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef, list[ast.stmt]]]:
    """Test functions by their id suffix ('test_x' or 'TestC::test_x'), with their body."""
    out: dict[str, tuple[ast.FunctionDef, list[ast.stmt]]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out[node.name] = (node, tree.body)  # type: ignore[assignment]
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    out[f"{node.name}::{item.name}"] = (item, node.body)  # type: ignore[assignment]
    return out


def hideable(path: str, text: str, test_ids: list[str]) -> list[str]:
    """The function-level ids among ``test_ids`` (all in ``path``) that can be taken out
    together: plain test functions referenced nowhere else in the file, leaving at least one
    statement in each class."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return []
    blocks = _blocks(tree)
    out = []
    taken: dict[int, int] = {}
    for test_id in sorted(set(test_ids)):
        suffix = test_id.split("::", 1)[1] if "::" in test_id else ""
        found = blocks.get(suffix)
        if found is None:
            continue
        node, siblings = found
        if not node.name.startswith("test"):
            continue
        if len(re.findall(rf"\b{re.escape(node.name)}\b", text)) != 1:
            continue
        left = len([s for s in siblings if not _is_docstring(s)]) - taken.get(id(siblings), 0)
        if "::" in suffix and left < 2:
            continue
        taken[id(siblings)] = taken.get(id(siblings), 0) + 1
        out.append(test_id)
    return out


def hide(path: str, text: str, test_ids: list[str]) -> Hidden:
    """``text`` without the test functions ``test_ids`` (ids must be :func:`hideable`)."""
    tree = parse(text)
    blocks = _blocks(tree)
    lines = text.splitlines(keepends=True)
    spans = []
    taken: dict[str, list[ast.stmt]] = {}
    for test_id in sorted(set(test_ids)):
        node, siblings = blocks[test_id.split("::", 1)[1]]
        group = taken.setdefault(str(id(siblings)), [])
        group.append(node)
        if len([s for s in siblings if not _is_docstring(s)]) - len(group) < 1:
            raise ValueError(f"{test_id}: cannot empty its class")
        start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        while start > 0 and not lines[start - 1].strip():
            start -= 1  # the blank lines before it go with it, so no gap is left
        spans.append((start, node.end_lineno))
    spans.sort()
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise ValueError("overlapping test functions")
    inserts = [(start, "".join(lines[start:end])) for start, end in spans]
    visible = []
    cursor = 0
    for start, end in spans:
        visible += lines[cursor:start]
        cursor = end
    visible += lines[cursor:]
    return Hidden(
        path=path,
        visible="".join(visible),
        inserts=inserts,
        original_sha256=hashlib.sha256(text.encode()).hexdigest(),
        hidden=sorted(set(test_ids)),
    )


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
