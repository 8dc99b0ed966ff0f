"""Terminal-Bench 1 tasks: the ``task.yaml`` layout, mapped onto Harbor's.

TB1 layout::

    task.yaml            instruction (or descriptions[key=base]), difficulty, category, tags,
                         max_agent_timeout_sec, max_test_timeout_sec, author_*, parser_name
    Dockerfile           built with the task folder as context
    docker-compose.yaml  the agent's service, ``client`` (its environment becomes
                         [environment.env]); other services are sidecars, written into
                         environment/docker-compose.yaml in Harbor's form (``main``)
    run-tests.sh         run with TEST_DIR=/tests from the container's working directory
    solution.sh | solution.yaml
    tests/

The conversion makes the task runnable offline (see ``offline``) and records every rewrite in
``[metadata.factory].notes``. TB1 containers had network access; the converted task says so
explicitly (``allow_internet = true``), as solutions often ``pip install`` what they need.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factory.errors import TaskFormatError
from factory.fsutil import staged_directory
from factory.inputs import load_yaml_file
from factory.resources import templates_dir
from factory.tasks.compose import ComposeEnvironment, parse_compose
from factory.tasks.config import (
    MAX_TIMEOUT_SEC,
    AgentConfig,
    EnvironmentConfig,
    FactoryProvenance,
    NetworkMode,
    VerifierConfig,
    parse_size_mb,
)
from factory.tasks.hashing import hash_tree
from factory.tasks.model import Task, load_harbor_task, pydantic_error_field
from factory.tasks.new_config import new_task_config
from factory.tasks.offline import (
    VERIFIER_ENV,
    merge_scans,
    scan_test_script,
    with_build_time_installs,
)
from factory.tasks.paths import TaskPaths, TB1Paths
from factory.tasks.safety import check_task_tree
from factory.templating import render

SOURCE_TB1 = "import:terminal-bench-1"
TB1_SHARED_SCRIPTS = ("setup-uv-pytest.sh", "run-uv-pytest.sh")
"""Scripts Terminal-Bench's harness puts into $TEST_DIR next to a task's own tests."""


def render_text(name: str) -> str:
    """A verbatim (not templated) file from templates/."""
    return (templates_dir() / name).read_text(encoding="utf-8")


_TB1_META_FILES = {
    "task.yaml",
    "solution.sh",
    "solution.yaml",
    "run-tests.sh",
    "tests",
    "docker-compose.yaml",
    "docker-compose.yml",
    "README.md",
    "__pycache__",
}
_TB_ENV_VARS = ("T_BENCH_", "TEST_DIR")


class TB1Description(BaseModel):
    model_config = ConfigDict(extra="allow")
    key: str = "base"
    description: str


class TB1TaskYaml(BaseModel):
    """``task.yaml`` of a Terminal-Bench 1 task (unknown keys are tolerated)."""

    model_config = ConfigDict(extra="allow")

    instruction: str | None = None
    """The task's instruction."""
    descriptions: list[TB1Description] | None = None
    """Older TB1 spelling: a list of keyed descriptions; 'base' is the instruction."""
    author_name: str | None = None
    author_email: str | None = None
    difficulty: str | None = None
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    max_agent_timeout_sec: float = Field(
        default=360.0, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False
    )
    max_test_timeout_sec: float = Field(default=60.0, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False)
    parser_name: str = "pytest"
    run_tests_in_same_shell: bool = False

    def instruction_text(self) -> str | None:
        if self.instruction and self.instruction.strip():
            return self.instruction
        for item in self.descriptions or []:
            if item.key == "base" and item.description.strip():
                return item.description
        return None


class SolutionStep(BaseModel):
    model_config = ConfigDict(extra="allow")
    command: str
    append_enter: bool = True
    block: bool = True
    min_timeout_sec: float = 0.0


def _load_yaml(path: Path) -> Any:
    return load_yaml_file(path)


