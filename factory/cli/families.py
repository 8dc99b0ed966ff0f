"""`factory families`: the procedural task families, listed and tried outside a suite."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from factory.cli import options as opt
from factory.cli.common import FAILED, console, emit, job, say, stdout_console
from factory.vocabulary import Difficulty

app = typer.Typer(no_args_is_help=True, help="Procedural task families.")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="families")


@app.command("list")
def list_(json_: opt.Json = False) -> None:
    """The registered procedural families.

    A table on a terminal, tab-separated rows (name, domain, category, title) when piped.
    Exit 1 when a family module does not import."""
    from factory.families import registry

    families = registry.all()
    if json_:
        emit(
            {
                "families": [
                    {"name": f.name, "domain": f.domain, "category": f.category, "title": f.title}
                    for f in families
                ],
                "broken": registry.broken,
            }
        )
    elif sys.stdout.isatty():
        from rich.table import Table

        table = Table(title=f"{len(families)} families")
        for column in ("family", "domain", "category", "what"):
            table.add_column(column)
        for family in families:
            table.add_row(family.name, family.domain.value, family.category, family.title)
        stdout_console().print(table)
    else:
        for family in families:
            print(f"{family.name}\t{family.domain.value}\t{family.category}\t{family.title}")
    for module, error in registry.broken.items():
        say(f"[red]broken module[/] {escape(f'factory/families/{module}.py: {error}')}")
    if registry.broken:
        raise typer.Exit(FAILED)


@app.command("try")
def try_(
    names: Annotated[list[str], typer.Argument(help="Family names (see `factory families list`).")],
    difficulty: Annotated[
        list[Difficulty] | None,
        typer.Option("--difficulty", "-d", help="Difficulties to render (default: all)."),
    ] = None,
    seed: Annotated[
        list[int] | None, typer.Option("--seed", "-s", help="Seeds (default: 1).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where the tasks and logs go.")] = Path(
        "family-trials"
    ),
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            help="A family parameter over its default: KEY=VALUE, VALUE in YAML as in a taxonomy (repeatable).",
        ),
    ] = None,
    jobs: opt.Jobs = opt.DEFAULT_JOBS,
    render_only: Annotated[
        bool, typer.Option("--render-only", help="Write the tasks, no Docker.")
    ] = False,
    llm_base_url: opt.LlmBaseUrl = None,
    llm_model: opt.LlmModel = None,
    llm_api_key_env: opt.LlmApiKeyEnv = opt.DEFAULT_KEY_ENV,
    executor: opt.Executors = opt.LOCAL,
    ray_address: opt.RayAddress = None,
    ray_shared_fs: opt.RayShared = False,
    json_: opt.Json = False,
) -> None:
    """Render tasks of a family and certify them as generation would.

    Validation, leak checks, cheat and mutation probes, plus wrong solutions the family did not
    write: variations of the reference, and model-written ones with --llm-base-url and
    --llm-model. Exit 1 when a task is not valid."""
    from factory.generate.trial import try_families
    from factory.progress import Bar

    args = (names, difficulty or list(Difficulty), seed or [1], out)
    params = _params(param or [])
    if render_only:
        trials = try_families(*args, params=params)
        for trial in trials:
            say(escape(f"wrote {trial.path}"))
    else:
        llm = _wrong_solution_writer(llm_base_url, llm_model, llm_api_key_env, out, jobs)
        bar = Bar("try", console, len(names) * len(args[1]) * len(args[2]))
        with job("families", jobs, executor=executor, ray_address=ray_address,
                 ray_shared_fs=ray_shared_fs, progress=bar) as where:  # fmt: skip
            trials = try_families(*args, executor=where, llm=llm, params=params, on_done=lambda t: bar.advance(
                description=escape(f"{t.path.name}: {t.certificate.outcome}")))  # fmt: skip
    if json_:
        emit({"trials": [_trial(t) for t in trials]})
    elif not render_only:
        _table(trials)
    if any(t.certificate is not None and not t.certificate.valid for t in trials):
        raise typer.Exit(FAILED)


def _params(pairs: list[str]) -> dict[str, Any]:
    """``--param KEY=VALUE`` options as a dict (a later KEY wins); VALUE is read as YAML, as a
    taxonomy's params are (``llm_report=false`` is false, ``projects=[a, b]`` a list)."""
    import yaml

    from factory.errors import FactoryError

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise FactoryError(f"--param takes KEY=VALUE, not {pair!r}")
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or "not YAML"
            raise FactoryError(
                f"--param {key.strip()}: {value!r} is not a value ({problem})"
            ) from None
    return out


def _wrong_solution_writer(
    base_url: str | None, model: str | None, api_key_env: str, out: Path, jobs: int
):
    """The LLM client that writes wrong solutions (None without an endpoint); both or neither."""
    from factory.errors import FactoryError
    from factory.generate.backends import LlmOptions
    from factory.llm import api_key_from_env

    if not base_url and not model:
        return None
    if not base_url or not model:
        raise FactoryError(
            "model-written wrong solutions need both --llm-base-url and --llm-model "
            "(or FACTORY_LLM_BASE_URL and FACTORY_LLM_MODEL)"
        )
    options = LlmOptions(
        base_url,
        model,
        api_key_from_env(api_key_env),
        concurrency=jobs,
        cache_dir=out / "llm-cache",
    )
    return options.client()


def _trial(trial) -> dict:
    cert = trial.certificate
    row = {"family": trial.family, "difficulty": trial.difficulty, "seed": trial.seed}
    row["path"] = trial.path
    if cert is not None:
        row.update(
            outcome=cert.outcome,
            reason=cert.reason,
            verifier_strength=cert.verifier_strength,
            probes=cert.probes,
        )
    return row


def _table(trials) -> None:
    from rich.table import Table

    table = Table(title="family trials")
    for column in ("task", "outcome", "strength", "probes", "reason"):
        table.add_column(column, overflow="fold")
    for trial in trials:
        cert = trial.certificate
        probes = " ".join(f"{p.name}:{'ok' if p.rejected else 'PASSED'}" for p in cert.probes)
        strength = "-" if cert.verifier_strength is None else f"{cert.verifier_strength:.2f}"
        table.add_row(escape(trial.path.name), cert.outcome, strength, probes, escape(cert.reason))
    stdout_console().print(table)
