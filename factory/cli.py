"""The `factory` command line (Typer + rich).

Nouns are sub-command groups (``images``, ``tasks``); the jobs are top-level verbs
(``validate``, ``gc``). Errors the user can act on print one line and exit 2; Ctrl-C exits 130
after the run's containers are removed.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from factory import __version__
from factory.errors import FactoryError

console = Console(stderr=True)
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Manufacture verified, containerised training environments for LLM agents.",
    pretty_exceptions_enable=False,
)
images_app = typer.Typer(no_args_is_help=True, help="Local base images, built offline.")
tasks_app = typer.Typer(no_args_is_help=True, help="Task directories: import, inspect.")
app.add_typer(images_app, name="images")
app.add_typer(tasks_app, name="tasks")


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


# --- images -----------------------------------------------------------------------------


@images_app.command("build")
def images_build(
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
) -> None:
    """Build the local base images from Debian packages (debootstrap -> docker import)."""
    from factory.images.builder import build_recipe
    from factory.images.recipes import load_recipes
    from factory.runtime import DockerRuntime

    recipes = load_recipes()
    known = {r.name for r in recipes}
    unknown = [n for n in names or [] if n not in known]
    if unknown:
        raise FactoryError(
            f"unknown image(s) {', '.join(unknown)}; recipes: {', '.join(sorted(known))}"
        )
    wanted = [
        r for r in recipes if (r.name in (names or [])) or (not names and (all_ or r.default))
    ]
    runtime = DockerRuntime()
    for recipe in wanted:
        outcome = build_recipe(
            runtime,
            recipe,
            host_ca=host_ca,
            force=force,
            log_dir=log_dir,
            say=lambda msg: console.print(f"[dim]{msg}[/]"),
        )
        console.print(f"{outcome.name}: [bold]{outcome.status}[/] ({outcome.seconds:.1f}s)")


@images_app.command("list")
def images_list() -> None:
    """Show the base-image recipes, whether each is built, and the alias table."""
    from rich.table import Table

    from factory.images.aliases import AliasTable
    from factory.images.recipes import load_recipes
    from factory.runtime import DockerRuntime

    runtime = DockerRuntime()
    table = Table(title="base images")
    for column in ("image", "built", "default", "description"):
        table.add_column(column)
    for recipe in load_recipes():
        built = "yes" if runtime.image_exists(recipe.name) else "no"
        table.add_row(recipe.name, built, "yes" if recipe.default else "no", recipe.description)
    Console().print(table)
    aliases = Table(title="aliases (first match wins)")
    aliases.add_column("pattern")
    aliases.add_column("targets")
    for rule in AliasTable.load().rules:
        aliases.add_row(rule.pattern, ", ".join(rule.targets))
    Console().print(aliases)


@images_app.command("prune")
def images_prune(
    max_size: Annotated[
        str, typer.Option("--max-size", help="Keep task images within this size: 20G, 512M, 0.")
    ],
    run_id: Annotated[
        str | None, typer.Option("--run", help="Only the task images this run built.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would go; remove nothing.")
    ] = False,
) -> None:
    """Evict least-recently-used task images until they fit in --max-size (base images and
    images of running containers are never removed)."""
    from rich.table import Table

    from factory.images.prune import age, format_size, parse_size, prune_task_images
    from factory.runtime import DockerRuntime

    limit = parse_size(max_size)
    result = prune_task_images(DockerRuntime(), limit, run_id=run_id, dry_run=dry_run)
    plan = result.plan
    chosen = plan.evict if dry_run else result.removed
    table = Table(title="would remove" if dry_run else "removed")
    for column in ("image", "frees", "last used"):
        table.add_column(column)
    for entry in chosen:
        when = age(entry.last_used) + ("" if entry.logged else " (built)")
        table.add_row(entry.name, format_size(entry.freed), when)
    if chosen:
        Console().print(table)
    for entry, why in result.failed:
        console.print(f"[yellow]kept[/] {entry.name}: {why}", highlight=False)
    in_use = [e for e in plan.entries if e.in_use]
    console.print(
        f"task images: {len(plan.entries)}, {format_size(plan.total_before)} -> "
        f"{format_size(result.total_after)} (limit {format_size(limit)}); "
        f"{'would remove' if dry_run else 'removed'} {len(chosen)}"
        + (f"; {len(in_use)} in use by running containers" if in_use else ""),
        highlight=False,
    )
    if result.total_after > limit:
        raise typer.Exit(1)


# --- tasks ------------------------------------------------------------------------------


def _import(sources: list[Path], out: Path, layout: str | None) -> None:
    from factory.tasks.importer import import_task
    from factory.tasks.model import discover_task_dirs

    failures = 0
    for src in discover_task_dirs(sources):
        result = import_task(src, out, layout=layout)
        if result.error:
            failures += 1
            console.print(f"[red]skipped[/] {result.error}", highlight=False, soft_wrap=True)
            continue
        console.print(f"[green]imported[/] {src} -> {result.dest} ({result.layout})")
        for note in result.notes:
            console.print(f"    [dim]- {note}[/]", highlight=False, soft_wrap=True)
    if failures:
        raise typer.Exit(1)


@tasks_app.command("import")
def tasks_import(
    sources: Annotated[list[Path], typer.Argument(help="Task directories or folders of them.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Harbor task dirs.")],
    layout: Annotated[
        str | None, typer.Option(help="harbor or terminal-bench-1 (default: detect).")
    ] = None,
) -> None:
    """Import public tasks (Harbor or Terminal-Bench 1 layout) so they run offline here."""
    if layout not in (None, "harbor", "terminal-bench-1"):
        raise FactoryError(f"--layout must be harbor or terminal-bench-1, not {layout!r}")
    _import(sources, out, layout)


@tasks_app.command("import-tb1")
def tasks_import_tb1(
    sources: Annotated[list[Path], typer.Argument(help="Terminal-Bench 1 task directories.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Harbor task dirs.")],
) -> None:
    """Convert Terminal-Bench 1 tasks to the Harbor layout, runnable offline."""
    _import(sources, out, "terminal-bench-1")


@tasks_app.command("import-bfcl")
def tasks_import_bfcl(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Harbor task dirs.")],
    entries: Annotated[
        list[str] | None, typer.Argument(help="More entries to import (as for --ids).")
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option(
            help="bfcl_eval wheel or unpacked folder (default: $FACTORY_BFCL_WHEEL, an installed "
            "bfcl_eval, then ~/.cache/factory/wheels/bfcl_eval-*.whl)."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Import at most this many entries.")] = None,
    ids: Annotated[
        list[str] | None,
        typer.Option(
            "--ids",
            help="Entries to import (default: all): multi_turn_base_12, bfcl-multi-turn-base-12 "
            "or 12; repeat it, separate with commas or list more after it.",
        ),
    ] = None,
) -> None:
    """Turn BFCL's multi-turn base entries into tool tasks (tool server + final-state and
    response checks), runnable offline. DIR/.bfcl-import.json lists every skip and its reason."""
    from factory.importers.bfcl_tasks import REPORT_NAME, EntryResult, import_bfcl

    wanted = [i for item in [*(ids or []), *(entries or [])] for i in item.split(",") if i]

    def show(result: EntryResult) -> None:
        if result.skipped:
            console.print(
                f"[yellow]skipped[/] {result.entry_id}: {result.skipped}",
                highlight=False,
                soft_wrap=True,
            )
        else:
            console.print(f"[green]imported[/] {result.entry_id} -> {result.dest}", highlight=False)

    report = import_bfcl(out, source=source, ids=wanted, limit=limit, on_result=show)
    console.print(
        f"{len(report.imported)} imported, {len(report.skipped)} skipped "
        f"(bfcl-eval {report.version or '?'}); report: {out / REPORT_NAME}"
    )


@tasks_app.command("check")
def tasks_check(
    task_dirs: Annotated[list[Path], typer.Argument(help="Task directories or folders of them.")],
) -> None:
    """Parse tasks without Docker: report malformed files, one line each."""
    from factory.tasks.model import discover_task_dirs, load_task

    bad = 0
    for path in discover_task_dirs(task_dirs):
        try:
            task = load_task(path)
        except FactoryError as exc:
            bad += 1
            console.print(f"[red]invalid[/] {exc}", highlight=False, soft_wrap=True)
        else:
            console.print(f"[green]ok[/] {task.id} ({path})", highlight=False)
    if bad:
        raise typer.Exit(1)


# --- families ---------------------------------------------------------------------------

families_app = typer.Typer(no_args_is_help=True, help="Procedural task families.")
app.add_typer(families_app, name="families")


@families_app.command("list")
def families_list() -> None:
    """The registered procedural families."""
    from rich.table import Table

    from factory.families import registry

    table = Table(title=f"{len(registry.names())} families")
    for column in ("family", "domain", "category", "what"):
        table.add_column(column)
    for family in registry.all():
        table.add_row(family.name, family.domain.value, family.category, family.title)
    Console().print(table)
    for module, error in registry.broken.items():
        console.print(f"[red]broken module[/] factory/families/{module}.py: {error}")
    if registry.broken:
        raise typer.Exit(1)


@families_app.command("try")
def families_try(
    names: Annotated[list[str], typer.Argument(help="Family names (see `factory families list`).")],
    difficulty: Annotated[
        list[str] | None,
        typer.Option("--difficulty", "-d", help="easy/medium/hard (default: all)."),
    ] = None,
    seed: Annotated[
        list[int] | None, typer.Option("--seed", "-s", help="Seeds (default: 1).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where the tasks and logs go.")] = Path(
        "family-trials"
    ),
    jobs: Annotated[int, typer.Option("--jobs", "-j")] = 2,
    render_only: Annotated[
        bool, typer.Option("--render-only", help="Write the tasks, no Docker.")
    ] = False,
) -> None:
    """Render tasks of a family and certify them as generation would (validation + probes)."""
    from concurrent.futures import ThreadPoolExecutor

    from rich.table import Table

    from factory.generate.taxonomy import Difficulty
    from factory.generate.trial import certify_trial, render_trial
    from factory.runtime import DockerRuntime, new_run_id
    from factory.validate.validator import Validator

    try:
        levels = [Difficulty(d) for d in difficulty] if difficulty else list(Difficulty)
    except ValueError as exc:
        raise FactoryError(f"--difficulty: {exc}") from None
    try:
        trials = [
            render_trial(n, d, s, out / "tasks") for n in names for d in levels for s in seed or [1]
        ]
    except KeyError as exc:
        raise FactoryError(str(exc.args[0])) from None
    if render_only:
        for trial in trials:
            console.print(f"wrote {trial.path}")
        return
    runtime = DockerRuntime(new_run_id("families"), pool_size=max(16, 4 * jobs))
    runtime.ping()
    validator = Validator(runtime, out / "validation", jobs=jobs, force=True)
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            done = list(pool.map(lambda t: certify_trial(t, validator), trials))
    except KeyboardInterrupt:
        runtime.close()
        raise typer.Exit(130) from None
    finally:
        runtime.close()
    table = Table(title="family trials")
    for column in ("task", "outcome", "strength", "probes", "reason"):
        table.add_column(column, overflow="fold")
    for trial in done:
        cert = trial.certificate
        probes = " ".join(f"{p.name}:{'ok' if p.rejected else 'PASSED'}" for p in cert.probes)
        strength = "-" if cert.verifier_strength is None else f"{cert.verifier_strength:.2f}"
        table.add_row(trial.path.name, cert.outcome, strength, probes, cert.reason)
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    if any(not t.certificate.valid for t in done):
        raise typer.Exit(1)


# --- generate / suite ---------------------------------------------------------------------

suite_app = typer.Typer(no_args_is_help=True, help="Generated suites.")
app.add_typer(suite_app, name="suite")


@app.command("generate")
def generate(
    taxonomy_file: Annotated[
        Path, typer.Argument(help="Taxonomy YAML (see examples/taxonomy.yaml).")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Suite folder (default: suites/<suite name>)."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(help="procedural or llm for every leaf (default: each leaf's generator)."),
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", help="Candidates certified in parallel.")
    ] = 2,
    seed: Annotated[int | None, typer.Option(help="Override the taxonomy's seed.")] = None,
    llm_base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (env FACTORY_LLM_BASE_URL).")
    ] = None,
    llm_model: Annotated[
        str | None, typer.Option(help="Model name (env FACTORY_LLM_MODEL).")
    ] = None,
    llm_api_key_env: Annotated[
        str, typer.Option(help="Environment variable holding the API key.")
    ] = "OPENAI_API_KEY",
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
    executor: Annotated[str, _EXECUTOR_OPTION] = "local",
    ray_address: Annotated[str | None, _RAY_ADDRESS_OPTION] = None,
    ray_shared_fs: Annotated[bool, _RAY_SHARED_FS_OPTION] = False,
) -> None:
    """Generate a suite of verified tasks from a taxonomy (every candidate is certified in
    containers; only valid ones enter SUITE/tasks)."""
    from factory.distributed import executor_options

    options = executor_options(executor, ray_address, ray_shared_fs)
    from factory.generate.backends import BackendChoice, LlmOptions, backend_factory
    from factory.generate.display import GenerationProgress, print_coverage
    from factory.generate.pipeline import SuiteGenerator
    from factory.generate.taxonomy import load_taxonomy
    from factory.runtime import DockerRuntime, new_run_id

    taxonomy = load_taxonomy(taxonomy_file)
    if seed is not None:
        taxonomy.seed = seed
    out = out or Path("suites") / taxonomy.suite
    try:
        choice = BackendChoice(backend) if backend else None
    except ValueError:
        raise FactoryError(f"--backend must be procedural or llm, not {backend!r}") from None
    from factory.llm import api_key_from_env

    llm = LlmOptions(
        base_url=llm_base_url or os.environ.get("FACTORY_LLM_BASE_URL"),
        model=llm_model or os.environ.get("FACTORY_LLM_MODEL"),
        api_key=api_key_from_env(llm_api_key_env),
        concurrency=llm_concurrency,
        max_tokens=llm_max_tokens,
        max_cost_usd=llm_max_cost,
        cache_dir=out / "llm-cache",
        max_output_tokens=llm_max_output,
        temperature=llm_temperature,
        parse_repairs=repair_rounds,
    )
    backends = backend_factory(taxonomy, choice, llm)
    runtime = DockerRuntime(new_run_id("generate"), pool_size=max(16, 4 * jobs))
    cluster = _ray_cluster(options, runtime.run_id, jobs)
    if cluster is None:
        runtime.ping()
    progress = GenerationProgress(taxonomy, console)
    generator_class, extra = SuiteGenerator, {}
    if cluster is not None:
        from factory.distributed.generate import RaySuiteGenerator

        generator_class = RaySuiteGenerator
        extra = {"cluster": cluster, "shared_fs": options.shared_fs}
    generator = generator_class(
        taxonomy,
        taxonomy_file.read_text(encoding="utf-8"),
        out,
        runtime,
        backends,
        jobs=jobs,
        repair_rounds=repair_rounds,
        on_result=progress.result,
        **extra,
    )
    try:
        with progress:
            manifest = generator.run()
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: removing this run's containers; rerun to resume[/]")
        runtime.close()
        raise typer.Exit(130) from None
    finally:
        runtime.close()
        if cluster is not None:
            cluster.shutdown()
    print_coverage(manifest, Console(width=None if sys.stdout.isatty() else 160))
    console.print(f"suite: {out} ({len(manifest.tasks)} tasks)")
    if not all(c.complete for c in manifest.coverage):
        raise typer.Exit(1)


@suite_app.command("show")
def suite_show(
    suite: Annotated[Path, typer.Argument(help="A suite folder made by `factory generate`.")],
) -> None:
    """Coverage per taxonomy leaf: quota, candidates, valid, yield, outcomes, time, LLM cost."""
    from factory.generate.display import print_coverage
    from factory.generate.pipeline import load_suite_manifest

    print_coverage(load_suite_manifest(suite), Console(width=None if sys.stdout.isatty() else 160))


# --- train / eval -----------------------------------------------------------------------


def _trainer_modules():
    try:
        import factory_train.trainer  # noqa: F401 - torch lives behind this import
    except ImportError as exc:
        raise FactoryError(
            f"the trainer needs its extra ({exc.name} is missing): pip install -e '.[train]'"
        ) from None


@app.command("train")
def train(
    suite: Annotated[
        Path, typer.Argument(help="A suite folder (SUITE/tasks/...) or a folder of tasks.")
    ],
    model: Annotated[
        str | None, typer.Option(help="Local checkpoint folder, .gguf file or known local name.")
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="train.yaml")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Run folder.")] = None,
    resume: Annotated[
        bool, typer.Option(help="Continue from the run folder's last checkpoint.")
    ] = False,
    steps: Annotated[int | None, typer.Option(help="Override config.steps.")] = None,
    seed: Annotated[int | None, typer.Option(help="Override config.seed.")] = None,
) -> None:
    """GRPO on a suite: multi-turn rollouts in the tasks' containers, reward from the verifier."""
    _trainer_modules()
    from factory_train.config import load_train_config
    from factory_train.trainer import Trainer

    settings = load_train_config(config, model=model, steps=steps, seed=seed)
    out = out or Path("runs") / f"train-{suite.resolve().name}"
    if out.exists() and any(out.iterdir()) and not resume and (out / "checkpoints").exists():
        raise FactoryError(
            f"{out} holds an earlier run: pass --resume to continue it, or another --out"
        )
    trainer = Trainer(
        suite, settings, out, resume=resume, say=lambda m: console.print(m, highlight=False)
    )
    try:
        trainer.setup()
        trainer.train()
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: resume with --resume[/]")
        trainer.close()
        raise typer.Exit(130) from None
    console.print(f"run: {out} (metrics.jsonl, reward.png, checkpoints/)")


