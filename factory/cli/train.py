"""`factory train`, `factory eval` and `factory calibrate`: a policy in the loop. The trainer
(torch) is reached only through :mod:`factory.trainer_plugin`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factory.agent.evaluation import Split
from factory.cli import options as opt
from factory.cli.common import (
    console,
    emit,
    existing,
    interruptible,
    job,
    llm_options,
    say,
    stdout_console,
)

Suite = Annotated[Path, existing("A suite folder (SUITE/tasks/...) or a folder of tasks.")]


def register(root: typer.Typer) -> None:
    root.command("train")(train)
    root.command("eval")(evaluate)
    root.command("calibrate")(calibrate)


def train(
    suite: Suite,
    model: opt.Model = None,
    config: opt.Config = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Run folder (default: runs/train-SUITE).")
    ] = None,
    resume: Annotated[
        bool, typer.Option(help="Continue from the run folder's last checkpoint.")
    ] = False,
    steps: Annotated[int | None, typer.Option(help="Override config.steps.")] = None,
    seed: Annotated[int | None, typer.Option(help="Override config.seed.")] = None,
    json_: opt.Json = False,
) -> None:
    """Train a local model with RL (GRPO, or RLOO: config.algorithm) on a suite.

    Multi-turn rollouts in the tasks' containers, the reward from each task's verifier;
    RUN/metrics.jsonl, RUN/reward.png, RUN/checkpoints/. --resume continues a killed run."""
    from factory.progress import Bar
    from factory.trainer_plugin import load_trainer

    trainer = load_trainer()
    settings = trainer.load_config(config, model=model, steps=steps, seed=seed)
    out = out or Path("runs") / f"train-{suite.resolve().name}"
    rows: list[dict] = []
    bar = Bar("train", console, settings.steps)

    def step(row: dict) -> None:
        rows.append(row)
        bar.reach(row["step"], f"reward {row['reward_mean']:.3f} pass {row['pass_rate']:.2f}")

    with interruptible(bar, hint="resume with --resume"):
        trainer.train(suite, settings, out, resume=resume, on_step=step, say=bar.say)
    say(escape(f"run: {out} (metrics.jsonl, reward.png, checkpoints/)"))
    if json_:
        emit({"run": out, "steps": len(rows), "metrics": rows})


def _policy(model, config, base_url, api_key_env, jobs, batch, max_tokens, action_format):
    from factory.agent.policy import PolicyChoice

    return PolicyChoice(
        model, config, base_url, api_key_env, jobs, batch, max_tokens, action_format
    )


def evaluate(
    suite: Suite,
    model: opt.Model = None,
    split: Annotated[
        Split, typer.Option(help="Which tasks: held-out families (test).")
    ] = Split.TEST,
    k: opt.Episodes = opt.DEFAULT_EPISODES,
    config: opt.Config = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for eval.json and the transcripts.")
    ] = Path("runs/eval"),
    base_url: opt.BaseUrl = None,
    api_key_env: opt.ApiKeyEnv = opt.DEFAULT_KEY_ENV,
    max_tokens: opt.MaxTokens = None,
    action_format: opt.Actions = None,
    jobs: opt.Jobs = opt.DEFAULT_JOBS,
    batch: opt.Batch = opt.DEFAULT_BATCH,
    executor: opt.Executors = opt.LOCAL,
    ray_address: opt.RayAddress = None,
    ray_shared_fs: opt.RayShared = False,
    json_: opt.Json = False,
) -> None:
    """pass@1, pass@k and pass^k (all k succeed) per family of a policy on a suite's tasks.

    The policy is a local model (the config's unless --model; sampling, harness and split
    from the config), or a model behind --base-url (acting with native tool calls unless
    --action-format fenced); k episodes per task of the split, the reward from each task's
    verifier; a local model's episodes run in process when the config says environment:
    in-process. Writes OUT/eval.json and OUT/transcript.jsonl."""
    from factory.agent.evaluation import SuiteSplit, evaluate_endpoint, evaluate_suite
    from factory.progress import Bar

    policy = _policy(model, config, base_url, api_key_env, jobs, batch, max_tokens, action_format)
    settings = policy.settings()
    chosen = SuiteSplit.of(settings, split)
    bar = Bar("eval", console)
    progress = {
        "on_start": bar.grow,
        "on_task": lambda key, _r: bar.advance(description=escape(key)),
    }
    in_process = base_url is None and settings.environment == "in-process"
    with job("eval", jobs, executor=executor, ray_address=ray_address, ray_shared_fs=ray_shared_fs,
             progress=bar, in_process=in_process) as where:  # fmt: skip
        if base_url is not None:
            summary = evaluate_endpoint(
                suite, policy.client(out / "llm-cache"), policy.harness(settings),
                executor=where, split=chosen, seed=settings.seed, k=k, out=out, jobs=jobs,
                temperature=settings.temperature, max_tokens=policy.endpoint_max_tokens, say=say,
                **progress,
            )  # fmt: skip
        else:
            runner = policy.runner(settings, cache_dir=out / "llm-cache", say=say)
            try:
                summary = evaluate_suite(suite, runner, where, chosen, k=k, out=out, **progress)
            finally:
                runner.close()
    if json_:
        return emit({"model": settings.model, "suite": suite, "split": split, **summary})
    _print_pass_rates(summary, f"{settings.model} on {suite} ({split.value}, k={k})", k)


def calibrate(
    suite: Suite,
    model: opt.Model = None,
    k: opt.Episodes = opt.DEFAULT_EPISODES,
    band: Annotated[
        str, typer.Option(help="LOW,HIGH: pass rates kept; above: retired; below: too hard.")
    ] = "0.1,0.7",
    base_url: opt.BaseUrl = None,
    api_key_env: opt.ApiKeyEnv = opt.DEFAULT_KEY_ENV,
    max_tokens: opt.MaxTokens = None,
    action_format: opt.Actions = None,
    jobs: opt.Jobs = opt.DEFAULT_JOBS,
    batch: opt.Batch = opt.DEFAULT_BATCH,
    config: opt.Config = None,
    regenerate: Annotated[
        bool,
        typer.Option("--regenerate", help="Ask the generators for new tasks for leaves left thin."),
    ] = False,
    rounds: Annotated[int, typer.Option(help="--regenerate: rounds at most.", min=1)] = 1,
    retire_too_hard: Annotated[
        bool, typer.Option("--retire-too-hard", help="Also retire tasks below the band.")
    ] = False,
    flake_runs: opt.FlakeRuns = 0,
    llm_base_url: opt.LlmBaseUrl = None,
    llm_model: opt.LlmModel = None,
    llm_api_key_env: opt.LlmApiKeyEnv = opt.DEFAULT_KEY_ENV,
    json_: opt.Json = False,
) -> None:
    """Measure each task's pass rate with the policy and keep the suite in band.

    k episodes per task (verifier reward); the rate goes into the task's metadata
    (pass_rate); tasks above the band go to SUITE/retired/; --regenerate refills thin leaves.
    Resumes from its journal."""
    from factory.calibrate.band import Band
    from factory.calibrate.display import CalibrationProgress, print_summary
    from factory.calibrate.run import CalibrationPlan

    plan = CalibrationPlan.load(
        suite,
        _policy(model, config, base_url, api_key_env, jobs, batch, max_tokens, action_format),
        k=k,
        band=Band.parse(band),
        llm=llm_options(llm_base_url, llm_model, llm_api_key_env),
        retire_too_hard=retire_too_hard,
        regenerate=regenerate,
        rounds=rounds,
        flake_runs=flake_runs,
        say=say,
    )
    progress = CalibrationProgress(console, k)
    with job("calibrate", jobs, progress=progress,
             hint="removing this run's containers; rerun to resume") as where:  # fmt: skip
        summary = plan.run(where, events=progress)
    if json_:
        emit(summary.to_json())
    else:
        print_summary(summary, stdout_console())
    say(escape(f"journal: {suite / 'calibration'}"))


def _print_pass_rates(summary: dict, title: str, k: int) -> None:
    """An eval summary as a table: pass@1, pass@k and pass^k per family and in all."""
    from rich.table import Table

    from factory.agent.passk import Metric, shown

    table = Table(title=title)
    at_k, hat_k = Metric.PASS_AT, Metric.PASS_HAT
    for column in ("family", "tasks", "pass@1", at_k.label(k), hat_k.label(k)):
        table.add_column(column)
    for family, row in [*summary["families"].items(), ("all", summary)]:
        table.add_row(
            family,
            str(row["tasks"]),
            shown(row["pass_at_1"]),
            shown(row[at_k.key(k)]),
            shown(row[hat_k.key(k)]),
        )
    stdout_console().print(table)
    if summary["tasks_short_of_k"]:
        say(
            f"{summary['tasks_short_of_k']} task(s) have fewer than {k} scored episodes "
            f"(infrastructure losses): left out of {at_k.label(k)} and {hat_k.label(k)}"
            " ('-': no task left)"
        )