def load_tb1_yaml(paths: TB1Paths) -> TB1TaskYaml:
    data = _load_yaml(paths.task_yaml)
    if not isinstance(data, dict):
        raise TaskFormatError(paths.task_yaml, "must be a mapping of fields")
    try:
        spec = TB1TaskYaml.model_validate(data)
    except ValidationError as exc:
        loc, msg = pydantic_error_field(exc)
        raise TaskFormatError(paths.task_yaml, msg, field=loc or None) from None
    if spec.instruction_text() is None:
        raise TaskFormatError(
            paths.task_yaml, "the instruction is missing or empty", field="instruction"
        )
    return spec


def _compose_client(paths: TB1Paths) -> tuple[str, dict[str, Any]]:
    """The agent's service of docker-compose.yaml and its name: ``client`` (Terminal-Bench's
    convention), or the only service when there is one by another name. ``("client", {})``
    when there is no compose file."""
    if not paths.compose.is_file():
        return "client", {}
    data = _load_yaml(paths.compose) or {}
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services:
        raise TaskFormatError(paths.compose, "no services", field="services")
    if "client" in services:
        name = "client"
    elif len(services) == 1:
        name = next(iter(services))
    else:
        raise TaskFormatError(
            paths.compose,
            f"no 'client' service among {', '.join(sorted(services))} (name the agent's "
            "container `client`)",
            field="services.client",
        )
    client = services[name] or {}
    if not isinstance(client, dict):
        raise TaskFormatError(paths.compose, "must be a mapping", field=f"services.{name}")
    return name, client


def _compose_env(client: dict[str, Any], compose: Path) -> dict[str, str]:
    raw = client.get("environment") or {}
    pairs: dict[str, str] = {}
    if isinstance(raw, list):
        for item in raw:
            key, _, value = str(item).partition("=")
            pairs[key] = value
    elif isinstance(raw, dict):
        pairs = {str(k): "" if v is None else str(v) for k, v in raw.items()}
    else:
        raise TaskFormatError(
            compose, "must be a list or mapping", field="services.client.environment"
        )
    return {k: v for k, v in pairs.items() if not k.startswith(_TB_ENV_VARS) and "${" not in v}


TB1_VARIABLES = {
    "T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME": "client",
    "T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME": "client",
    "T_BENCH_TASK_DOCKER_NAME_PREFIX": "tb",
    "T_BENCH_TEST_DIR": "/tests",
    "T_BENCH_CONTAINER_LOGS_PATH": "/logs",
    "T_BENCH_CONTAINER_AGENT_LOGS_PATH": "/agent-logs",
}
"""What Terminal-Bench's harness sets for a compose file (its container-side paths; the
host-side ones are mounts, which factory does not make)."""


def _tb1_sidecars(
    paths: TB1Paths, service: str, client: dict[str, Any]
) -> ComposeEnvironment | None:
    """The services besides the agent's, parsed and checked (errors name the TB1 file and
    field); None when there are none. Build contexts are relative to the task folder."""
    if not paths.compose.is_file():
        return None
    data = _load_yaml(paths.compose) or {}
    if len(data.get("services") or {}) < 2:
        return None
    handled = frozenset(str(key) for key in client) - {"depends_on", "healthcheck"}
    return parse_compose(
        paths.compose,
        environment_dir=paths.root,
        main=service,
        variables=TB1_VARIABLES,
        main_ignored=handled,
        closed=False,  # its output escapes every `$` (_dollars)
    )


def _dollars(value: Any) -> Any:
    """Escape ``$`` for a compose file that is interpolated again (Harbor's)."""
    if isinstance(value, str):
        return value.replace("$", "$$")
    if isinstance(value, list):
        return [_dollars(v) for v in value]
    if isinstance(value, dict):
        return {k: _dollars(v) for k, v in value.items()}
    return value