@app.command("eval")
def evaluate(
    suite: Annotated[Path, typer.Argument(help="A suite folder or a folder of tasks.")],
    model: Annotated[
        str | None, typer.Option(help="Checkpoint folder, .gguf or local name (default: config's).")
    ] = None,
    split: Annotated[str, typer.Option(help="test (held-out families), train, or all.")] = "test",
    k: Annotated[int, typer.Option("--k", help="Episodes per task (pass@k).")] = 4,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="train.yaml (split, harness).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o")] = Path("runs/eval"),
    executor: Annotated[str, _EXECUTOR_OPTION] = "local",
    ray_address: Annotated[str | None, _RAY_ADDRESS_OPTION] = None,
    ray_shared_fs: Annotated[bool, _RAY_SHARED_FS_OPTION] = False,
) -> None:
    """pass@1 and pass@k per family of a model on a suite's tasks."""
    from factory.distributed import executor_options

    options = executor_options(executor, ray_address, ray_shared_fs)
    _trainer_modules()
    from factory_train.config import load_train_config
    from factory_train.run_eval import run_evaluation
    from rich.table import Table

    if split not in ("test", "train", "all"):
        raise FactoryError(f"--split must be test, train or all, not {split!r}")
    settings = load_train_config(config, model=model)
    say = lambda m: console.print(m, highlight=False)  # noqa: E731
    if options.is_ray:
        from factory_train.ray_eval import run_evaluation_ray

        from factory.runtime import new_run_id

        cluster = _ray_cluster(options, new_run_id("eval"), settings.concurrency)
        try:
            summary = run_evaluation_ray(
                suite, settings, cluster, split=split, k=k, out=out,
                shared_fs=options.shared_fs, say=say,
            )  # fmt: skip
        finally:
            cluster.shutdown()
    else:
        summary = run_evaluation(suite, settings, split=split, k=k, out=out, say=say)
    table = Table(title=f"{settings.model} on {suite} ({split}, k={k})")
    for column in ("family", "tasks", "pass@1", f"pass@{k}"):
        table.add_column(column)
    for family, row in summary["families"].items():
        table.add_row(
            family, str(row["tasks"]), f"{row['pass_at_1']:.3f}", f"{row[f'pass_at_{k}']:.3f}"
        )
    table.add_row(
        "all",
        str(summary["tasks"]),
        f"{summary['pass_at_1']:.3f}",
        f"{summary[f'pass_at_{k}']:.3f}",
    )
    Console().print(table)


