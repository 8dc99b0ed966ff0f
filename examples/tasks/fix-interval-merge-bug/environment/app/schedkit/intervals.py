"""Half-open integer intervals ``(start, end)`` with ``start <= end``, e.g. minutes of a day.

An interval ``(a, b)`` covers every point ``x`` with ``a <= x < b``. Two intervals that overlap
or touch (one ends exactly where the other starts) cover one contiguous range.
"""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[int, int]


def _check(interval: Interval) -> Interval:
    start, end = interval
    if start > end:
        raise ValueError(f"interval {interval!r} ends before it starts")
    return int(start), int(end)


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Return the union of ``intervals`` as a sorted list of disjoint, non-touching intervals.

    The input may be in any order and may contain overlapping, touching, nested, duplicate or
    empty (``start == end``) intervals. Empty intervals cover nothing and are dropped. The input
    is not modified. Raises ValueError for an interval whose end is before its start.

    >>> merge([(5, 8), (1, 3), (2, 4)])
    [(1, 4), (5, 8)]
    >>> merge([(1, 2), (2, 3)])
    [(1, 3)]
    """
    result: list[list[int]] = []
    for start, end in (_check(i) for i in intervals):
        if start == end:
            continue
        if result and start < result[-1][1]:
            result[-1][1] = max(result[-1][1], end)
        else:
            result.append([start, end])
    return [(start, end) for start, end in result]


def total_length(intervals: Iterable[Interval]) -> int:
    """The number of points covered by at least one interval (overlaps count once).

    >>> total_length([(0, 10), (5, 15)])
    15
    """
    return sum(end - start for start, end in merge(intervals))


def free_slots(busy: Iterable[Interval], window: Interval) -> list[Interval]:
    """The parts of ``window`` not covered by any ``busy`` interval, sorted, as merged intervals.

    >>> free_slots([(10, 20), (30, 40)], (0, 50))
    [(0, 10), (20, 30), (40, 50)]
    """
    lo, hi = _check(window)
    free: list[Interval] = []
    cursor = lo
    for start, end in merge(busy):
        if end <= cursor:
            continue
        if start >= hi:
            break
        if start > cursor:
            free.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < hi:
        free.append((cursor, hi))
    return free
