"""What every command module shares: the consoles, the options that mean the same thing in
every command (one name, one help, one default each), JSON output, and the one sequence that
runs a job: make an executor -> progress bar -> Ctrl-C -> close -> exit 130."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console

from factory.distributed import ExecutorKind, executor_options
from factory.executor import DEFAULT_JOBS, Executor

console = Console(stderr=True)
"""Logs, progress and errors: stderr."""

FAILED = 1
"""Exit status when the job ran but not everything came out well (see the README)."""
INTERRUPTED = 130


def stdout_console() -> Console:
    """Tables for people on stdout (a fixed width when piped, so rows do not wrap at 80)."""
    return Console(width=None if sys.stdout.isatty() else 160)


def say(message: str) -> None:
    """A log line on stderr (rich markup; never wrapped, so it greps whole)."""
    console.print(message, highlight=False, soft_wrap=True)


# --- options shared by several commands ---------------------------------------------------

Json = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the result as one JSON document on stdout (logs and progress stay on stderr).",
    ),
]
Jobs = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Tasks, candidates or episodes worked on at once (each in containers of its own); "
        "with --executor ray and no --ray-address, the slots of the Ray instance started here.",
    ),
]
Executors = Annotated[
    ExecutorKind,
    typer.Option(
        "--executor",
        help="local: this machine's Docker engine. ray: the nodes of a Ray cluster, each with "
        "its own engine and 'docker_slots' (see README).",
    ),
]
RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="Head of a running Ray cluster (HOST:PORT or auto); default: a one-node Ray "
        "instance in this process with --jobs slots.",
    ),
]
RayShared = Annotated[
    bool,
    typer.Option(
        "--ray-shared-fs",
        help="Every Ray node sees the task folders at the same paths: send paths, not copies.",
    ),
]
Model = Annotated[
    str | None,
    typer.Option(
        help="The policy: a local checkpoint folder, .gguf file or known local name; with "
        "--base-url, the endpoint's model name. Default: the config's (SmolLM2-135M-Instruct)."
    ),
]
Config = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        exists=True,
        dir_okay=False,
        help="train.yaml: the trainer's settings (sampling, harness, split).",
    ),
]
Episodes = Annotated[int, typer.Option("--k", "-k", min=1, help="Episodes per task (pass@k).")]
Batch = Annotated[
    int, typer.Option("--batch", min=1, help="A local model: episodes generated together.")
]
BaseUrl = Annotated[
    str | None,
    typer.Option(help="The policy behind this OpenAI-compatible endpoint (model: --model)."),
]
ApiKeyEnv = Annotated[str, typer.Option(help="Environment variable holding --base-url's API key.")]
MaxTokens = Annotated[
    int | None,
    typer.Option(help="Tokens per policy reply (default: the config's; 512 for an endpoint)."),
]
FlakeRuns = Annotated[
    int,
    typer.Option(
        "--flake-runs",
        min=0,
        help="Then rerun nop + oracle of each valid task (calibrate: each kept one) N times "
        "under perturbation (time zone, hash seed, CPU load): its verifier flake rate, stored "
        "as flake_rate in its task.toml.",
    ),
]
DEFAULT_EPISODES = 4
DEFAULT_BATCH = 16
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def existing(help: str, **extra: Any) -> Any:  # noqa: A002 - typer's word
    """A path argument the CLI checks (a missing one is a usage error, exit 2)."""
    return typer.Argument(help=help, exists=True, **extra)


# --- the LLM that writes tasks (generate, calibrate --regenerate) ---------------------------

LlmBaseUrl = Annotated[
    str | None,
    typer.Option(envvar="FACTORY_LLM_BASE_URL", help="The task-writing LLM's endpoint."),
]
LlmModel = Annotated[
    str | None, typer.Option(envvar="FACTORY_LLM_MODEL", help="The task-writing LLM's model.")
]
LlmApiKeyEnv = Annotated[
    str, typer.Option(help="Environment variable holding --llm-base-url's API key.")
]


def llm_options(
    base_url: str | None,
    model: str | None,
    api_key_env: str = DEFAULT_KEY_ENV,
    **settings: Any,
):
    """The task-writing LLM's settings (the one place they are built)."""
    from factory.generate.backends import LlmOptions
    from factory.llm import api_key_from_env

    return LlmOptions(
        base_url=base_url, model=model, api_key=api_key_from_env(api_key_env), **settings
    )


# --- results -------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """JSON-ready data from models, dataclasses, paths and enums."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if is_dataclass(value) and not isinstance(value, type):
        return plain(asdict(value))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    return value


def emit(data: Any) -> None:
    """The command's result as one JSON document on stdout."""
    sys.stdout.write(json.dumps(plain(data), indent=2) + "\n")
    sys.stdout.flush()


# --- the run sequence ----------------------------------------------------------------------


@contextmanager
def interruptible(progress: Any = None, hint: str = "") -> Iterator[Any]:
    """Show ``progress`` while the body runs; Ctrl-C (or SIGTERM) ends the command with 130
    after saying ``hint``. Callers close what they opened on the way out."""
    try:
        with progress or nullcontext() as shown:
            yield shown
    except KeyboardInterrupt:
        say(f"[yellow]interrupted{': ' + hint if hint else ''}[/]")
        raise typer.Exit(INTERRUPTED) from None


@contextmanager
def job(
    name: str,
    jobs: int = DEFAULT_JOBS,
    *,
    executor: ExecutorKind = ExecutorKind.LOCAL,
    ray_address: str | None = None,
    ray_shared_fs: bool = False,
    progress: Any = None,
    hint: str = "removing this run's containers",
) -> Iterator[Executor]:
    """The executor of one run (checked before any progress bar shows), the progress bar, and
    on every way out the executor closed: a Ctrl-C cancels the units in flight and removes
    the run's containers, then exits 130."""
    from factory.distributed.executors import open_executor
    from factory.runtime import new_run_id

    options = executor_options(executor, ray_address, ray_shared_fs)
    opened = open_executor(options, new_run_id(name), jobs, say=lambda m: say(f"[dim]{m}[/]"))
    try:
        with interruptible(progress, hint):
            try:
                yield opened
            except KeyboardInterrupt:
                opened.cancel()
                raise
    finally:
        opened.close()
