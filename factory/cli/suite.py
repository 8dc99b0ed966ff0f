"""`factory generate` and `factory suite show`: suites of verified tasks from a taxonomy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factory.cli import options as opt
from factory.cli.common import (
    FAILED,
    console,
    emit,
    existing,
    job,
    llm_options,
    say,
    stdout_console,
)
from factory.generate.backends import BackendChoice

app = typer.Typer(no_args_is_help=True, help="Generated suites.")


def register(root: typer.Typer) -> None:
    root.command("generate")(generate)
    root.add_typer(app, name="suite")


def generate(
    taxonomy_file: Annotated[
        Path, existing("Taxonomy YAML (see examples/taxonomy.yaml).", dir_okay=False)
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Suite folder (default: suites/<suite name>)."),
    ] = None,
    backend: Annotated[
        BackendChoice | None,
        typer.Option(help="Generator of every leaf (default: each leaf's own)."),
    ] = None,
    jobs: opt.Jobs = opt.DEFAULT_JOBS,
    seed: Annotated[int | None, typer.Option(help="Override the taxonomy's seed.")] = None,
    llm_base_url: opt.LlmBaseUrl = None,
    llm_model: opt.LlmModel = None,
    llm_api_key_env: opt.LlmApiKeyEnv = opt.DEFAULT_KEY_ENV,
    repair_rounds: Annotated[
        int, typer.Option(help="LLM: times a failed candidate goes back to the model.")
    ] = 2,
    llm_concurrency: Annotated[int, typer.Option(help="LLM: requests in flight at most.")] = 4,
    llm_max_tokens: Annotated[
        int | None, typer.Option(help="LLM: token budget for the whole run.")
    ] = None,
    llm_max_cost: Annotated[
        float | None, typer.Option(help="LLM: cost budget in USD for the whole run.")
    ] = None,
    llm_max_output: Annotated[int, typer.Option(help="LLM: max tokens of one reply.")] = 3000,
    llm_temperature: Annotated[float, typer.Option(help="LLM: sampling temperature.")] = 0.7,
    executor: opt.Executors = opt.LOCAL,
    ray_address: opt.RayAddress = None,
    ray_shared_fs: opt.RayShared = False,
    build_network: opt.BuildNetworks = opt.FILTERED,
    json_: opt.Json = False,
) -> None:
    """Generate a suite of verified tasks from a taxonomy.

    Every candidate is certified in containers; only valid ones enter SUITE/tasks. A rerun
    resumes a killed run. Exit 1 when a leaf did not reach its quota."""
    from factory.generate.display import GenerationProgress
    from factory.generate.run import GenerationPlan

    llm = llm_options(
        llm_base_url,
        llm_model,
        llm_api_key_env,
        concurrency=llm_concurrency,
        max_tokens=llm_max_tokens,
        max_cost_usd=llm_max_cost,
        max_output_tokens=llm_max_output,
        temperature=llm_temperature,
        parse_repairs=repair_rounds,
    )
    plan = GenerationPlan.load(
        taxonomy_file, llm, out=out, seed=seed, backend=backend, repair_rounds=repair_rounds
    )
    progress = GenerationProgress(plan.taxonomy, console)
    with job("generate", jobs, executor=executor, ray_address=ray_address,
             ray_shared_fs=ray_shared_fs, build_network=build_network,
             progress=progress,
             hint="removing this run's containers; rerun to resume") as where:  # fmt: skip
        manifest = plan.run(where, on_result=progress.result)
    _show(manifest, plan.out, json_)
    if not all(c.complete for c in manifest.coverage):
        raise typer.Exit(FAILED)


@app.command("show")
def show(
    suite: Annotated[Path, existing("A suite folder made by `factory generate`.")],
    json_: opt.Json = False,
) -> None:
    """Coverage and structure per taxonomy leaf of a generated suite.

    Quota, candidates, valid, yield, outcomes, time and LLM cost of each leaf, then what its
    tasks ask the solver to do (fault combinations, test structure, solution shapes)."""
    from factory.generate.display import print_structure
    from factory.generate.pipeline import load_suite_manifest

    manifest = load_suite_manifest(suite)
    _show(manifest, suite, json_)
    if not json_:
        print_structure(manifest, suite, stdout_console())


def _show(manifest, suite: Path, json_: bool) -> None:
    from factory.generate.display import print_coverage

    if json_:
        emit({"path": suite, **manifest.model_dump(mode="json", by_alias=True)})
        return
    print_coverage(manifest, stdout_console())
    say(escape(f"suite: {suite} ({len(manifest.tasks)} tasks)"))
