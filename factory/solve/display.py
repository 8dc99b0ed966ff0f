"""Terminal output of `factory solve`: one row per task with its attempts and the reason."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from factory.solve.solver import SolveOutcome, SolveReport

_STYLE = {SolveOutcome.SOLVED: "green", SolveOutcome.INFRA_ERROR: "magenta"}


def print_solve_summary(report: SolveReport, console: Console) -> None:
    table = Table(title=f"solve ({report.model}, up to {report.attempts} attempts)")
    table.add_column("task", overflow="fold")
    table.add_column("outcome")
    table.add_column("attempts", justify="right")
    table.add_column("rewards")
    table.add_column("reason", overflow="fold", ratio=2)
    for task in report.tasks:
        style = _STYLE.get(task.outcome, "red")
        rewards = ",".join("-" if a.reward is None else f"{a.reward:g}" for a in task.attempts)
        table.add_row(
            task.id,
            f"[{style}]{task.outcome.value}[/]",
            str(len(task.attempts)),
            rewards or "-",
            task.reason,
        )
    console.print(table)
    parts = [f"{k}={v}" for k, v in report.summary.items()]
    tokens = f"; tokens used: {report.tokens_used}" if report.tokens_used else ""
    console.print("summary: " + ", ".join(parts) + tokens)
