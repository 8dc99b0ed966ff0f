"""The `factory` command line (Typer + rich): one module per command group, each command parsing
its options and calling the library.

Nouns are sub-command groups (``images``, ``tasks``, ``families``, ``suite``); the jobs are
top-level verbs (``generate``, ``validate``, ``eval``...). Results go to stdout (``--json``: one
JSON document), logs and progress to stderr. Exit status: 0 done, 1 done but not everything came
out well (an invalid task, an incomplete leaf...), 2 a usage error or one the user can fix (one
line, no traceback), 130 interrupted (after the run's containers are removed).
"""

from __future__ import annotations

import logging
import signal
import sys
from typing import Annotated

import typer
from rich.markup import escape

from factory import __version__
from factory.cli import families, gc, images, publish, solve, suite, tasks, train, validate
from factory.cli.common import INTERRUPTED, console
from factory.errors import FactoryError
from factory.processes import sigterm_as_ctrl_c

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Manufacture verified, containerised training environments for LLM agents.",
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"factory {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


for module in (images, tasks, families, suite, validate, solve, train, publish, gc):
    module.register(app)


def main() -> None:
    """Entry point: run the app, turning FactoryError into one line and SIGTERM into Ctrl-C.
    ``kill -USR1 PID`` prints every thread's stack to stderr (for reporting a hang)."""

    sigterm_as_ctrl_c()
    if hasattr(signal, "SIGUSR1"):
        import faulthandler

        faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        app()
    except FactoryError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except OSError as exc:  # the filesystem refused (disk full, a file where a folder goes)
        from factory.fsutil import describe_os_error

        console.print(
            f"[red]error:[/] {escape(describe_os_error(exc))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]")
        sys.exit(INTERRUPTED)
