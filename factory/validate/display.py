"""Terminal output of `factory validate`: a progress bar while it runs, a table at the end."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from factory.progress import Bar
from factory.validate.outcome import Outcome, TaskValidation, ValidationReport

_STYLE = {
    Outcome.VALID: "green",
    Outcome.NO_SOLUTION: "cyan",
    Outcome.FLAKY: "yellow",
    Outcome.INFRA_ERROR: "magenta",
}


class ValidationProgress(Bar):
    """The progress bar fed by the validator's callbacks."""

    def __init__(self, total: int, console: Console) -> None:
        super().__init__("validate", console, total)

    def started(self, task_dir: Path) -> None:
        self.describe(f"[dim]{escape(task_dir.name)}")

    def done(self, verdict: TaskValidation) -> None:
        style = _STYLE.get(verdict.outcome, "red")
        self.say(f"[{style}]{verdict.outcome.value:<24}[/] {escape(verdict.id)}")
        self.advance()

    def flake_started(self, tasks: int) -> None:
        self.say(f"flake runs: {tasks} valid tasks, perturbed nop + oracle pairs")
        self.grow(tasks)

    def flake_done(self, result) -> None:
        """A :class:`factory.quality.flake.FlakeResult`."""
        rate = "-" if result.flake_rate is None else f"{result.flake_rate:.2f}"
        self.advance(description=f"[dim]flake {escape(result.task_dir.name)}: {rate}")


def print_summary(report: ValidationReport, console: Console) -> None:
    table = Table(title=f"validation ({report.repeats} repeats)", show_lines=False)
    table.add_column("task", overflow="fold")
    table.add_column("outcome")
    table.add_column("build s", justify="right")
    table.add_column("phases s", justify="right")
    table.add_column("reason", overflow="fold", ratio=2)
    for task in sorted(report.tasks, key=lambda t: t.id):
        style = _STYLE.get(task.outcome, "red")
        phases = task.timings.get("nop", 0.0) + task.timings.get("oracle", 0.0)
        table.add_row(
            task.id,
            f"[{style}]{task.outcome.value}[/]",
            f"{task.timings.get('build', 0.0):.1f}",
            f"{phases:.1f}",
            ("(resumed) " if task.resumed else "") + task.reason,
        )
    console.print(table)
    parts = [f"{k}={v}" for k, v in report.summary.items()]
    console.print("summary: " + ", ".join(parts))
