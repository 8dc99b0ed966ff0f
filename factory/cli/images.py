"""`factory images`: the local base images, built offline, and the task-image cache."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factory.cli import options as opt
from factory.cli.common import FAILED, console, emit, interruptible, say, stdout_console

app = typer.Typer(no_args_is_help=True, help="Local base images, built offline.")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="images")


@app.command("build")
def build(
    names: Annotated[
        list[str] | None, typer.Argument(help="Images to build (default: every default recipe).")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Build every recipe.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when up to date.")] = False,
    host_ca: Annotated[
        bool,
        typer.Option(
            "--host-ca/--no-host-ca",
            help="Add the host's CA certificates to the images, so pip/curl work behind a "
            "TLS-intercepting proxy.",
        ),
    ] = True,
    log_dir: Annotated[
        Path | None, typer.Option(help="Where build logs go (default: a temp folder).")
    ] = None,
    json_: opt.Json = False,
) -> None:
    """Build the local base images from Debian packages (debootstrap -> docker import)."""
    from factory.images.builder import build_images
    from factory.images.recipes import select_recipes
    from factory.progress import Bar
    from factory.runtime import DockerRuntime

    recipes = select_recipes(names, all_=all_)
    with interruptible(Bar("images", console, len(recipes))) as bar:
        outcomes = build_images(
            DockerRuntime(),
            recipes,
            host_ca=host_ca,
            force=force,
            log_dir=log_dir,
            say=lambda msg: bar.say(f"[dim]{escape(msg)}[/]"),
            on_built=lambda o: (
                bar.say(f"{escape(o.name)}: [bold]{o.status}[/] ({o.seconds:.1f}s)"),
                bar.advance(description=escape(o.name)),
            ),
        )
    if json_:
        emit(
            {
                "images": [
                    {"name": o.name, "status": o.status, "seconds": o.seconds} for o in outcomes
                ]
            }
        )


@app.command("list")
def list_(json_: opt.Json = False) -> None:
    """Show the base-image recipes, whether each is built, and the alias table."""
    from factory.images.aliases import AliasTable
    from factory.images.recipes import load_recipes
    from factory.runtime import DockerRuntime

    runtime = DockerRuntime()
    recipes = [(r, runtime.image_exists(r.name)) for r in load_recipes()]
    rules = AliasTable.load().rules
    if json_:
        return emit(
            {
                "images": [
                    {
                        "name": r.name,
                        "built": built,
                        "default": r.default,
                        "description": r.description,
                    }
                    for r, built in recipes
                ],
                "aliases": [{"pattern": r.pattern, "targets": list(r.targets)} for r in rules],
            }
        )
    _inventory(recipes, rules)


def _inventory(recipes, rules) -> None:
    from rich.table import Table

    table = Table(title="base images")
    for column in ("image", "built", "default", "description"):
        table.add_column(column)
    for recipe, built in recipes:
        table.add_row(recipe.name, _yes(built), _yes(recipe.default), recipe.description)
    aliases = Table(title="aliases (first match wins)")
    aliases.add_column("pattern")
    aliases.add_column("targets")
    for rule in rules:
        aliases.add_row(rule.pattern, ", ".join(rule.targets))
    stdout_console().print(table, aliases)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


@app.command("prune")
def prune(
    max_size: Annotated[
        str, typer.Option("--max-size", help="Keep task images within this size: 20G, 512M, 0.")
    ],
    run_id: Annotated[
        str | None, typer.Option("--run", help="Only the task images this run built.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would go; remove nothing.")
    ] = False,
    json_: opt.Json = False,
) -> None:
    """Evict least-recently-used task images until they fit in --max-size.

    Base images and images of running containers are never removed. Exit 1 when the task
    images still do not fit."""
    from factory.images.prune import format_size, parse_size, prune_task_images
    from factory.runtime import DockerRuntime

    limit = parse_size(max_size)
    result = prune_task_images(DockerRuntime(), limit, run_id=run_id, dry_run=dry_run)
    plan = result.plan
    chosen = plan.evict if dry_run else result.removed
    in_use = [e for e in plan.entries if e.in_use]
    if json_:
        emit({"dry_run": dry_run, "limit": limit, "total_before": plan.total_before,
              "total_after": result.total_after,
              "removed": [{"image": e.name, "frees": e.freed, "last_used": e.last_used}
                          for e in chosen],
              "failed": [{"image": e.name, "reason": why} for e, why in result.failed],
              "in_use": len(in_use)})  # fmt: skip
    elif chosen:
        _evictions(chosen, "would remove" if dry_run else "removed")
    for entry, why in result.failed:
        say(f"[yellow]kept[/] {escape(f'{entry.name}: {why}')}")
    say(
        f"task images: {len(plan.entries)}, {format_size(plan.total_before)} -> "
        f"{format_size(result.total_after)} (limit {format_size(limit)}); "
        f"{'would remove' if dry_run else 'removed'} {len(chosen)}"
        + (f"; {len(in_use)} in use by running containers" if in_use else "")
    )
    if result.total_after > limit:
        raise typer.Exit(FAILED)


def _evictions(entries, title: str) -> None:
    from rich.table import Table

    from factory.images.prune import age, format_size

    table = Table(title=title)
    for column in ("image", "frees", "last used"):
        table.add_column(column)
    for entry in entries:
        when = age(entry.last_used) + ("" if entry.logged else " (built)")
        table.add_row(entry.name, format_size(entry.freed), when)
    stdout_console().print(table)
