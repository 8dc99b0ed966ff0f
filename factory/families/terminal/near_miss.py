"""Near misses: the family's reference solution with one fault (or sub-problem) left undone.

Terminal families draw faults into their grammar and write their reference
(``solution/solve.sh.j2``) so that one template variable names a fault to leave as it is;
certification runs each such rendering as a wrong solution that must score 0."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from factory.families.base import Family


def near_misses(
    family: Family,
    context: Mapping[str, Any],
    faults: Iterable[str],
    *,
    name: str = "unfixed-{}",
    key: str = "slip",
    value: str = "{}",
    each: Callable[[str], Mapping[str, Any]] = lambda _fault: {},
    **more: Any,
) -> dict[str, str]:
    """One near miss per fault, named ``name`` (formatted with the fault): the reference
    rendered with ``context``, ``more`` and ``each(fault)`` (the values that depend on the
    fault left undone), and the template variable ``key`` set to ``value`` formatted with the
    fault."""
    solve = family.template("solution/solve.sh.j2")
    return {
        name.format(f): solve.render({**context, **each(f), **more, key: value.format(f)})
        for f in faults
    }
