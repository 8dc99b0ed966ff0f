"""Difficulty knobs and draws shared by terminal families: a level number, a kind drawn per
level, a value picked per level, a value drawn until it is new."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from factory.vocabulary import Difficulty


def level_of(difficulty: Difficulty) -> int:
    """0, 1 or 2 for easy, medium or hard."""
    return {"easy": 0, "medium": 1, "hard": 2}[difficulty.value]


def spread(rng: random.Random, kinds: list[str], level: int) -> str:
    """A kind drawn from rng, shifted by the level so one seed spans several kinds."""
    return kinds[(rng.randrange(len(kinds)) + level) % len(kinds)]


def level_and_kind(
    rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any], kinds: Mapping[str, Any]
) -> tuple[int, str]:
    """The level of ``difficulty`` and the task's kind: ``params["kind"]`` when given, else one
    of ``kinds`` drawn with :func:`spread` (no draw then)."""
    level = level_of(difficulty)
    return level, params.get("kind") or spread(rng, sorted(kinds), level)


def pick(rng: random.Random, level: Difficulty, easy: Any, medium: Any, hard: Any) -> Any:
    """The value for ``level``; a ``(low, high)`` tuple means a random integer in that range."""
    value = {Difficulty.EASY: easy, Difficulty.MEDIUM: medium, Difficulty.HARD: hard}[level]
    return rng.randint(*value) if isinstance(value, tuple) else value


T = TypeVar("T")


def fresh(draw: Callable[[], T], taken: set[T]) -> T:
    """``draw()`` again until it gives a value not in ``taken``; that value, added to it."""
    while True:
        value = draw()
        if value not in taken:
            taken.add(value)
            return value
