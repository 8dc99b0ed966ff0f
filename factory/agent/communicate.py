"""Checks on what the agent communicates: each :class:`~factory.tasks.user_profile.RequiredFact`
must appear in what the agent told the customer (its ``say`` messages in an episode with a
simulated user, its ``reply.md`` in a container). Matching is case-insensitive with whitespace
collapsed, so "HAT 1234" and "hat 1234" count and a fact split across messages does not."""

from __future__ import annotations

import re
from dataclasses import dataclass

from factory.tasks.user_profile import RequiredFact


@dataclass(frozen=True)
class CommunicateResult:
    """The check's verdict."""

    missing: list[str]
    """The facts (their ``fact`` words) the agent never told the customer."""

    @property
    def passed(self) -> bool:
        return not self.missing

    def explain(self) -> str:
        if self.passed:
            return "the customer was told every required fact"
        return "the customer was never told: " + "; ".join(self.missing)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def check_communicated(required: list[RequiredFact], said: list[str]) -> CommunicateResult:
    """Which ``required`` facts appear in none of the messages ``said`` to the customer."""
    messages = [_norm(m) for m in said]
    missing = [
        r.fact
        for r in required
        if not any(_norm(v) and _norm(v) in m for v in r.any_of for m in messages)
    ]
    return CommunicateResult(missing)
