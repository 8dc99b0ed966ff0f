"""The public task layouts, Harbor and Terminal-Bench 1: tell them apart, load either (a TB1
directory is converted on the fly), and import tasks into a folder of Harbor task directories
that run offline here. One bad task never stops a batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from factory import __version__
from factory.errors import FactoryError, TaskFormatError
from factory.fsutil import staged_directory
from factory.importers.tb1 import convert_tb1, convert_tb1_cached
from factory.tasks.model import (
    Task,
    discover_task_dirs,
    load_harbor_task,
    save_task_config,
    task_id_from_name,
)
from factory.tasks.offline import VERIFIER_ENV, scan_test_script, with_build_time_installs
from factory.tasks.paths import TaskPaths, TB1Paths

SOURCE_HARBOR = "import:harbor"


class Layout(str, Enum):
    """How a public task directory is laid out."""

    HARBOR = "harbor"
    TB1 = "terminal-bench-1"


@dataclass
class ImportResult:
    source: Path
    layout: Layout | None = None
    dest: Path | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None


def detect_layout(path: Path) -> Layout:
    if TaskPaths(path).config.is_file() or (path / "environment").is_dir():
        return Layout.HARBOR
    if TB1Paths(path).is_tb1_task():
        return Layout.TB1
    raise TaskFormatError(
        path, "neither a Harbor task (task.toml) nor a Terminal-Bench 1 task (task.yaml)"
    )


def load_any_task(root: Path | str, *, tb1_cache: Path | None = None) -> Task:
    """Load a task directory in either layout.

    A Terminal-Bench 1 directory (``task.yaml``) is converted into a Harbor directory under
    ``tb1_cache`` (default: a folder in the system temp dir) and loaded from there.
    """
    root = Path(root)
    if not root.exists():
        raise TaskFormatError(root, "no such task directory")
    if TB1Paths(root).is_tb1_task() and not TaskPaths(root).config.is_file():
        return convert_tb1_cached(root, cache_dir=tb1_cache)
    return load_harbor_task(root)


def import_harbor(src: Path, dest: Path) -> list[str]:
    """Copy a Harbor task, pre-installing at build time what its test.sh fetches at test time."""
    task = load_harbor_task(src)  # checks the layout first; raises TaskFormatError
    notes: list[str] = []
    with staged_directory(dest, copy_from=src) as staging:
        out = TaskPaths(staging)
        scan = scan_test_script(
            out.test_script.read_text(encoding="utf-8", errors="replace"),
            name="tests/test.sh",
            requirement_root=out.tests_dir,
        )
        if scan.notes and out.dockerfile.is_file():
            out.test_script.write_text(scan.text)
            dockerfile = out.dockerfile.read_text(encoding="utf-8", errors="replace")
            out.dockerfile.write_text(with_build_time_installs(dockerfile, scan))
            notes += scan.notes
        config = task.config
        if scan.uses_uv and out.dockerfile.is_file():
            config.verifier.env = {**config.verifier.env, **VERIFIER_ENV}
            notes.append(
                "[verifier].env UV_OFFLINE=1: the tests' uv works from its build-time cache"
            )
        env = config.environment
        if env.network_mode is None and env.allow_internet is None:
            env.allow_internet = True
            notes.append("allow_internet = true written out: it is Harbor's default for this task")
        notes.append(f"network policy kept from the source: {env.network_policy}")
        provenance = config.provenance
        config.set_provenance(
            provenance.model_copy(
                update={
                    "source": provenance.source or SOURCE_HARBOR,
                    "source_path": provenance.source_path or str(src),
                    "factory_version": __version__,
                    "notes": [*provenance.notes, *notes],
                }
            )
        )
        save_task_config(out.config, config)
    return notes


def import_task(src: Path, out_dir: Path, *, layout: Layout | None = None) -> ImportResult:
    result = ImportResult(source=src)
    try:
        result.layout = Layout(layout) if layout else detect_layout(src)
        if result.layout is Layout.TB1 and not TB1Paths(src).is_tb1_task():
            raise TaskFormatError(
                TB1Paths(src).task_yaml, "file is missing (not a Terminal-Bench 1 task)"
            )
        out_dir.mkdir(parents=True, exist_ok=True)
        dest = out_dir / task_id_from_name(src.resolve().name)
        if result.layout is Layout.TB1:
            result.notes = convert_tb1(src, dest).notes
        else:
            result.notes = import_harbor(src, dest)
        result.dest = dest
    except TaskFormatError as exc:
        result.error = str(exc)
    except OSError as exc:
        result.error = f"{src}: {exc}"
    return result


@dataclass
class TaskCheck:
    """`factory tasks check`: one directory, parsed without Docker."""

    path: Path
    id: str | None = None
    error: str | None = None
    """The one-line reason it does not load (None: it loads)."""

    @property
    def ok(self) -> bool:
        return self.error is None


def check_tasks(paths: list[Path], *, tb1_cache: Path | None = None) -> list[TaskCheck]:
    """Parse every task under ``paths`` (either layout); malformed ones carry their error."""
    checks = []
    for path in discover_task_dirs(paths):
        try:
            checks.append(TaskCheck(path, id=load_any_task(path, tb1_cache=tb1_cache).id))
        except FactoryError as exc:
            checks.append(TaskCheck(path, error=str(exc)))
    return checks
