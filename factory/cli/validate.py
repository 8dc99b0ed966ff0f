"""`factory validate`: certify task directories in containers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factory.cli import options as opt
from factory.cli.common import FAILED, console, emit, existing, job, say, stdout_console


def register(root: typer.Typer) -> None:
    root.command("validate")(validate)


def validate(
    task_dirs: Annotated[
        list[Path],
        existing("Task directories (Harbor or Terminal-Bench 1 layout), or folders holding them."),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for validation.json and the phase logs.")
    ] = Path("validation"),
    jobs: opt.Jobs = opt.DEFAULT_JOBS,
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, help="Runs of each phase; disagreement = flaky.")
    ] = 2,
    force: Annotated[
        bool, typer.Option("--force", help="Re-validate tasks already certified in --out.")
    ] = False,
    flake_runs: opt.FlakeRuns = 0,
    probes: Annotated[
        bool,
        typer.Option(
            "--probes",
            help="Then run the cheat probes on each valid task (trivial agents and every "
            "tampering attack of factory/validate/attacks); one that scores makes it cheat_passed.",
        ),
    ] = False,
    executor: opt.Executors = opt.LOCAL,
    ray_address: opt.RayAddress = None,
    ray_shared_fs: opt.RayShared = False,
    build_network: opt.BuildNetworks = opt.FILTERED,
    json_: opt.Json = False,
) -> None:
    """Certify tasks in containers (fail without the solution, pass with it).

    Writes OUT/validation.json (and OUT/flake/flake.json with --flake-runs); a rerun skips
    tasks certified with the same content hash. Exit 1 when a task is not valid."""
    from factory.quality.flake import flake_valid_tasks
    from factory.tasks.model import discover_task_dirs
    from factory.validate.display import ValidationProgress, print_summary
    from factory.validate.validator import Validator

    dirs = discover_task_dirs(task_dirs)
    progress = ValidationProgress(len(dirs), console)
    with job("validate", jobs, executor=executor, ray_address=ray_address,
             ray_shared_fs=ray_shared_fs, build_network=build_network,
             progress=progress,
             hint=f"removing this run's containers; partial report: {out / 'validation.json'}"
             ) as where:  # fmt: skip
        validator = Validator(
            where.runtime, out, repeats=repeats, force=force, probes=probes, executor=where,
            on_task_start=progress.started, on_task_done=progress.done,
        )  # fmt: skip
        report = validator.run(dirs)
        flake = flake_valid_tasks(
            where.runtime, report, flake_runs, out / "flake", jobs=where.slots,
            on_start=progress.flake_started, on_done=progress.flake_done,
        )  # fmt: skip
    if json_:
        emit({"report_path": validator.report_path, **report.model_dump(mode="json"),
              "flake": [_flake(r) for r in flake]})  # fmt: skip
    else:
        print_summary(report, stdout_console())
        if flake:
            _flake_table(flake, flake_runs)
    flake_path = out / "flake" / "flake.json"
    say(
        escape(
            f"report: {validator.report_path}" + (f"; flake report: {flake_path}" if flake else "")
        )
    )
    if any(t.outcome.value != "valid" for t in report.tasks):
        raise typer.Exit(FAILED)


def _flake(result) -> dict:
    return {
        "task": result.task_dir,
        "flake_rate": result.flake_rate,
        "infra_errors": result.infra_errors,
        "by_perturbation": {
            name: {"flaky": flaky, "phases": phases}
            for name, (flaky, phases) in result.by_perturbation().items()
        },
    }


def _flake_table(results, runs: int) -> None:
    """The flake rate of each task, and the share of flaky phases per perturbation."""
    from rich.table import Table

    from factory.quality.flake import PERTURBATIONS

    table = Table(title=f"verifier flake rate ({runs} perturbed runs per task)")
    for column in ("task", "flake rate", *PERTURBATIONS, "infra"):
        table.add_column(column)
    for result in results:
        parts = result.by_perturbation()
        rate = result.flake_rate
        table.add_row(
            escape(result.task_dir.name),
            "-" if rate is None else f"[{'red' if rate else 'green'}]{rate:.2f}[/]",
            *[f"{parts[p][0]}/{parts[p][1]}" if p in parts else "-" for p in PERTURBATIONS],
            str(result.infra_errors),
        )
    stdout_console().print(table)
