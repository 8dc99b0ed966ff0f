"""pass@k and pass^k: hand-computed values, the edges (k = n, k > n, c = 0, c = n), the mean
over tasks, and how ``factory eval``'s summary and ``factory calibrate`` report them."""

from __future__ import annotations

import io
from fractions import Fraction
from math import comb

import pytest
from rich.console import Console

from factory.agent.evaluation import TaskScore, summarise
from factory.agent.passk import (
    Metric,
    Trials,
    over_tasks,
    pass_at_k,
    pass_at_k_exact,
    pass_hat_k,
    pass_hat_k_exact,
    shown,
)
from factory.errors import FactoryError, TooFewTrialsError


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        # 1 - C(3,2)/C(5,2) = 1 - 3/10 ; C(2,2)/C(5,2) = 1/10
        (5, 2, 2, Fraction(7, 10), Fraction(1, 10)),
        # 1 - C(3,3)/C(10,3) = 1 - 1/120 ; C(7,3)/C(10,3) = 35/120
        (10, 7, 3, Fraction(119, 120), Fraction(7, 24)),
        # k = 1: both are c/n
        (4, 3, 1, Fraction(3, 4), Fraction(3, 4)),
        # 1 - C(4,2)/C(6,2) = 1 - 6/15 ; C(2,2)/C(6,2) = 1/15
        (6, 2, 2, Fraction(3, 5), Fraction(1, 15)),
        # k = n: pass@n is "any succeeded", pass^n is "all succeeded"
        (4, 1, 4, Fraction(1), Fraction(0)),
        (4, 4, 4, Fraction(1), Fraction(1)),
        # no success, every success
        (8, 0, 3, Fraction(0), Fraction(0)),
        (8, 8, 3, Fraction(1), Fraction(1)),
        # c < k: pass^k is 0; n - c < k: pass@k is 1
        (5, 1, 2, Fraction(1) - Fraction(comb(4, 2), comb(5, 2)), Fraction(0)),
        (5, 4, 2, Fraction(1), Fraction(comb(4, 2), comb(5, 2))),
    ],
)
def test_hand_computed_values(n, c, k, at, hat):
    assert pass_at_k_exact(n, c, k) == at
    assert pass_hat_k_exact(n, c, k) == hat
    assert pass_at_k(n, c, k) == float(at)
    assert pass_hat_k(n, c, k) == float(hat)
    assert pass_hat_k_exact(n, c, k) <= Fraction(c, n) <= pass_at_k_exact(n, c, k)


def test_exact_where_floats_would_underflow_a_ratio_of_products():
    # 1 / C(100, 50) ~ 9.9e-30, exact as a fraction
    assert pass_hat_k_exact(100, 50, 50) == Fraction(1, comb(100, 50))
    assert pass_at_k_exact(100, 50, 51) == 1
    assert pass_hat_k(100, 50, 50) == pytest.approx(1 / comb(100, 50), rel=1e-12)


def test_k_above_n_is_a_named_error_not_a_figure():
    with pytest.raises(TooFewTrialsError, match=r"pass@5/pass\^5 need at least 5 .* has 3"):
        pass_at_k(3, 3, 5)
    with pytest.raises(TooFewTrialsError) as caught:
        pass_hat_k(3, 0, 4)
    assert (caught.value.n, caught.value.k) == (3, 4)
    with pytest.raises(TooFewTrialsError):
        pass_hat_k(0, 0, 1)  # a task with no scored trial


@pytest.mark.parametrize(("n", "c", "k"), [(4, 2, 0), (4, 5, 2), (4, -1, 2), (-1, 0, 1)])
def test_nonsense_counts_are_refused(n, c, k):
    with pytest.raises(FactoryError):
        pass_at_k(n, c, k)
    with pytest.raises(FactoryError):
        pass_hat_k(n, c, k)


