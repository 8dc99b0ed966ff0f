"""`factory gc`: what killed runs left behind."""

from __future__ import annotations

from typing import Annotated

import typer

from factory.cli import options as opt
from factory.cli.common import emit, say


def register(root: typer.Typer) -> None:
    root.command("gc")(gc)


def gc(
    images: Annotated[
        bool, typer.Option("--images", help="Also remove cached task images.")
    ] = False,
    run_id: Annotated[str | None, typer.Option("--run", help="Only this run's leftovers.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Also remove containers of runs that are still alive.")
    ] = False,
    json_: opt.Json = False,
) -> None:
    """Remove containers and images that killed runs left behind."""
    from factory.runtime import DockerRuntime, collect_garbage

    report = collect_garbage(DockerRuntime(), run_id=run_id, task_images=images, force=force)
    say(
        f"removed {len(report.containers)} container(s), {len(report.images)} image(s)"
        + (f", {len(report.networks)} task network(s)" if report.networks else "")
        + (
            f"; left {len(report.skipped_live)} of live runs (use --force)"
            if report.skipped_live
            else ""
        )
    )
    if json_:
        emit(report)
