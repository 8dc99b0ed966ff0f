"""A loaded task: its directory, parsed ``task.toml`` and instruction, with strict checks.

The model knows one layout, Harbor's. Other layouts (Terminal-Bench 1) are converted by the
importers (:mod:`factory.importers.layouts` loads either, converting on the fly).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import tomlkit
from pydantic import ValidationError

from factory.errors import TaskFormatError
from factory.fsutil import write_text_atomic
from factory.inputs import load_toml_file, read_text
from factory.tasks.compose import (
    ComposeEnvironment,
    find_compose_file,
    harbor_variables,
    parse_compose,
)
from factory.tasks.config import TaskConfig
from factory.tasks.hashing import hash_tree
from factory.tasks.paths import TaskPaths, TB1Paths
from factory.tasks.safety import check_task_tree

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def task_id_from_name(name: str) -> str:
    """A filesystem- and label-safe id: 'org/my task' -> 'org__my-task'."""
    parts = [_ID_UNSAFE.sub("-", part).strip("-") for part in name.split("/")]
    return "__".join(part for part in parts if part) or "task"


def pydantic_error_field(error: ValidationError) -> tuple[str, str]:
    """The dotted location and message of the first error of a pydantic ValidationError."""
    first = error.errors()[0]
    loc = ".".join(str(part) for part in first.get("loc", ()))
    return loc, first.get("msg", str(error))


def load_task_config(path: Path) -> TaskConfig:
    """Parse a ``task.toml``; errors name the file and the field. The file is bounded in size
    and nesting, and every number in it (see :mod:`factory.tasks.config`)."""
    if not path.is_file():
        raise TaskFormatError(path, "file is missing")
    data = load_toml_file(path)
    try:
        return TaskConfig.model_validate(data)
    except ValidationError as exc:
        loc, msg = pydantic_error_field(exc)
        raise TaskFormatError(path, msg, field=loc or None) from None


def save_task_config(path: Path, config: TaskConfig) -> None:
    """Write ``config`` to ``path`` (atomically). An existing file is updated in place: its
    comments, key order and number spelling are kept wherever the values did not change."""
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        current = None
    try:
        text = config.to_toml(keep=current)
    except tomlkit.exceptions.ParseError:  # not TOML any more: written afresh
        text = config.to_toml()
    write_text_atomic(path, text)


@dataclass
class Task:
    """One task directory in the Harbor layout, parsed and checked."""

    paths: TaskPaths
    config: TaskConfig
    instruction: str
    source_layout: str = "harbor"
    """'harbor', or 'terminal-bench-1' when converted from a TB1 directory."""
    original_path: Path | None = None
    """For a converted task: the directory the user pointed at."""
    notes: list[str] = field(default_factory=list)
    """What a conversion rewrote (shown to the user)."""
    compose: ComposeEnvironment | None = None
    """The sidecar services of ``environment/docker-compose.yaml`` (None: one container)."""

    @property
    def root(self) -> Path:
        return self.paths.root

    @property
    def id(self) -> str:
        name = self.config.task.name if self.config.task and self.config.task.name else None
        return task_id_from_name(name or (self.original_path or self.root).name)

    @property
    def display_path(self) -> Path:
        return self.original_path or self.root

    @cached_property
    def content_hash(self) -> str:
        """Hash of everything in the task directory (config, instruction, env, solution, tests)."""
        return hash_tree(self.root)

    @property
    def has_solution(self) -> bool:
        return self.paths.solve_script.is_file()


def load_harbor_task(root: Path) -> Task:
    """Load and check a Harbor task directory."""
    paths = TaskPaths(root)
    if not root.is_dir():
        raise TaskFormatError(root, "not a directory")
    check_task_tree(root)
    config = load_task_config(paths.config)
    if not paths.instruction.is_file():
        raise TaskFormatError(paths.instruction, "file is missing (the agent's instruction)")
    instruction = read_text(paths.instruction)
    if not instruction.strip():
        raise TaskFormatError(paths.instruction, "the instruction is empty")
    compose_file = find_compose_file(paths.environment_dir)
    compose = None
    if compose_file is not None:
        env = config.environment
        variables = harbor_variables(
            env.env, cpus=env.effective_cpus, memory_mb=env.effective_memory_mb
        )
        compose = parse_compose(compose_file, variables=variables)
    if config.environment.docker_image is None and not paths.dockerfile.is_file():
        raise TaskFormatError(
            paths.dockerfile,
            "file is missing (or set environment.docker_image in task.toml)"
            + ("; the main service of docker-compose.yaml is built from it" if compose else ""),
        )
    if not paths.test_script.is_file():
        raise TaskFormatError(
            paths.test_script,
            "file is missing (the verifier entry point that writes /logs/verifier/reward.txt)",
        )
    task = Task(paths=paths, config=config, instruction=instruction)
    task.compose = compose
    return task


def load_task(root: Path | str) -> Task:
    """Load a Harbor task directory (one that does not exist, or a Terminal-Bench 1 directory,
    is a :class:`TaskFormatError` that says so)."""
    root = Path(root)
    if not root.exists():
        raise TaskFormatError(root, "no such task directory")
    if TB1Paths(root).is_tb1_task() and not TaskPaths(root).config.is_file():
        raise TaskFormatError(
            TaskPaths(root).config,
            "file is missing: this is a Terminal-Bench 1 task (task.yaml); `factory import` "
            "converts it, and `factory validate` takes it as it is",
        )
    return load_harbor_task(root)


def discover_task_dirs(paths: list[Path]) -> list[Path]:
    """Expand the user's arguments: a task dir stays as is; a folder of tasks is expanded."""
    found: list[Path] = []
    for path in paths:
        if _looks_like_task(path) or not path.is_dir():
            found.append(path)
            continue
        children = sorted(p for p in path.iterdir() if p.is_dir() and _looks_like_task(p))
        found.extend(children or [path])
    return found


def _looks_like_task(path: Path) -> bool:
    return path.is_dir() and (
        TaskPaths(path).is_harbor_task()
        or TB1Paths(path).is_tb1_task()
        or (path / "environment").is_dir()
    )
