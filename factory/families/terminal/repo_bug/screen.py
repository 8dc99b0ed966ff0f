"""Screening: which mutants of a project make its own tests go from pass to fail.

Everything runs in a container of the project's image (the repo-bug task image without a
mutant, built once per project through the task-image builder): first a baseline run of the
whole suite that records each test's outcome and, through ``sys.monitoring``, the project
functions each test runs; then batches of mutants in one container, each mutant running only
the tests that cover its function, in a loop (``shipped/rb_screen.py``).

Results are kept per (project, version, mutant) in a :class:`ScreenRecord`: the bundled ones in
``screened/<name>.json`` (so generation needs no Docker for the projects shipped), new ones in
``~/.cache/factory/repo-bug/screen/``. ``python -m factory.families.terminal.repo_bug``
screens more and can write the bundled files.
"""

from __future__ import annotations

import argparse
import json
import logging
import posixpath
import random
import re
import tempfile
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from factory.families.terminal.shipped import read
from factory.fsutil import write_text_atomic

from .mutate import (
    ENGINE_VERSION,
    Operator,
    Site,
    compiles,
    iter_project_sites,
    mutant_sources,
)
from .projects import (
    FETCHER,
    PYTEST_PIN,
    Project,
    cache_root,
    load_projects,
    source_modules,
)

log = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).with_name("screened")
TEMPLATES_DIR = Path(__file__).with_name("templates")
MAX_FAILING = 10
"""A kept mutant breaks at least one and at most this many test functions: a specific bug."""
MAX_FAILING_CASES = 30
"""... and at most this many test cases (parametrized tests count once per parameter set)."""
WORK = "/opt/rb-screen"


class MutantRecord(BaseModel):
    """What screening found for one mutant."""

    site: Site
    status: str
    """'kept' (1..MAX_FAILING test functions fail), 'survived' (none), 'broad' (more),
    'timeout' or 'error'."""
    failed: dict[str, str] = Field(default_factory=dict)
    """Failing test id -> the failure's message (kept mutants)."""
    covering: list[str] = Field(default_factory=list)
    """Test ids that run the mutated function and passed at baseline (a sample)."""


class ScreenRecord(BaseModel):
    """Screening results of one project version."""

    project: str
    version: str
    engine: int = ENGINE_VERSION
    pytest: str = PYTEST_PIN[0]
    passing: list[str] = Field(default_factory=list)
    """Test ids that pass at baseline."""
    test_seconds: dict[str, float] = Field(default_factory=dict)
    """Baseline duration of each test function (function-level id)."""
    unclean: list[str] = Field(default_factory=list)
    """Test functions some case of which failed at baseline (never expected to pass)."""
    mutants: list[MutantRecord] = Field(default_factory=list)

    def kept(self) -> list[MutantRecord]:
        return [m for m in self.mutants if m.status == "kept"]

    def screened_ids(self) -> set[str]:
        return {m.site.id for m in self.mutants}


def function_id(nodeid: str) -> str:
    """'tests/t.py::T::test_x[1-2]' -> 'tests/t.py::T::test_x' (what the command line runs)."""
    return nodeid.split("[", 1)[0]


def unclean_functions(results: dict[str, dict]) -> list[str]:
    """Function-level ids of the tests with a case that failed at baseline."""
    return sorted({function_id(t) for t, r in results.items() if r["outcome"] == "failed"})


def stable(nodeid: str) -> bool:
    """Ids that name the same test on every run (no object addresses in parameter ids)."""
    return not re.search(r"0x[0-9a-fA-F]{6,}", nodeid)


# --- records ------------------------------------------------------------------------------------
_lock = threading.Lock()


def _cache_file(project: Project) -> Path:
    return cache_root() / "screen" / f"{project.key}.json"


def _bundled_file(project: Project) -> Path:
    return BUNDLED_DIR / f"{project.name}.json"


def load_record(project: Project) -> ScreenRecord | None:
    """The best record for ``project``: the user cache when it exists, else the bundled one."""
    for path in (_cache_file(project), _bundled_file(project)):
        if path.is_file():
            record = ScreenRecord.model_validate_json(path.read_text(encoding="utf-8"))
            if record.version == project.version and record.engine == ENGINE_VERSION:
                return record
    return None


def save_record(project: Project, record: ScreenRecord, *, bundled: bool = False) -> Path:
    path = _bundled_file(project) if bundled else _cache_file(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, record.model_dump_json(indent=1, exclude_defaults=False) + "\n")
    return path


# --- candidate selection -----------------------------------------------------------------------
def covering_tests(record_covered: dict[str, list[str]], site: Site) -> list[str]:
    key = f"{site.path}::{site.function}"
    return sorted(t for t, funcs in record_covered.items() if key in funcs)