@app.command("calibrate")
def calibrate(
    suite: Annotated[Path, typer.Argument(help="A suite folder or a folder of tasks.")],
    model: Annotated[
        str,
        typer.Option(
            help="Local checkpoint folder, .gguf file or known local name; with --base-url, "
            "the endpoint's model name."
        ),
    ],
    k: Annotated[int, typer.Option("--k", help="Episodes per task.", min=1)] = 8,
    band: Annotated[
        str, typer.Option(help="LOW,HIGH: pass rates kept; above: retired; below: too hard.")
    ] = "0.1,0.7",
    base_url: Annotated[
        str | None, typer.Option(help="The policy behind an OpenAI-compatible endpoint.")
    ] = None,
    api_key_env: Annotated[
        str, typer.Option(help="Environment variable holding the endpoint's API key.")
    ] = "OPENAI_API_KEY",
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", help="Episodes (endpoint) / candidates in parallel.")
    ] = 2,
    regenerate: Annotated[
        bool,
        typer.Option("--regenerate", help="Ask the generators for new tasks for leaves left thin."),
    ] = False,
    rounds: Annotated[int, typer.Option(help="--regenerate: rounds at most.", min=1)] = 1,
    retire_too_hard: Annotated[
        bool, typer.Option("--retire-too-hard", help="Also retire tasks below the band.")
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="train.yaml: sampling and harness settings."),
    ] = None,
    batch: Annotated[
        int, typer.Option(help="Local model: episodes generated together.", min=1)
    ] = 16,
    max_tokens: Annotated[
        int | None,
        typer.Option(help="Tokens per policy reply (default: config / 512 for an endpoint)."),
    ] = None,
    flake_runs: Annotated[
        int,
        typer.Option(
            "--flake-runs", help="Also measure the kept tasks' verifier flake rate.", min=0
        ),
    ] = 0,
    llm_base_url: Annotated[
        str | None,
        typer.Option(help="--regenerate, llm leaves: the generator's endpoint."),
    ] = None,
    llm_model: Annotated[
        str | None, typer.Option(help="--regenerate, llm leaves: the generator's model.")
    ] = None,
) -> None:
    """Measure each task's pass rate with the policy (k episodes, verifier reward), store it
    in the task's metadata (pass_rate), retire what the policy always solves (above the band)
    to SUITE/retired/, and with --regenerate refill thin leaves. Resumes from its journal."""
    from factory.calibrate.band import Band
    from factory.calibrate.display import CalibrationProgress, print_summary
    from factory.calibrate.run import Calibrator
    from factory.runtime import DockerRuntime, new_run_id

    bounds = Band.parse(band)
    if base_url is None:
        _trainer_modules()
    from factory_train.config import load_train_config

    settings = load_train_config(
        config, model=model, max_new_tokens=None if base_url else max_tokens
    )
    if base_url:
        from factory.agent.actions import ActionFormat
        from factory.agent.harness import HarnessConfig
        from factory.calibrate.policy import EndpointEstimator
        from factory.llm import LlmClient, LlmSettings, api_key_from_env

        client = LlmClient(
            LlmSettings(
                base_url=base_url,
                model=model,
                api_key=api_key_from_env(api_key_env),
                concurrency=jobs,
                cache_dir=suite / "calibration" / "llm-cache",
            )
        )
        harness = HarnessConfig(
            max_turns=settings.max_turns,
            command_timeout_sec=settings.command_timeout_sec,
            max_observation_chars=settings.max_observation_chars,
            action_format=ActionFormat.FENCED,
        )
        estimator = EndpointEstimator(
            client,
            harness,
            temperature=settings.temperature,
            max_tokens=max_tokens or 512,
            jobs=jobs,
            seed=settings.seed,
        )
    else:
        from factory.calibrate.policy import LocalEstimator

        estimator = LocalEstimator(
            settings, batch_episodes=batch, say=lambda m: console.print(m, highlight=False)
        )
    backends = None
    if regenerate and (suite / "taxonomy.yaml").is_file():
        from factory.generate.backends import LlmOptions, backend_factory
        from factory.generate.taxonomy import load_taxonomy
        from factory.llm import api_key_from_env

        llm = LlmOptions(
            base_url=llm_base_url or os.environ.get("FACTORY_LLM_BASE_URL"),
            model=llm_model or os.environ.get("FACTORY_LLM_MODEL"),
            api_key=api_key_from_env("OPENAI_API_KEY"),
            cache_dir=suite / "llm-cache",
        )
        backends = backend_factory(load_taxonomy(suite / "taxonomy.yaml"), None, llm)
    runtime = DockerRuntime(new_run_id("calibrate"), pool_size=max(16, 4 * jobs))
    runtime.ping()
    progress = CalibrationProgress(console, k)
    calibrator = Calibrator(
        suite,
        estimator,
        runtime,
        k=k,
        band=bounds,
        retire_too_hard=retire_too_hard,
        regenerate=regenerate,
        rounds=rounds,
        jobs=jobs,
        backends=backends,
        flake_runs=flake_runs,
        events=progress,
    )
    try:
        with progress:
            summary = calibrator.run()
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: removing this run's containers; rerun to resume[/]")
        runtime.close()
        raise typer.Exit(130) from None
    finally:
        estimator.close()
        runtime.close()
    print_summary(summary, Console(width=None if sys.stdout.isatty() else 160))
    console.print(f"journal: {suite / 'calibration'}")


