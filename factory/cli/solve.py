"""`factory solve`: an agent behind an OpenAI-compatible endpoint looks for a reference solution
of tasks that ship none; a passing episode's commands become solution/solve.sh once certified."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factory.cli import options as opt
from factory.cli.common import FAILED, console, emit, existing, job, say, stdout_console


def register(root: typer.Typer) -> None:
    root.command("solve")(solve)


def solve(
    task_dirs: Annotated[
        list[Path], existing("Harbor task directories without solution/, or folders of them.")
    ],
    base_url: opt.BaseUrl = None,
    model: opt.Model = None,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Folder for solve.json, transcripts and candidates."),
    ] = Path("runs/solve"),
    attempts: Annotated[
        int, typer.Option("--attempts", min=1, help="Episodes per task, each its own seed.")
    ] = 3,
    max_turns: Annotated[
        int, typer.Option("--max-turns", min=1, help="Policy turns per episode.")
    ] = 20,
    command_timeout: Annotated[
        float, typer.Option("--command-timeout", min=1, help="Seconds per agent command.")
    ] = 60.0,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    max_tokens: opt.MaxTokens = None,
    seed: Annotated[int, typer.Option(help="Base sampling seed (attempts derive theirs).")] = 0,
    action_format: opt.Actions = None,
    api_key_env: opt.ApiKeyEnv = opt.DEFAULT_KEY_ENV,
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, help="Certification runs of each phase.")
    ] = 2,
    probes: Annotated[
        bool, typer.Option(help="Certification runs the cheat probes (as validate --probes).")
    ] = True,
    json_: opt.Json = False,
) -> None:
    """Find reference solutions for tasks that have none, with the model --model behind
    --base-url (any OpenAI-compatible endpoint).

    Each task is first partially certified (builds, nop scores 0); then up to --attempts agent
    episodes run in its container. A passing episode's commands are staged as
    solution/solve.sh and certified (repeats, probes); only a valid one is installed in the
    task, with its provenance. Writes OUT/solve.json. Exit 1 when a task is not solved."""
    from factory.solve.display import print_solve_summary
    from factory.solve.solver import SolveOutcome, run_solve

    with job("solve", 1, hint=f"removing this run's containers; report: {out / 'solve.json'}"
             ) as where:  # fmt: skip
        report = run_solve(
            task_dirs, where, out, base_url=base_url, model=model, api_key_env=api_key_env,
            attempts=attempts, max_turns=max_turns, command_timeout=command_timeout,
            temperature=temperature, max_tokens=max_tokens, seed=seed,
            action_format=action_format, repeats=repeats, probes=probes,
            say=lambda m: say(f"[dim]{escape(m)}[/]"),
        )  # fmt: skip
    if json_:
        emit({"report_path": out / "solve.json", **report.model_dump(mode="json")})
    else:
        print_solve_summary(report, stdout_console())
    console.print(escape(f"report: {out / 'solve.json'}"), highlight=False)
    if any(t.outcome is not SolveOutcome.SOLVED for t in report.tasks):
        raise typer.Exit(FAILED)
