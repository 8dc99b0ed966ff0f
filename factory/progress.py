"""The progress bar every long command shows (on stderr): ``LABEL ━━━━ 3/10 0:01:02 what``,
with lines printed above it as work finishes. Thread-safe (rich locks)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class Bar:
    """A progress bar over ``total`` steps (it may grow), started and stopped as a context."""

    def __init__(self, label: str, console: Console, total: int = 0) -> None:
        self.progress = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
        )
        self.bar = self.progress.add_task("", total=total)

    def __enter__(self) -> Bar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    @property
    def total(self) -> int:
        return int(self.progress.tasks[0].total or 0)

    def grow(self, steps: int) -> None:
        """``steps`` more to do."""
        self.progress.update(self.bar, total=self.total + steps)

    def advance(self, steps: int = 1, description: str | None = None) -> None:
        self.progress.advance(self.bar, steps)
        if description is not None:
            self.describe(description)

    def reach(self, completed: int, description: str | None = None) -> None:
        """``completed`` steps done in all (a resumed run starts part-way)."""
        self.progress.update(self.bar, completed=completed)
        if description is not None:
            self.describe(description)

    def describe(self, description: str) -> None:
        self.progress.update(self.bar, description=description)

    def say(self, message: str) -> None:
        """A line above the bar (rich markup)."""
        self.progress.console.print(message, highlight=False, soft_wrap=True)