# --- validate ---------------------------------------------------------------------------

# --executor: shared by validate, generate and eval (factory/distributed).
_EXECUTOR_OPTION = typer.Option(
    "--executor",
    help="local: threads on this machine. ray: Ray tasks on the nodes of a Ray cluster, each "
    "with its own Docker engine and 'docker_slots' (see README).",
)
_RAY_ADDRESS_OPTION = typer.Option(
    "--ray-address",
    help="Head of a running Ray cluster (HOST:PORT or auto); default: a one-node Ray instance "
    "in this process with --jobs slots (eval: the config's concurrency).",
)
_RAY_SHARED_FS_OPTION = typer.Option(
    "--ray-shared-fs",
    help="Every Ray node sees the task folders at the same paths: send paths, not copies.",
)


def _ray_cluster(options, run_id: str, jobs: int):
    """Connect to Ray when --executor ray (None for local); checks every node first."""
    if not options.is_ray:
        return None
    from factory.distributed.cluster import RayCluster

    cluster = RayCluster(options, run_id=run_id, local_slots=jobs)
    try:
        cluster.preflight()
    except BaseException:
        cluster.shutdown()
        raise
    console.print(f"[dim]ray: {cluster.describe()}[/]", highlight=False)
    return cluster


@app.command("validate")
def validate(
    task_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Task directories (Harbor or Terminal-Bench 1 layout), or folders holding them."
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for validation.json and the phase logs.")
    ] = Path("validation"),
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Tasks validated in parallel.")] = 1,
    repeats: Annotated[
        int, typer.Option("--repeats", "-k", help="Runs of each phase; disagreement = flaky.")
    ] = 2,
    force: Annotated[
        bool, typer.Option("--force", help="Re-validate tasks already certified in --out.")
    ] = False,
    executor: Annotated[str, _EXECUTOR_OPTION] = "local",
    ray_address: Annotated[str | None, _RAY_ADDRESS_OPTION] = None,
    ray_shared_fs: Annotated[bool, _RAY_SHARED_FS_OPTION] = False,
    flake_runs: Annotated[
        int,
        typer.Option(
            "--flake-runs",
            help="Then rerun nop + oracle of each valid task N times under perturbation (time "
            "zone, hash seed, CPU load); store flake_rate in its task.toml.",
            min=0,
        ),
    ] = 0,
    probes: Annotated[
        bool,
        typer.Option(
            "--probes",
            help="Then run the cheat probes on each valid task (trivial agents and every "
            "tampering attack of factory/validate/attacks); one that scores makes it cheat_passed.",
        ),
    ] = False,
) -> None:
    """Certify tasks in containers: tests fail on the untouched environment, pass after the
    reference solution. Prints a table; writes OUT/validation.json (and OUT/flake/flake.json
    with --flake-runs)."""
    from factory.distributed import executor_options
    from factory.runtime import DockerRuntime, new_run_id
    from factory.tasks.model import discover_task_dirs
    from factory.validate.display import ValidationProgress, print_summary
    from factory.validate.validator import Validator

    options = executor_options(executor, ray_address, ray_shared_fs)
    dirs = discover_task_dirs(task_dirs)
    if not dirs:
        raise FactoryError("no task directories given")
    runtime = DockerRuntime(new_run_id("validate"), pool_size=max(16, 4 * jobs))
    cluster = _ray_cluster(options, runtime.run_id, jobs)
    if cluster is None:
        runtime.ping()  # fail fast, before any progress bar, when the engine is down
    progress = ValidationProgress(len(dirs), console)
    common = dict(
        repeats=repeats,
        force=force,
        probes=probes,
        on_task_start=progress.started,
        on_task_done=progress.done,
    )
    if cluster is not None:
        from factory.distributed.validate import RayValidator

        validator = RayValidator(runtime, out, cluster, shared_fs=options.shared_fs, **common)
    else:
        validator = Validator(runtime, out, jobs=jobs, **common)
    try:
        with progress:
            report = validator.run(dirs)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: removing this run's containers[/]")
        runtime.close()
        console.print(f"partial report: {validator.report_path}")
        raise typer.Exit(130) from None
    finally:
        runtime.close()
        if cluster is not None:
            cluster.shutdown()
    print_summary(report, Console(width=None if sys.stdout.isatty() else 160))
    console.print(f"report: {validator.report_path}")
    if flake_runs:
        _flake_runs(report, flake_runs, out / "flake", jobs)
    if any(t.outcome.value != "valid" for t in report.tasks):
        raise typer.Exit(1)


