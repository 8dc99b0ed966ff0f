"""`factory tasks check` (task directories parsed without Docker) and `factory lint` (what
Harbor's linter and a harness would say about them). (The importers' old spellings, `tasks
import`, `import-tb1` and `import-bfcl`, stay as hidden aliases of `factory import`.)"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factory.cli import options as opt
from factory.cli.common import FAILED, emit, existing, say
from factory.cli.publish import import_

app = typer.Typer(no_args_is_help=True, help="Task directories: check them without Docker.")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="tasks")
    root.command("lint")(lint)


class Harness(str, Enum):
    """``factory lint --harness``: a harness whose refusals on this host are reported too."""

    HARBOR_DOCKER = "harbor-docker"


def lint(
    paths: Annotated[list[Path], existing("Task directories or folders of them.")],
    harness: Annotated[
        Harness | None,
        typer.Option(help="Also report what this harness refuses on this host."),
    ] = None,
    json_: opt.Json = False,
) -> None:
    """What Harbor's linter and other harnesses would say about tasks.

    One line per finding (task, field, rule); exit 1 on findings."""
    from factory.tasks.lint import lint_paths

    host = None
    if harness is Harness.HARBOR_DOCKER:
        from factory.runtime import DockerRuntime
        from factory.tasks.lint import PROBE_IMAGE, local_harbor_docker_host

        host = local_harbor_docker_host(image_present=DockerRuntime().image_exists(PROBE_IMAGE))
    findings = lint_paths(paths, host=host)
    tasks = len({finding.task for finding in findings})
    if json_:
        emit({"findings": findings, "tasks": tasks})
    else:
        for finding in findings:
            print(finding.line())
    say(f"{len(findings)} finding(s) in {tasks} task(s)")
    if findings:
        raise typer.Exit(FAILED)


@app.command("check")
def check(
    task_dirs: Annotated[list[Path], existing("Task directories or folders of them.")],
    json_: opt.Json = False,
) -> None:
    """Parse tasks without Docker: one line per malformed file.

    Harbor or Terminal-Bench 1 layout. Exit 1 when any task does not load."""
    from factory.importers.layouts import check_tasks

    checks = check_tasks(task_dirs)
    for item in checks:
        if item.ok:
            say(f"[green]ok[/] {escape(f'{item.id} ({item.path})')}")
        else:
            say(f"[red]invalid[/] {escape(str(item.error))}")
    bad = sum(not c.ok for c in checks)
    if json_:
        emit(
            {
                "tasks": [
                    {"path": c.path, "id": c.id, "ok": c.ok, "error": c.error} for c in checks
                ],
                "invalid": bad,
            }
        )
    if bad:
        raise typer.Exit(FAILED)


@app.command("import", hidden=True)
def import_layout(
    sources: Annotated[list[Path], existing("Task directories or folders of them.")],
    out: Annotated[Path, typer.Option("--out", "-o")],
    layout: Annotated[str | None, typer.Option("--layout", "--format")] = None,
) -> None:
    """Old spelling of `factory import SRC... --out DIR [--format harbor|terminal-bench-1]`."""
    import_(out, sources, format_=layout)


@app.command("import-tb1", hidden=True)
def import_tb1(
    sources: Annotated[list[Path], existing("Terminal-Bench 1 task directories.")],
    out: Annotated[Path, typer.Option("--out", "-o")],
) -> None:
    """Old spelling of `factory import SRC... --out DIR --format terminal-bench-1`."""
    import_(out, sources, format_="terminal-bench-1")


@app.command("import-bfcl", hidden=True)
def import_bfcl(
    out: Annotated[Path, typer.Option("--out", "-o")],
    entries: Annotated[list[str] | None, typer.Argument()] = None,
    source: Annotated[Path | None, typer.Option(exists=True)] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    ids: Annotated[list[str] | None, typer.Option("--ids")] = None,
) -> None:
    """Old spelling of `factory import [WHEEL] --out DIR --format bfcl [--ids ...]`."""
    import_(
        out,
        [source] if source else [],
        format_="bfcl",
        ids=[*(ids or []), *(entries or [])],
        limit=limit,
    )