def _write_sidecars(
    compose: ComposeEnvironment, src: Path, context: Path, environment_dir: Path, notes: list[str]
) -> None:
    """Write the Harbor form of a TB1 multi-service compose file into ``environment/``: the
    agent's service is ``main``, each sidecar keeps its settings, and a sidecar's build
    context outside the agent's (already copied) goes to ``environment/_sidecars/<name>``."""
    src = src.resolve()
    services: dict[str, Any] = {}
    if compose.main_depends_on:
        services["main"] = {
            "depends_on": {n: {"condition": c} for n, c in compose.main_depends_on.items()}
        }
    for sidecar in compose.sidecars:
        entry: dict[str, Any] = {}
        if sidecar.build_context is not None:
            folder = (src / sidecar.build_context).resolve()
            if folder == context or context in folder.parents:
                where = folder.relative_to(context).as_posix() or "."
            elif folder == src or folder in context.parents:
                raise TaskFormatError(
                    compose.path,
                    "the build context holds the agent's build and the task's tests; give "
                    "the service a folder of its own",
                    field=f"services.{sidecar.name}.build.context",
                )
            else:
                where = f"_sidecars/{sidecar.name}"
                shutil.copytree(folder, environment_dir / where, symlinks=True)
                notes.append(f"sidecar '{sidecar.name}': its build context is environment/{where}")
            entry["build"] = {"context": where, "dockerfile": sidecar.dockerfile}
        else:
            entry["image"] = sidecar.image
        for key, value in (
            ("command", list(sidecar.command) if sidecar.command is not None else None),
            ("entrypoint", list(sidecar.entrypoint) if sidecar.entrypoint is not None else None),
            ("environment", dict(sidecar.env) or None),
            ("working_dir", sidecar.workdir),
            ("user", sidecar.user),
        ):
            if value is not None:
                entry[key] = value
        if sidecar.healthcheck_disabled:
            entry["healthcheck"] = {"disable": True}
        elif sidecar.healthcheck is not None:
            check = sidecar.healthcheck
            entry["healthcheck"] = {
                "test": ["CMD-SHELL", check.command],
                "interval": f"{check.interval_sec:g}s",
                "timeout": f"{check.timeout_sec:g}s",
                "retries": check.retries,
                "start_period": f"{check.start_period_sec:g}s",
            }
        if sidecar.depends_on:
            entry["depends_on"] = {n: {"condition": c} for n, c in sidecar.depends_on.items()}
        limits = {
            k: v
            for k, v in (
                ("cpus", sidecar.cpus),
                ("memory", f"{sidecar.memory_mb}M" if sidecar.memory_mb else None),
                ("pids", sidecar.pids_limit),
            )
            if v is not None
        }
        if limits:
            entry["deploy"] = {"resources": {"limits": limits}}
        services[sidecar.name] = entry
    header = (
        "# Converted by factory from the Terminal-Bench 1 docker-compose.yaml: the agent's\n"
        f"# service ('{compose.main}') is Harbor's `main`.\n"
    )
    body = yaml.safe_dump({"services": _dollars(services)}, sort_keys=False)
    (environment_dir / "docker-compose.yaml").write_text(header + body, encoding="utf-8")
    names = ", ".join(s.name for s in compose.sidecars)
    notes.append(
        f"docker-compose.yaml: sidecars {names} run beside the agent's container "
        "(environment/docker-compose.yaml, Harbor's layout)"
    )
    notes.extend(compose.notes)


def _solution_script(paths: TB1Paths, notes: list[str]) -> str | None:
    if paths.solution_sh.is_file():
        return paths.solution_sh.read_text(encoding="utf-8", errors="replace")
    if not paths.solution_yaml.is_file():
        return None
    data = _load_yaml(paths.solution_yaml)
    if not isinstance(data, list):
        raise TaskFormatError(paths.solution_yaml, "must be a list of {command: ...} steps")
    lines = ["#!/bin/bash", "# Converted by factory from solution.yaml (one command per step)."]
    for index, item in enumerate(data):
        try:
            step = SolutionStep.model_validate(item)
        except ValidationError as exc:
            loc, msg = pydantic_error_field(exc)
            raise TaskFormatError(paths.solution_yaml, msg, field=f"[{index}].{loc}") from None
        if not step.append_enter:
            notes.append(
                f"solution.yaml step {index}: keystrokes without Enter ({step.command[:30]!r}) "
                "cannot be replayed as a script; check solve.sh"
            )
        lines.append(step.command)
    notes.append("solution.yaml converted to solution/solve.sh")
    return "\n".join(lines) + "\n"


