"""`factory export`, `factory import` and `factory report`: tasks out of and into this machine,
and a suite as one HTML page."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factory.cli import options as opt
from factory.cli.common import FAILED, emit, existing, say
from factory.publish.formats import ExportFormat
from factory.publish.imports import ImportFormat


def register(root: typer.Typer) -> None:
    root.command("export")(export)
    root.command("import")(import_)
    root.command("report")(report)


def export(
    suite: Annotated[
        Path, existing("A suite folder (suite.json) or a folder of task directories.")
    ],
    format_: Annotated[ExportFormat, typer.Option("--format", "-f", help="What to write.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the export.")],
    name: Annotated[
        str | None, typer.Option(help="Dataset name (default: the suite's name).")
    ] = None,
    version: Annotated[str, typer.Option(help="Dataset version.")] = "1.0",
    description: Annotated[str | None, typer.Option(help="Dataset description.")] = None,
    license_: Annotated[
        str, typer.Option("--license", help="hf: license of the dataset card.")
    ] = "apache-2.0",
    git_url: Annotated[
        str | None, typer.Option(help="harbor: repository the export folder will be pushed to.")
    ] = None,
    git_commit: Annotated[
        str | None, typer.Option(help="harbor: commit of that repository (with --git-url).")
    ] = None,
    shard_rows: Annotated[int, typer.Option(help="hf: tasks per parquet file.", min=1)] = 1000,
    force: Annotated[bool, typer.Option("--force", help="Replace a non-empty --out.")] = False,
    json_: opt.Json = False,
) -> None:
    """Export a suite's tasks as a dataset.

    A JSONL index with hashes (jsonl), a Harbor registry dataset (harbor), or a Hugging Face
    datasets parquet dataset with a dataset card (hf). `factory import` reads it back."""
    from factory.publish.api import export_suite

    result = export_suite(
        suite,
        format_.value,
        out,
        name=name,
        version=version,
        description=description,
        license=license_,
        git_url=git_url,
        git_commit=git_commit,
        rows_per_shard=shard_rows,
        force=force,
    )
    for warning in result.warnings:
        say(f"[yellow]warning[/] {escape(warning)}")
    manifest = result.manifest
    say(
        escape(
            f"exported {manifest.task_count} tasks ({manifest.format}) to {out}: "
            f"{', '.join(manifest.index)}; content hash {manifest.content_hash[:16]}"
        )
    )
    if json_:
        emit({"out": out, "manifest": manifest, "warnings": result.warnings})


def import_(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the task directories.")],
    sources: Annotated[
        list[Path] | None,
        existing(
            "An export folder (or its tasks.jsonl, registry.json or a parquet file), task "
            "directories or folders of them, or (bfcl) a bfcl_eval wheel or folder.",
            show_default=False,
        ),
    ] = None,
    format_: Annotated[
        ImportFormat | None,
        typer.Option("--format", "-f", help="What the sources are (default: detect)."),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(help="harbor export: the dataset (name or name@version) of a registry."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace task directories that differ.")
    ] = False,
    ids: Annotated[
        list[str] | None,
        typer.Option(
            "--ids",
            help="bfcl: entries to import (default: all): multi_turn_base_12, "
            "bfcl-multi-turn-base-12 or 12; repeat it or separate with commas.",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="bfcl: import at most this many.")] = None,
    json_: opt.Json = False,
) -> None:
    """Bring tasks in as Harbor task directories that run offline here.

    An export of `factory export` (checked against its content hashes), public tasks in the
    Harbor or Terminal-Bench 1 layout, or BFCL's multi-turn base entries. Exit 1 when a task
    directory does not import (the others still do)."""
    from factory.publish.imports import Imported, import_sources

    def show(item: Imported) -> None:
        if item.status == "failed":
            say(f"[red]failed[/] {escape(str(item.error))}")
        elif item.status == "skipped":
            say(f"[yellow]skipped[/] {escape(f'{item.id}: {item.error}')}")
        else:
            say(
                f"[green]{item.status}[/] {escape(f'{item.source} -> {item.dest} ({item.format})')}"
            )
        for note in item.notes:
            say(f"    [dim]- {escape(note)}[/]")

    fmt = ImportFormat(format_) if format_ else None
    run = import_sources(
        sources or [], out, fmt=fmt, dataset=dataset, force=force, ids=ids, limit=limit,
        on_task=show,
    )  # fmt: skip
    kinds = Counter(t.format for t in run.tasks if t.status not in ("failed", "skipped"))
    skipped = sum(t.status == "skipped" for t in run.tasks)
    say(
        escape(
            f"{sum(kinds.values())} tasks into {out} ("
            + ", ".join(f"{n} from {kind}" for kind, n in sorted(kinds.items()))
            + f"), {skipped} skipped, {len(run.failed)} failed"
            + (f"; report: {run.report}" if run.report else "")
        )
    )
    if json_:
        emit({"out": out, "tasks": run.tasks, "failed": len(run.failed), "report": run.report})
    if run.failed:
        raise typer.Exit(FAILED)


def report(
    suite: Annotated[Path, existing("A suite folder made by `factory generate`.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Where the HTML page goes (default: SUITE/report.html)."),
    ] = None,
    samples: Annotated[int, typer.Option(help="Sample tasks shown.", min=0)] = 6,
    html: Annotated[Path | None, typer.Option("--html", hidden=True)] = None,
    json_: opt.Json = False,
) -> None:
    """A suite as one self-contained HTML page.

    Coverage, yield, outcomes, difficulty, pass rate, timings, verifier strength and sample
    tasks, with inline SVG charts."""
    from factory.publish.report import write_report

    target = out or html or suite / "report.html"
    write_report(suite, target, samples=samples)
    say(escape(f"report: {target}"))
    if json_:
        emit({"report": target})
