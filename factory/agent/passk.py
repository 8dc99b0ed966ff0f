"""pass@k and pass^k: one task's estimators from n scored trials with c successes, and their
mean over tasks. Exact arithmetic (integer binomials, a :class:`~fractions.Fraction`), a float
only at the end.

* pass@k — the probability that at least one of k i.i.d. trials succeeds (capability):
  ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021).
* pass^k — the probability that all k i.i.d. trials succeed (reliability, tau-bench):
  ``C(c, k) / C(n, k)``.

Both are unbiased for ``1 <= k <= n``; for ``k > n`` there is no such estimate, so
:func:`pass_at_k` and :func:`pass_hat_k` raise :class:`~factory.errors.TooFewTrialsError`
and :func:`over_tasks` leaves such a task out and says so (a figure over no task is None:
"not shown"), never a silent wrong figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from math import comb

from factory.errors import FactoryError, TooFewTrialsError


class Metric(str, Enum):
    """Which estimator."""

    PASS_AT = "pass_at"
    """pass@k: at least one of k trials succeeds."""
    PASS_HAT = "pass_hat"
    """pass^k: all k trials succeed."""

    def key(self, k: int) -> str:
        """The JSON field, e.g. ``pass_at_4``, ``pass_hat_4``."""
        return f"{self.value}_{k}"

    def label(self, k: int) -> str:
        """The table heading, e.g. ``pass@4``, ``pass^4``."""
        return f"pass{'@' if self is Metric.PASS_AT else '^'}{k}"


def _check(n: int, c: int, k: int) -> None:
    if k < 1:
        raise FactoryError(f"k must be at least 1, not {k}")
    if n < 0 or not 0 <= c <= n:
        raise FactoryError(f"successes must lie in 0..n, got c={c} of n={n}")
    if k > n:
        raise TooFewTrialsError(n, k)


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """pass@k of one task as an exact fraction."""
    _check(n, c, k)
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction:
    """pass^k of one task as an exact fraction."""
    _check(n, c, k)
    return Fraction(comb(c, k), comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one task from n scored trials with c successes (k <= n)."""
    return float(pass_at_k_exact(n, c, k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one task from n scored trials with c successes (k <= n)."""
    return float(pass_hat_k_exact(n, c, k))


ESTIMATORS = {Metric.PASS_AT: pass_at_k_exact, Metric.PASS_HAT: pass_hat_k_exact}


@dataclass(frozen=True)
class Trials:
    """One task's scored trials."""

    n: int
    """Trials scored (infrastructure losses left out)."""
    c: int
    """Of them, successes."""


@dataclass(frozen=True)
class OverTasks:
    """A metric's mean over the tasks that have at least k scored trials."""

    value: float | None
    """The mean; None when no task has k trials (not shown, never 0)."""
    tasks: int
    """Tasks counted."""
    short: int
    """Tasks left out: fewer than k scored trials."""


def over_tasks(metric: Metric, trials: list[Trials], k: int) -> OverTasks:
    """The mean of ``metric`` over tasks (exact, then a float); tasks with fewer than k scored
    trials are left out and counted in ``short``."""
    if k < 1:
        raise FactoryError(f"k must be at least 1, not {k}")
    counted = [t for t in trials if t.n >= k]
    if not counted:
        return OverTasks(None, 0, len(trials))
    total = sum((ESTIMATORS[metric](t.n, t.c, k) for t in counted), Fraction(0))
    return OverTasks(float(total / len(counted)), len(counted), len(trials) - len(counted))


def shown(value: float | None, digits: int = 3) -> str:
    """A table cell: the value, or ``-`` when it is not shown (too few trials)."""
    return "-" if value is None else f"{value:.{digits}f}"