def pick_candidates(
    project: Project,
    covered: dict[str, list[str]],
    done: set[str],
    limit: int,
) -> list[tuple[Site, list[str]]]:
    """Up to ``limit`` unscreened sites whose function some passing test runs, spread over
    operators and modules, in an order fixed by the project (deterministic)."""
    sources = source_modules(project)
    by_function: dict[str, set[str]] = {}
    for test, funcs in covered.items():
        for func in funcs:
            by_function.setdefault(func, set()).add(test)
    pool = [
        s
        for s in iter_project_sites(sources)
        if s.id not in done and f"{s.path}::{s.function}" in by_function
    ]
    rng = random.Random(f"repo-bug:{project.key}")
    rng.shuffle(pool)
    queues: dict[tuple[str, Operator], list[Site]] = {}
    for site in pool:
        queues.setdefault((site.path, site.operator), []).append(site)
    order = sorted(queues)
    rng.shuffle(order)
    picked: list[tuple[Site, list[str]]] = []
    functions_used: dict[str, int] = {}
    while len(picked) < limit and any(queues.values()):
        for key in order:
            queue = queues[key]
            while queue:
                site = queue.pop()
                fkey = f"{site.path}::{site.function}"
                if functions_used.get(fkey, 0) >= 2:
                    continue  # spread over functions: at most two sites of one per round
                if not compiles(mutant_sources(sources, [site])[site.path], site.path):
                    continue
                functions_used[fkey] = functions_used.get(fkey, 0) + 1
                picked.append((site, sorted(by_function[fkey])))
                break
            if len(picked) >= limit:
                break
        else:
            functions_used.clear()
    return picked


# --- running ------------------------------------------------------------------------------------
def project_image_task(project: Project, dest: Path) -> Path:
    """A minimal task directory whose image is the project without any mutant (screening)."""
    from factory.tasks.config import EnvironmentConfig, TaskConfig, TaskSection
    from factory.templating import folder_environment

    (dest / "environment" / "overlay").mkdir(parents=True)
    (dest / "tests").mkdir()
    template = folder_environment(TEMPLATES_DIR).get_template("environment/Dockerfile.j2")
    (dest / "environment" / "Dockerfile").write_text(
        template.render(
            name=project.name,
            version=project.version,
            sha256=project.sha256,
            pytest_pin=PYTEST_PIN,
        )
    )
    (dest / "environment" / "fetch_sdist.py").write_bytes(FETCHER.read_bytes())
    (dest / "environment" / "overlay" / ".overlay").write_text("screening image\n")
    (dest / "instruction.md").write_text(f"Screening image of {project.requirement}.\n")
    (dest / "tests" / "test.sh").write_text("#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n")
    config = TaskConfig(
        schema_version="1.1",
        task=TaskSection(name=f"repo-bug/{project.key}", description="screening image"),
        environment=EnvironmentConfig(),
    )
    (dest / "task.toml").write_text(config.to_toml())
    return dest