def _build_source(client: dict[str, Any], paths: TB1Paths) -> tuple[Path, str]:
    """(context folder, Dockerfile name) from the compose file's build section."""
    build = client.get("build")
    context, dockerfile = ".", "Dockerfile"
    if isinstance(build, str):
        context = build
    elif isinstance(build, dict):
        context = str(build.get("context", "."))
        dockerfile = str(build.get("dockerfile", "Dockerfile"))
    for field, value in (("context", context), ("dockerfile", dockerfile)):
        if "$" in value:
            raise TaskFormatError(
                paths.compose,
                f"'{value}' points outside the task (a Terminal-Bench repository variable); "
                "copy what it names into the task folder",
                field=f"services.client.build.{field}",
            )
    return (paths.root / context).resolve(), dockerfile


def _compose_environment(
    client: dict[str, Any], compose: Path, notes: list[str]
) -> EnvironmentConfig:
    """[environment] from the client service: env, network, cpu and memory limits."""
    fields: dict[str, Any] = {}
    env = _compose_env(client, compose)
    if env:
        fields["env"] = env
    if client.get("network_mode") == "none":
        fields["network_mode"] = NetworkMode.NO_NETWORK
        notes.append("network off: the compose file gives the client network_mode none")
    else:
        fields["allow_internet"] = True
        notes.append("allow_internet = true: Terminal-Bench 1 containers had network access")
    limits = ((client.get("deploy") or {}).get("resources") or {}).get("limits") or {}
    cpus = limits.get("cpus", client.get("cpus"))
    memory = limits.get("memory", client.get("mem_limit"))
    try:
        if cpus is not None:
            fields["cpus"] = float(cpus)
        if memory is not None:  # compose: a bare number is bytes
            text = str(memory).strip()
            fields["memory_mb"] = (
                max(1, int(text) // (1024 * 1024)) if text.isdigit() else parse_size_mb(text)
            )
    except ValueError as exc:
        raise TaskFormatError(
            compose, str(exc), field="services.client.deploy.resources.limits"
        ) from None
    environment = EnvironmentConfig(**fields)
    notes.append(f"network policy kept from the source: {environment.network_policy}")
    return environment


def convert_tb1(src: Path, dest: Path) -> Task:
    """Write the Harbor version of the TB1 task ``src`` into ``dest`` (replaced) and load it."""
    paths = TB1Paths(src)
    check_task_tree(src)
    spec = load_tb1_yaml(paths)
    service, client = _compose_client(paths)
    context, dockerfile_name = _build_source(client, paths)
    dockerfile_path = context / dockerfile_name
    if context != src.resolve():
        check_task_tree(context)
    if not dockerfile_path.is_file():
        raise TaskFormatError(dockerfile_path, "file is missing (the task's environment)")
    if not paths.run_tests.is_file():
        raise TaskFormatError(paths.run_tests, "file is missing (the task's test entry point)")
    notes: list[str] = []
    if service != "client":
        notes.append(
            f"docker-compose.yaml: the only service, '{service}', is the agent's container"
        )
    sidecars = _tb1_sidecars(paths, service, client)
    solution = _solution_script(paths, notes)

    with staged_directory(dest) as staging:
        out = TaskPaths(staging)
        # environment/: the build context minus TB1's own files (which agents must not see).
        out.environment_dir.mkdir()
        skip = _TB1_META_FILES if context == src.resolve() else set()
        for entry in sorted(context.iterdir()):
            if entry.name in skip or entry.name == dockerfile_name:
                continue
            target = out.environment_dir / entry.name
            if entry.is_dir():
                shutil.copytree(entry, target, symlinks=True)
            else:
                shutil.copy2(entry, target, follow_symlinks=False)
        # tests/: the TB1 tests, the rewritten run-tests.sh (and the shell helpers it calls),
        # and our test.sh around them.
        if paths.tests_dir.is_dir():
            shutil.copytree(paths.tests_dir, out.tests_dir, symlinks=True)
        out.tests_dir.mkdir(exist_ok=True)
        run_tests = paths.run_tests.read_text(encoding="utf-8", errors="replace")
        for helper in TB1_SHARED_SCRIPTS:
            if helper in run_tests and not (out.tests_dir / helper).is_file():
                (out.tests_dir / helper).write_text(render_text(f"import/tb1/{helper}"))
                notes.append(f"tests/{helper} (Terminal-Bench's shared script) supplied offline")
        scans = [scan_test_script(run_tests, name="run-tests.sh", requirement_root=paths.tests_dir)]
        for script in sorted(out.tests_dir.glob("*.sh")):
            scan = scan_test_script(
                script.read_text(encoding="utf-8", errors="replace"),
                name=f"tests/{script.name}",
                requirement_root=paths.tests_dir,
            )
            if scan.notes:
                script.write_text(scan.text)
                scans.append(scan)
        scan = merge_scans(scans)
        dockerfile = dockerfile_path.read_text(encoding="utf-8", errors="replace")
        out.dockerfile.write_text(with_build_time_installs(dockerfile, scan))
        notes += scan.notes
        if out.test_script.exists():
            out.test_script.rename(out.tests_dir / "test.tb1-original.sh")
            notes.append("tests/test.sh of the original was renamed test.tb1-original.sh")
        (out.tests_dir / "run-tests.sh").write_text(scans[0].text)
        out.test_script.write_text(render("import/test-tb1.sh.j2", task_name=src.name))
        out.test_script.chmod(0o755)
        notes.append(
            "tests/test.sh runs run-tests.sh with TEST_DIR=/tests and writes the reward "
            "from pytest's summary"
        )
        if solution is not None:
            out.solution_dir.mkdir()
            out.solve_script.write_text(solution)
            out.solve_script.chmod(0o755)
        out.instruction.write_text(spec.instruction_text() or "")
        if sidecars is not None:
            _write_sidecars(sidecars, src, context, out.environment_dir, notes)
        environment = _compose_environment(client, paths.compose, notes)
        # no [task].name: Harbor wants 'org/name' and Terminal-Bench 1 has no org; without it
        # the task's id is its directory's name in both harnesses
        config = new_task_config(
            FactoryProvenance(source=SOURCE_TB1, source_path=str(src), notes=notes),
            metadata={
                k: v
                for k, v in {
                    "difficulty": spec.difficulty,
                    "category": spec.category,
                    "tags": spec.tags,
                    "author_name": spec.author_name,
                    "author_email": spec.author_email,
                }.items()
                if v
            },
            verifier=VerifierConfig(
                timeout_sec=spec.max_test_timeout_sec,
                **({"env": dict(VERIFIER_ENV)} if scan.uses_uv else {}),
            ),
            agent=AgentConfig(timeout_sec=spec.max_agent_timeout_sec),
            environment=environment,
        )
        out.config.write_text(config.to_toml())
    task = load_harbor_task(dest)
    task.notes = notes
    return task


def convert_tb1_cached(src: Path, cache_dir: Path | None = None) -> Task:
    """Convert ``src`` once per content hash into ``cache_dir`` and load the result."""
    cache_dir = cache_dir or Path(tempfile.gettempdir()) / "factory-tb1"
    cache_dir.mkdir(parents=True, exist_ok=True)
    check_task_tree(src)
    digest = hash_tree(src)[:16]
    dest = cache_dir / f"{src.resolve().name}-{digest}"
    if dest.is_dir() and TaskPaths(dest).config.is_file():
        task = load_harbor_task(dest)
        task.notes = list(task.config.provenance.notes)
    else:
        task = convert_tb1(src, dest)
    task.source_layout = "terminal-bench-1"
    task.original_path = src
    return task