def _flake_runs(report, runs: int, out: Path, jobs: int) -> None:
    """`validate --flake-runs`: perturbed reruns of the valid tasks, a table of flake rates."""
    from rich.table import Table

    from factory.quality.flake import PERTURBATIONS, flake_checks
    from factory.runtime import DockerRuntime, new_run_id

    targets = [
        (Path(t.path), t.image) for t in report.tasks if t.outcome.value == "valid" and t.image
    ]
    if not targets:
        return
    console.print(f"flake runs: {len(targets)} tasks x {runs} perturbed nop + oracle pairs")
    runtime = DockerRuntime(new_run_id("flake"), pool_size=max(16, 4 * jobs))
    try:
        results = flake_checks(runtime, targets, runs, out, jobs=jobs)
    except KeyboardInterrupt:
        runtime.close()
        raise typer.Exit(130) from None
    finally:
        runtime.close()
    table = Table(title=f"verifier flake rate ({runs} perturbed runs per task)")
    for column in ("task", "flake rate", *PERTURBATIONS, "infra"):
        table.add_column(column)
    for result in results:
        parts = result.by_perturbation()
        rate = result.flake_rate
        table.add_row(
            result.task_dir.name,
            "-" if rate is None else f"[{'red' if rate else 'green'}]{rate:.2f}[/]",
            *[f"{parts[p][0]}/{parts[p][1]}" if p in parts else "-" for p in PERTURBATIONS],
            str(result.infra_errors),
        )
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    console.print(f"flake report: {out / 'flake.json'}")