class Screener:
    """Runs baseline and mutant batches for projects (Docker through factory.runtime)."""

    def __init__(self, runtime=None, *, batch: int = 12, memory_mb: int = 2048) -> None:
        from factory.runtime import DockerRuntime

        self.runtime = runtime or DockerRuntime()
        self.batch = batch
        self.memory_mb = memory_mb

    def image(self, project: Project) -> str:
        from factory.errors import ImageBuildError
        from factory.images.task_image import TaskImageBuilder
        from factory.tasks.model import load_task

        with tempfile.TemporaryDirectory(prefix="repo-bug-image-") as tmp:
            task_dir = project_image_task(project, Path(tmp) / project.key)
            for attempt in range(3):  # a shared engine sometimes kills a build step (137)
                try:
                    return TaskImageBuilder(self.runtime).ensure(load_task(task_dir)).ref
                except ImageBuildError as exc:
                    if attempt == 2:
                        raise
                    log.warning("%s: image build failed (%s); retrying", project.key, exc)
        raise AssertionError("unreachable")

    def _run(self, image: str, job: dict, timeout: float) -> list[dict]:
        from factory.runtime import ContainerSpec

        with tempfile.TemporaryDirectory(prefix="repo-bug-job-") as tmp:
            folder = Path(tmp) / "job"
            folder.mkdir()
            for name in ("rb_run.py", "rb_outcomes.py", "rb_screen.py"):
                (folder / name).write_text(read(__file__, name), encoding="utf-8")
            (folder / "job.json").write_text(json.dumps(job))
            spec = ContainerSpec(image=image, cpus=1, memory_mb=self.memory_mb, task_id="repo-bug")
            with self.runtime.start(spec) as box:
                box.upload_dir(folder, WORK)
                result = box.exec(
                    ["python3", f"{WORK}/rb_screen.py", f"{WORK}/job.json", f"{WORK}/out.jsonl"],
                    timeout_sec=timeout,
                    what="repo-bug screening",
                )
                files = box.download_dir(f"{WORK}/out.jsonl", max_file_bytes=64 << 20)
        lines = b"".join(files.values()).decode().splitlines()
        if not lines and result.exit_code != 0:
            raise RuntimeError(f"screening failed: {result.output[-800:]}")
        return [json.loads(line) for line in lines if line.strip()]

    def baseline(self, project: Project, image: str) -> dict:
        path = cache_root() / "screen" / f"{project.key}.baseline.json"
        if path.is_file():
            return json.loads(path.read_text())
        job = {
            "root": "/app",
            "pythonpath": [project.root or "."],
            "mode": "baseline",
            "tests": project.tests,
            "timeout": 1500,
        }
        (data,) = self._run(image, job, timeout=1600)
        if data.get("status") != "ran" or not data.get("covered"):
            raise RuntimeError(f"{project.key}: the baseline did not run or trace: {data}"[:2000])
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(data))
        return data

    def screen(self, project: Project, *, limit: int = 60) -> ScreenRecord:
        """Screen up to ``limit`` more mutants of ``project``; returns the updated record."""
        image = self.image(project)
        base = self.baseline(project, image)
        results = base["results"]
        passing = sorted(t for t, r in results.items() if r["outcome"] == "passed" and stable(t))
        seconds: dict[str, float] = {}
        for test, r in results.items():
            seconds[function_id(test)] = round(seconds.get(function_id(test), 0) + r["duration"], 3)
        ok = set(passing)
        covered = {t: _normalized(f) for t, f in base.get("covered", {}).items() if t in ok}
        with _lock:
            record = load_record(project) or ScreenRecord(
                project=project.name, version=project.version
            )
        record.passing, record.test_seconds = passing, seconds
        record.unclean = unclean_functions(results)
        candidates = pick_candidates(project, covered, record.screened_ids(), limit)
        sources = source_modules(project)
        for start in range(0, len(candidates), self.batch):
            chunk = candidates[start : start + self.batch]
            mutants = []
            for site, tests in chunk:
                run = sorted({function_id(t) for t in tests})
                budget = 60 + 4 * sum(seconds.get(t, 0.5) for t in run)  # start-up on a busy host
                mutants.append(
                    {
                        "id": site.id,
                        "files": mutant_sources(sources, [site]),
                        "tests": run,
                        "timeout": budget,
                    }
                )
            job = {
                "root": "/app",
                "pythonpath": [project.root or "."],
                "mode": "mutants",
                "maxfail": MAX_FAILING_CASES + 1,
                "mutants": mutants,
            }
            total = sum(m["timeout"] for m in mutants) + 60
            outcomes = {o["id"]: o for o in self._run(image, job, timeout=total)}
            for site, tests in chunk:
                record.mutants.append(_classify(site, tests, outcomes.get(site.id), ok))
            with _lock:
                save_record(project, record)
            log.info(
                "%s: %d screened, %d kept", project.key, len(record.mutants), len(record.kept())
            )
        return record


def _classify(site: Site, tests: list[str], outcome: dict | None, ok: set[str]) -> MutantRecord:
    if outcome is None or outcome.get("status") != "ran":
        status = (outcome or {}).get("status", "error")
        return MutantRecord(site=site, status=status if status == "timeout" else "error")
    results = outcome.get("results", {})
    if outcome.get("collect_errors"):
        return MutantRecord(site=site, status="broad")
    failed = {
        t: _clean(r.get("message", ""))
        for t, r in results.items()
        if r["outcome"] != "passed" and t in ok
    }
    if not failed:
        return MutantRecord(site=site, status="survived")
    if len(failed) > MAX_FAILING_CASES or len({function_id(t) for t in failed}) > MAX_FAILING:
        return MutantRecord(site=site, status="broad")
    sample = [t for t in tests if t not in failed][:40]
    return MutantRecord(site=site, status="kept", failed=failed, covering=sample)


def _normalized(functions: list[str]) -> list[str]:
    """'./pkg/mod.py::f' -> 'pkg/mod.py::f' (a '.' entry of sys.path shows in file names)."""
    out = []
    for key in functions:
        path, _, name = key.partition("::")
        out.append(f"{posixpath.normpath(path)}::{name}")
    return out


def _clean(message: str) -> str:
    message = re.sub(r" at 0x[0-9a-fA-F]+", "", message)
    return message[:1500]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m factory.families.terminal.repo_bug",
        description="Screen mutants of the repo-bug projects in containers.",
    )
    parser.add_argument("projects", nargs="*", help="project names (default: all)")
    parser.add_argument(
        "--limit", type=int, default=60, help="mutants to screen per project (0: none, no Docker)"
    )
    parser.add_argument(
        "--bundle", action="store_true", help="write the results into the bundled screened/"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    projects = load_projects()
    unknown = [n for n in args.projects if n not in projects]
    if unknown:
        parser.error(f"unknown project(s) {', '.join(unknown)}; known: {', '.join(projects)}")
    screener = Screener() if args.limit > 0 else None
    try:
        for name in args.projects or list(projects):
            project = projects[name]
            record = (
                screener.screen(project, limit=args.limit) if screener else load_record(project)
            )
            if record is None:
                print(f"{name}: not screened yet")
                continue
            if args.bundle:
                save_record(project, record, bundled=True)
            print(f"{name}: {len(record.mutants)} screened, {len(record.kept())} kept")
    finally:
        if screener:
            screener.runtime.close()
    return 0
