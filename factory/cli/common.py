"""What every command module shares: the consoles, checked path arguments, the task-writing
LLM's settings, JSON output, and the one sequence that runs a job: make an executor -> progress
bar -> Ctrl-C -> close -> exit 130. (The shared options: :mod:`factory.cli.options`.)"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from factory.distributed import ExecutorKind, executor_options
from factory.errors import FactoryError
from factory.executor import DEFAULT_JOBS, Executor
from factory.runtime import BuildNetwork

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


# --- arguments and settings ---------------------------------------------------------------


def existing(help: str, **extra: Any) -> Any:  # noqa: A002 - typer's word
    """A path argument the CLI checks (a missing one is a usage error, exit 2)."""
    return typer.Argument(help=help, exists=True, **extra)


def llm_options(
    base_url: str | None,
    model: str | None,
    api_key_env: str = "OPENAI_API_KEY",
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
    if hasattr(value, "model_dump"):  # a pydantic model (pydantic loads only when used)
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
    import json

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
        say(f"[yellow]interrupted{': ' + escape(hint) if hint else ''}[/]")
        raise typer.Exit(INTERRUPTED) from None


@contextmanager
def job(
    name: str,
    jobs: int = DEFAULT_JOBS,
    *,
    executor: ExecutorKind = ExecutorKind.LOCAL,
    ray_address: str | None = None,
    ray_shared_fs: bool = False,
    build_network: BuildNetwork = BuildNetwork.FILTERED,
    progress: Any = None,
    hint: str = "removing this run's containers",
    in_process: bool = False,
) -> Iterator[Executor]:
    """The executor of one run (checked before any progress bar shows), the progress bar, and
    on every way out the executor closed: a Ctrl-C cancels the units in flight and removes
    the run's containers, then exits 130. ``in_process``: agent episodes played in this
    process (tool tasks, ``environment: in-process``), no Docker."""
    from factory.distributed.executors import open_executor
    from factory.runtime import new_run_id

    options = executor_options(executor, ray_address, ray_shared_fs)
    if in_process:
        from factory.agent.backends import InProcessExecutor

        if options.is_ray:
            raise FactoryError(
                "environment: in-process plays the episodes in this process; drop --executor "
                "ray, or use environment: docker to host them on the cluster"
            )
        opened: Executor = InProcessExecutor(new_run_id(name), jobs)
    else:
        opened = open_executor(
            options,
            new_run_id(name),
            jobs,
            say=lambda m: say(f"[dim]{escape(m)}[/]"),
            build_network=build_network,
        )
    try:
        with interruptible(progress, hint):
            try:
                yield opened
            except KeyboardInterrupt:
                opened.cancel()
                raise
    finally:
        opened.close()
