"""Terminal output of `factory calibrate`: a progress bar, then the summary tables."""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from factory.agent.passk import Metric, shown
from factory.calibrate.band import (
    IN_BAND,
    TOO_EASY,
    TOO_HARD,
    bin_labels,
    histogram,
    share_in_band,
)
from factory.calibrate.run import ERROR, KEPT, RETIRED, CalibrationSummary, Events, TaskOutcome
from factory.generate.results import ACCEPTED, CandidateResult
from factory.progress import Bar

_STYLE = {IN_BAND: "green", TOO_EASY: "yellow", TOO_HARD: "red"}


class CalibrationProgress(Bar, Events):
    def __init__(self, console: Console, k: int) -> None:
        super().__init__("calibrate", console)
        self.k = k
        self.counts: Counter = Counter()

    def measuring(self, tasks: int, cached: int, episodes: int) -> None:
        self.grow(tasks)
        if cached:
            self.say(f"[dim]{cached} of {tasks} tasks: pass rate from the journal[/]")
        if episodes:
            self.say(f"[dim]{episodes} episodes to run ({tasks - cached} tasks x {self.k})[/]")

    def task_done(self, outcome: TaskOutcome) -> None:
        self.counts[outcome.action] += 1
        if outcome.action == ERROR:
            self.say(f"[red]no pass rate[/] {escape(f'{outcome.key}: {outcome.error}')}")
        elif outcome.action == RETIRED:
            self.say(
                f"[yellow]retired[/] {outcome.key}: pass rate {outcome.pass_rate:.2f} "
                f"({outcome.verdict})"
            )
        self.advance(description=", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())))

    def candidate_done(self, result: CandidateResult) -> None:
        mark = "[green]new task[/]" if result.status == ACCEPTED else "[dim]rejected[/]"
        self.say(f"{mark} {escape(f'{result.id} ({result.difficulty}): {result.outcome}')}")


def print_summary(summary: CalibrationSummary, console: Console) -> None:
    band = summary.band
    before, after = summary.before, summary.after
    hist = Table(title=f"pass rate of {summary.model} (k={summary.k}), band {band}")
    for column in ("pass rate", "before", "after"):
        hist.add_column(column, justify="right")
    for label, a, b in zip(bin_labels(), histogram(before), histogram(after), strict=True):
        hist.add_row(label, str(a), str(b))
    hist.add_row(
        "in band",
        f"{share_in_band(before, band):.0%} of {len(before)}",
        f"{share_in_band(after, band):.0%} of {len(after)}",
        style="bold",
    )
    console.print(hist)
    if summary.retired_before:
        console.print(
            f"[dim]before: the tasks in the suite when this run started; "
            f"{summary.retired_before} retired by earlier runs are not counted[/]"
        )

    leaves: dict[str, Counter] = defaultdict(Counter)
    for task in summary.tasks:
        row = leaves[task.leaf or "(no leaf)"]
        row["tasks"] += 1
        row[task.verdict or ERROR] += 1
        row[task.action] += 1
        row["new"] += task.new
    table = Table(title="per leaf")
    for column in ("leaf", "tasks", "in band", "too easy", "too hard", "retired", "new", "kept"):
        table.add_column(column, justify="left" if column == "leaf" else "right")
    for leaf, row in sorted(leaves.items()):
        table.add_row(
            escape(leaf),
            *(str(row[k]) for k in ("tasks", IN_BAND, TOO_EASY, TOO_HARD, RETIRED, "new", KEPT)),
        )
    console.print(table)
    if len(summary.tasks) <= 60:
        detail = Table(title="tasks")
        at_k, hat_k = Metric.PASS_AT.label(summary.k), Metric.PASS_HAT.label(summary.k)
        for column in ("task", "pass rate", at_k, hat_k, "episodes", "verdict", "action"):
            detail.add_column(column)
        for task in summary.tasks:
            verdict = task.verdict or "-"
            style = _STYLE.get(verdict, "")
            detail.add_row(
                escape(task.key) + (" (new)" if task.new else ""),
                shown(task.pass_rate, 2),
                shown(task.pass_at_k, 2),
                shown(task.pass_hat_k, 2),
                str(task.episodes),
                f"[{style}]{verdict}[/]" if style else verdict,
                task.action + (" (journal)" if task.cached else ""),
            )
        console.print(detail)
    if summary.flake:
        rates = [f.flake_rate for f in summary.flake if f.flake_rate is not None]
        flaky = [f.task_dir.name for f in summary.flake if f.flake_rate]
        console.print(
            f"verifier flake rate measured for {len(rates)} tasks: {len(flaky)} flaky"
            + (f" ({', '.join(flaky[:5])})" if flaky else ""),
            highlight=False,
        )
    _print_reliability(summary, console)
    made = summary.regenerated
    valid = sum(r.status == ACCEPTED for r in made)
    console.print(
        f"{len(summary.tasks)} tasks calibrated ({sum(t.cached for t in summary.tasks)} from the "
        f"journal), {len(summary.retired)} retired, "
        f"{sum(t.action == ERROR for t in summary.tasks)} without a pass rate; regenerated: "
        f"{len(made)} candidates, {valid} valid; {summary.seconds:.0f} s",
        highlight=False,
    )


def _print_reliability(summary: CalibrationSummary, console: Console) -> None:
    """pass@k and pass^k over the tasks measured (``-``: no task has k scored episodes)."""
    k = summary.k
    at_k, hat_k = summary.over_tasks(Metric.PASS_AT), summary.over_tasks(Metric.PASS_HAT)
    short = f", {at_k.short} with fewer than {k} scored episodes left out" if at_k.short else ""
    console.print(
        f"{Metric.PASS_AT.label(k)} {shown(at_k.value)}, {Metric.PASS_HAT.label(k)} "
        f"{shown(hat_k.value)} over {at_k.tasks} task(s){short}",
        highlight=False,
    )