def test_mean_over_tasks_leaves_out_tasks_short_of_k():
    trials = [Trials(4, 4), Trials(4, 2), Trials(2, 2)]
    # k = 3 counts the first two: pass@3 = (1 + 1) / 2 ; pass^3 = (1 + C(2,3)/C(4,3)=0) / 2
    at = over_tasks(Metric.PASS_AT, trials, 3)
    hat = over_tasks(Metric.PASS_HAT, trials, 3)
    assert (at.value, at.tasks, at.short) == (1.0, 2, 1)
    assert (hat.value, hat.tasks, hat.short) == (0.5, 2, 1)
    # k = 2 counts all: pass^2 = (1 + C(2,2)/C(4,2) + 1) / 3 = (2 + 1/6) / 3 = 13/18
    assert over_tasks(Metric.PASS_HAT, trials, 2).value == float(Fraction(13, 18))
    # no task has k trials: not shown, never 0
    none = over_tasks(Metric.PASS_HAT, trials, 5)
    assert (none.value, none.tasks, none.short) == (None, 0, 3)
    assert over_tasks(Metric.PASS_AT, [], 1).value is None
    with pytest.raises(FactoryError):
        over_tasks(Metric.PASS_AT, trials, 0)


def test_names_and_cells():
    assert (Metric.PASS_AT.key(4), Metric.PASS_HAT.key(4)) == ("pass_at_4", "pass_hat_4")
    assert (Metric.PASS_AT.label(4), Metric.PASS_HAT.label(4)) == ("pass@4", "pass^4")
    assert (shown(None), shown(0.5), shown(0.125, 2)) == ("-", "0.500", "0.12")


def test_eval_summary_reports_pass_hat_k_per_family_and_overall():
    scores = [
        TaskScore("a", "f", [1.0, 1.0, 1.0, 0.0]),  # c=3 of 4
        TaskScore("b", "f", [1.0, 0.0, 0.0, 0.0]),  # c=1 of 4
        TaskScore("c", "g", [1.0, 1.0, None, None]),  # 2 scored: short of k=3
        TaskScore("d", "g", [None, None, None, None]),  # nothing scored
    ]
    summary = summarise(scores, 3)
    f, g = summary["families"]["f"], summary["families"]["g"]
    # f: pass@3 = (1 + (1 - C(3,3)/C(4,3))) / 2 = (1 + 3/4) / 2 ; pass^3 = (C(3,3)/C(4,3) + 0) / 2
    assert f == {
        "tasks": 2,
        "pass_at_1": 0.5,
        "pass_at_3": 0.875,
        "pass_hat_3": 0.125,
        "tasks_short_of_k": 0,
    }
    # g: its one scored task has 2 episodes, too few for k=3: not shown
    assert g == {
        "tasks": 1,
        "pass_at_1": 1.0,
        "pass_at_3": None,
        "pass_hat_3": None,
        "tasks_short_of_k": 1,
    }
    assert summary["tasks"] == 3 and summary["tasks_short_of_k"] == 1
    assert summary["pass_at_1"] == pytest.approx((0.75 + 0.25 + 1.0) / 3)
    assert (summary["pass_at_3"], summary["pass_hat_3"]) == (0.875, 0.125)
    assert summary["infra_failures"] == 6 and summary["episodes"] == 16


def test_eval_summary_with_k_1_keeps_one_pass_at_1():
    summary = summarise([TaskScore("a", "f", [1.0]), TaskScore("b", "f", [0.0])], 1)
    assert summary["pass_at_1"] == 0.5 and summary["pass_hat_1"] == 0.5


def test_calibrate_prints_pass_at_k_and_pass_hat_k():
    from factory.calibrate.band import Band
    from factory.calibrate.display import print_summary
    from factory.calibrate.run import KEPT, CalibrationSummary, TaskOutcome

    summary = CalibrationSummary(
        __import__("pathlib").Path("s"), "m", 2, Band(0.1, 0.9), retire_too_hard=False
    )
    summary.tasks = [
        TaskOutcome("t1", "l", "easy", 0.5, 2, 1, 1.0, 0.0, action=KEPT),
        TaskOutcome("t2", "l", "easy", 1.0, 1, 1, None, None, action=KEPT),
    ]
    buffer = io.StringIO()
    print_summary(summary, Console(file=buffer, width=200, color_system=None))
    text = buffer.getvalue()
    assert "pass^2" in text and "pass@2" in text
    assert "pass@2 1.000, pass^2 0.000 over 1 task(s), 1 with fewer than 2" in text
    data = summary.to_json()
    assert (data["pass_at_2"], data["pass_hat_2"], data["tasks_short_of_k"]) == (1.0, 0.0, 1)
    assert data["tasks"][1]["pass_hat_k"] is None