# --- publish ----------------------------------------------------------------------------


@app.command("lint")
def lint(
    paths: Annotated[list[Path], typer.Argument(help="Task directories or folders of them.")],
    harness: Annotated[
        str | None,
        typer.Option(help="Also report what this harness refuses on this host: harbor-docker."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per finding.")] = False,
) -> None:
    """What Harbor's linter and other harnesses would say about tasks (exit 1 on findings)."""
    from factory.runtime import DockerRuntime
    from factory.tasks.lint import PROBE_IMAGE, lint_paths, local_harbor_docker_host

    if harness not in (None, "harbor-docker"):
        raise typer.BadParameter(f"unknown harness {harness!r} (known: harbor-docker)")
    host = None
    if harness == "harbor-docker":
        host = local_harbor_docker_host(image_present=DockerRuntime().image_exists(PROBE_IMAGE))
    findings = lint_paths(paths, host=host)
    for finding in findings:
        print(finding.model_dump_json() if as_json else finding.line())
    tasks = len({finding.task for finding in findings})
    console.print(f"{len(findings)} finding(s) in {tasks} task(s)")
    raise typer.Exit(1 if findings else 0)


@app.command("export")
def export(
    suite: Annotated[
        Path, typer.Argument(help="A suite folder (suite.json) or a folder of task directories.")
    ],
    format_: Annotated[
        str, typer.Option("--format", "-f", help="jsonl, harbor or hf (Hugging Face parquet).")
    ],
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
) -> None:
    """Export a suite's tasks: a JSONL index with hashes, a Harbor registry dataset, or a
    Hugging Face datasets parquet dataset with a dataset card. `factory import` reads it back."""
    from factory.publish.api import export_suite

    result = export_suite(
        suite,
        format_,
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
        console.print(f"[yellow]warning[/] {warning}", highlight=False, soft_wrap=True)
    manifest = result.manifest
    console.print(
        f"exported {manifest.task_count} tasks ({manifest.format}) to {out}: "
        f"{', '.join(manifest.index)}; content hash {manifest.content_hash[:16]}",
        highlight=False,
    )


@app.command("import")
def import_(
    src: Annotated[
        Path,
        typer.Argument(
            help="An export folder, or its tasks.jsonl, registry.json or a parquet file."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the task directories.")],
    format_: Annotated[
        str | None, typer.Option("--format", "-f", help="Expect this format (default: detect).")
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            help="harbor: the dataset (name or name@version) of a multi-dataset registry."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace task directories that differ.")
    ] = False,
) -> None:
    """Rebuild task directories from an export (jsonl, harbor or hf), checking every task
    against the content hash the export recorded."""
    from factory.publish.api import import_export

    def show(task) -> None:
        console.print(f"[green]{task.status}[/] {task.id} -> {task.dest}", highlight=False)

    result = import_export(src, out, fmt=format_, dataset=dataset, force=force, on_task=show)
    console.print(f"{len(result.tasks)} tasks from a {result.format} export into {out}")


@app.command("report")
def report(
    suite: Annotated[Path, typer.Argument(help="A suite folder made by `factory generate`.")],
    html: Annotated[Path, typer.Option("--html", help="Where the HTML page goes.")],
    samples: Annotated[int, typer.Option(help="Sample tasks shown.", min=0)] = 6,
) -> None:
    """One self-contained HTML page: coverage, yield, outcomes, difficulty, pass rate, timings,
    verifier strength and sample tasks, with inline SVG charts."""
    from factory.publish.report import write_report

    write_report(suite, html, samples=samples)
    console.print(f"report: {html}")


# --- gc ---------------------------------------------------------------------------------


@app.command("gc")
def gc(
    images: Annotated[
        bool, typer.Option("--images", help="Also remove cached task images.")
    ] = False,
    run_id: Annotated[str | None, typer.Option("--run", help="Only this run's leftovers.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Also remove containers of runs that are still alive.")
    ] = False,
) -> None:
    """Remove containers and images that killed runs left behind."""
    from factory.runtime import DockerRuntime, collect_garbage

    report = collect_garbage(DockerRuntime(), run_id=run_id, task_images=images, force=force)
    console.print(
        f"removed {len(report.containers)} container(s), {len(report.images)} image(s)"
        + (
            f"; left {len(report.skipped_live)} of live runs (use --force)"
            if report.skipped_live
            else ""
        )
    )


def main() -> None:
    """Entry point: run the app, turning FactoryError into one line and SIGTERM into Ctrl-C."""

    def _terminate(signum, frame):  # noqa: ARG001
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    try:
        app()
    except FactoryError as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]")
        sys.exit(130)
