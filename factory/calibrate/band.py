"""The pass-rate band and what it says about a task.

* ``in-band``  — ``low <= pass_rate <= high``: the policy solves it sometimes; it stays.
* ``too-easy`` — ``pass_rate > high``, and always ``pass_rate == 1`` whatever the band (a task
  the policy always solves gives GRPO no signal): retired.
* ``too-hard`` — ``pass_rate < low``: kept and flagged by default (the policy may grow into
  it, and a weak policy would otherwise empty the suite); ``--retire-too-hard`` retires it.
"""

from __future__ import annotations

from dataclasses import dataclass

from factory.errors import FactoryError

IN_BAND = "in-band"
TOO_EASY = "too-easy"
TOO_HARD = "too-hard"
HISTOGRAM_EDGES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


@dataclass(frozen=True)
class Band:
    low: float
    high: float

    @classmethod
    def parse(cls, text: str) -> Band:
        """'0.1,0.7' -> Band(0.1, 0.7)."""
        parts = [p.strip() for p in text.split(",")]
        try:
            low, high = (float(p) for p in parts)
        except ValueError:
            raise FactoryError(f"--band must be LOW,HIGH such as 0.1,0.7, not {text!r}") from None
        if not 0.0 <= low <= high <= 1.0:
            raise FactoryError(f"--band {text}: need 0 <= LOW <= HIGH <= 1")
        return cls(low, high)

    def verdict(self, pass_rate: float) -> str:
        if pass_rate >= 1.0 or pass_rate > self.high:
            return TOO_EASY
        if pass_rate < self.low:
            return TOO_HARD
        return IN_BAND

    def __str__(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"


def retires(verdict: str, *, retire_too_hard: bool = False) -> bool:
    return verdict == TOO_EASY or (retire_too_hard and verdict == TOO_HARD)


def histogram(rates: list[float], edges: tuple[float, ...] = HISTOGRAM_EDGES) -> list[int]:
    """Counts per bin [e0, e1), [e1, e2), ..., [e_{n-1}, e_n] (the last bin is closed)."""
    counts = [0] * (len(edges) - 1)
    for rate in rates:
        for index in range(len(counts)):
            last = index == len(counts) - 1
            if edges[index] <= rate < edges[index + 1] or (last and rate == edges[-1]):
                counts[index] += 1
                break
    return counts


def bin_labels(edges: tuple[float, ...] = HISTOGRAM_EDGES) -> list[str]:
    labels = [f"[{a:.1f}, {b:.1f})" for a, b in zip(edges[:-1], edges[1:], strict=True)]
    labels[-1] = labels[-1][:-1] + "]"
    return labels


def share_in_band(rates: list[float], band: Band) -> float:
    return sum(band.verdict(r) == IN_BAND for r in rates) / len(rates) if rates else 0.0
