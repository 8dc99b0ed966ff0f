"""repo-bug: a bug planted in a real open-source Python project, caught by its own tests.

A task is a pinned release of one of the projects in ``projects.toml`` (its sdist, fetched at
build time through the package index) at ``/app`` with one to three screened mutants applied
(see ``mutate`` and ``screen``). The agent gets an issue report of the symptom and the
project's test suite minus some held-out tests; the verifier runs the project's failing tests,
the held-out ones and a sample of previously passing tests (``tests/verify.py``).

easy: one mutant with a clear symptom, the failing test named; medium: a subtler mutant
(boundary, constant, slice, arithmetic) or one with two failing behaviours, symptoms only;
hard: two or three mutants in different modules (different functions when the project has
one module with kept mutants), a symptom-only report. The reference solution is the inverse
patch. Near misses: a different wrong fix, a partial fix (hard), deleting the failing tests,
and a conftest that forces tests to pass.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import re
import shlex
import threading
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.shipped import read
from factory.vocabulary import Difficulty

from .hiding import hide, hideable
from .mutate import SUBTLE, Site, mutant_sources
from .projects import (
    PYTEST_PIN,
    Project,
    load_projects,
    project_files,
    project_tests,
    source_modules,
)
from .report import (
    PROMPT_VERSION,
    Forbidden,
    Symptom,
    called_names,
    clean_message,
    llm_report,
    public_names,
    template_report,
)
from .screen import (
    MutantRecord,
    Screener,
    ScreenRecord,
    function_id,
    load_record,
)

CONFIG_FILES = ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
MIN_SCANNED_LINE = 28
"""Original lines shorter than this are not searched for in the image (too generic)."""
MIN_KEPT = 3
"""Projects with fewer kept mutants than this are not drawn."""
HARD_FEWEST = 3
"""A hard task plants this many mutants or one more, each in its own function (and module when
the project has enough): a hard task is drawn only from projects with kept mutants in at least
this many functions."""
FORCE_PASS = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""

SHELL_WORD = re.compile(r"[A-Za-z0-9_./-]+")
"""Test file paths the Dockerfile may name unquoted (the ones its bytecode step collects)."""
NOT_COLLECTED = ("__init__.py", "conftest.py")
"""Test folder files pytest loads without being named (the bytecode step does not name them)."""

DIGEST_CHARS = 16
"""sha256 prefix the verifier compares (64 bits: no edit collides by accident, and a task's
tests/ stays small, which keeps tasks of one project apart in the suite's near-duplicate check)."""

_screen_locks: dict[str, threading.Lock] = {}
_screen_guard = threading.Lock()


def ensure_record(project: Project) -> ScreenRecord:
    """The screening record of ``project``: bundled or cached, else screened now (Docker)."""
    with _screen_guard:
        lock = _screen_locks.setdefault(project.key, threading.Lock())
    with lock:
        record = load_record(project)
        if record is not None:
            return record
        screener = Screener()
        try:
            return screener.screen(project)
        finally:
            screener.runtime.close()


def short_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


def unified(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
        )
    )


def heredoc_write(path: str, text: str) -> str:
    tag = "RB_EOF_" + hashlib.sha256(text.encode()).hexdigest()[:10]
    ending = "" if text.endswith("\n") else "\n"
    return f"cat > /app/{path} <<'{tag}'\n{text}{ending}{tag}\n"


def patch_script(diff: str, comment: str) -> str:
    return f"#!/bin/bash\n# {comment}\nset -euo pipefail\ncd /app\npatch -p1 <<'PATCH_EOF'\n{diff}PATCH_EOF\n"


def run_command(project: Project) -> str:
    folders = [t for t in project.tests if not t.endswith(".py")]
    if len(folders) != len(project.tests):
        folders = []
    return " ".join(["cd /app && python3 -m pytest -q -o addopts=", *folders]).strip()


# --- choosing mutants -----------------------------------------------------------------------------
def _overlaps(a: Site, b: Site) -> bool:
    return a.path == b.path and not (
        (a.end_line, a.end_col) <= (b.line, b.col) or (b.end_line, b.end_col) <= (a.line, a.col)
    )


def choose_mutants(
    rng: random.Random, kept: list[MutantRecord], level: str, apis: dict[str, set[str]]
) -> list[MutantRecord]:
    """The mutants of one task. ``apis``: mutant id -> public names its failing tests call."""
    kept = sorted(kept, key=lambda m: m.site.id)
    if level == "easy":
        clear = [m for m in kept if m.site.operator not in SUBTLE and len(m.failed) <= 6]
        return [rng.choice(clear or kept)]
    if level == "medium":
        subtle = [m for m in kept if m.site.operator in SUBTLE or len(apis[m.site.id]) >= 2]
        return [rng.choice(subtle or kept)]
    count = rng.choice([HARD_FEWEST, HARD_FEWEST + 1])
    pool = list(kept)
    rng.shuffle(pool)
    chosen: list[MutantRecord] = []
    for module_rule in (True, False):  # different modules first, else different functions
        chosen = []
        for m in pool:
            if any(_overlaps(m.site, c.site) or m.site.function == c.site.function for c in chosen):
                continue
            if module_rule and any(m.site.path == c.site.path for c in chosen):
                continue
            chosen.append(m)
            if len(chosen) == count:
                break
        if len(chosen) >= HARD_FEWEST:
            break
    if len(chosen) < HARD_FEWEST:
        raise ValueError("the project has too few independent mutants for a hard task")
    return sorted(chosen, key=lambda m: m.site.id)


def hard_capable(record: ScreenRecord) -> bool:
    """Whether the project's kept mutants lie in enough functions for a hard task."""
    return len({(m.site.path, m.site.function) for m in record.kept()}) >= HARD_FEWEST


def fault_name(project: Project, site: Site) -> str:
    """The grammar name of a planted bug: project, module, function and operator."""
    path = site.path.removeprefix(f"{project.root}/") if project.root else site.path
    module = path.removesuffix(".py").replace("/", ".")
    raw = f"{project.name}.{module}.{site.function}.{site.operator.value}"
    return re.sub(r"[^\w.-]+", "_", raw)


@register
class RepoBug(Family):
    name = "repo-bug"
    title = "Fix a bug planted in a real open-source Python project, caught by its own tests"
    category = "software-engineering"
    default_params: Mapping[str, Any] = {"projects": [], "llm_report": True}
    """params.projects: names from projects.toml to draw from (empty: all); params.llm_report:
    let the configured LLM (FACTORY_LLM_BASE_URL/MODEL) write the issue report."""

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        projects = load_projects()
        names = list(params.get("projects") or sorted(projects))
        unknown = [n for n in names if n not in projects]
        if unknown:
            raise ValueError(f"params.projects: unknown {unknown}; known: {sorted(projects)}")
        order = list(names)
        rng.shuffle(order)
        # Projects already screened (bundled or cached) first: one not screened yet is
        # screened here (minutes of Docker) only when no listed project has a record.
        records = {n: load_record(projects[n]) for n in order}
        ready = [n for n in order if records[n] is not None and len(records[n].kept()) >= MIN_KEPT]
        if level == "hard":
            ready = [n for n in ready if hard_capable(records[n])]
        if ready:
            project, record = projects[ready[0]], records[ready[0]]
        else:
            for name in order:
                project, record = projects[name], ensure_record(projects[name])
                if len(record.kept()) >= MIN_KEPT:
                    break
            else:
                raise ValueError(f"no project among {names} has {MIN_KEPT} kept mutants")
        return TaskBuilder(project, record, rng, level, params).draft()


class TaskBuilder:
    """Assembles one repo-bug task (a helper of :class:`RepoBug`, one per draft)."""

    def __init__(
        self,
        project: Project,
        record: ScreenRecord,
        rng: random.Random,
        level: str,
        params: Mapping[str, Any],
    ) -> None:
        self.project, self.record, self.rng, self.level = project, record, rng, level
        self.params = params
        self.sources = source_modules(project)
        self.tests = project_tests(project)
        self.files = project_files(project)
        self.public = public_names(self.sources)
        self.forbidden = Forbidden.of(sorted(self.files), project.package, project.root)

    def _apis(self, mutant: MutantRecord) -> set[str]:
        out: set[str] = set()
        for test in mutant.failed:
            path = test.split("::", 1)[0]
            out.update(called_names(self.tests.get(path, ""), test, self.public))
        return out

    def draft(self) -> Draft:
        rng, project = self.rng, self.project
        kept = [m for m in self.record.kept() if self._usable(m)]
        apis = {m.site.id: self._apis(m) for m in kept}
        chosen = choose_mutants(rng, kept, self.level, apis)
        sites = [m.site for m in chosen]
        mutated = mutant_sources(self.sources, sites)
        failing = sorted({t for m in chosen for t in m.failed})

        # held-out tests: about half of each mutant's failing test functions, one always stays
        # visible; and a few passing tests that run the mutated functions
        hidden: dict[str, list[str]] = {}
        for m in chosen:
            functions = sorted({function_id(t) for t in m.failed})
            candidates = self._hideable(functions)
            n = min(len(candidates), len(functions) // 2)
            for test in rng.sample(candidates, n):
                hidden.setdefault(test.split("::")[0], []).append(test)
        functions = set(self.record.test_seconds) - set(self.record.unclean)
        covering = sorted(
            {function_id(t) for m in chosen for t in m.covering}
            & functions - {function_id(t) for t in failing}
        )
        extra = rng.sample(self._hideable(covering), min(3, len(self._hideable(covering))))
        for test in extra:
            hidden.setdefault(test.split("::")[0], []).append(test)
        held = {
            path: hide(path, self.tests[path], hideable(path, self.tests[path], ids))
            for path, ids in hidden.items()
        }
        visible_tests = {p: (held[p].visible if p in held else t) for p, t in self.tests.items()}

        # what the verifier runs and expects: test functions, each case of which must pass
        regression = sorted(set(rng.sample(covering, min(20, len(covering)))) | set(extra))
        others = sorted(functions - set(covering) - {function_id(t) for t in failing})
        regression += rng.sample(others, min(8, len(others)))
        alt = self._alternative(chosen)
        expect = {function_id(t) for t in failing}
        if alt is not None:
            expect |= {function_id(t) for t in alt.failed}
        expect &= functions
        regress = sorted(set(regression) & functions - expect)
        run = sorted(expect | set(regress))
        seconds = sum(self.record.test_seconds.get(f, 0.5) for f in run)
        timeout = int(min(900, 90 + 5 * seconds))

        protected = {path: short_digest(text.encode()) for path, text in visible_tests.items()}
        for path, data in self.files.items():
            name = path.rsplit("/", 1)[-1]
            if path in CONFIG_FILES or name == "conftest.py":
                protected[path] = short_digest(data)
        spec = {
            "root": "/app",
            "pythonpath": [project.root or "."],
            "protected": protected,
            "restore": {
                path: {"sha256": h.original_sha256[:DIGEST_CHARS], "inserts": h.inserts}
                for path, h in sorted(held.items())
            },
            "run": run,
            "expect": sorted(expect),
            "regress": regress,
            "timeout": timeout,
        }

        overlay = {f"environment/overlay/{p}": t for p, t in mutated.items()}
        overlay.update({f"environment/overlay/{p}": h.visible for p, h in held.items()})
        patch = "".join(unified(p, mutated[p], self.sources[p]) for p in sorted(mutated))
        report, source = self._report(chosen, held)
        files: dict[str, str | bytes] = dict(overlay)
        files["tests/spec.json"] = json.dumps(spec, indent=1, sort_keys=True) + "\n"
        for name in ("rb_run.py", "rb_outcomes.py"):
            files[f"tests/{name}"] = read(__file__, name)
        secrets = sorted({s.path for s in sites} | self._original_lines(sites))
        hard: dict[str, Any] = {}
        faults: list[str] = []
        mutations = self._near_misses(chosen, mutated, patch, alt, visible_tests, held)
        if self.level == "hard":
            hard = self._hard_solution(sites, mutated, chosen, held)
            faults = [fault_name(project, s) for s in sites]
            for site, fault in zip(sites, faults, strict=True):
                left = mutant_sources(self.sources, [site])
                only = "".join(
                    unified(p, mutated[p], left.get(p, self.sources[p])) for p in sorted(mutated)
                )
                mutations[f"unfixed-{fault}"] = patch_script(
                    only, f"Near miss: every bug fixed but the one in {site.function}."
                )
        return Draft(
            context={
                **hard,
                "report": report,
                "name": project.name,
                "sha256": project.sha256,
                "pytest_pin": PYTEST_PIN,
                "test_files": [
                    t
                    for t in sorted(visible_tests)
                    if SHELL_WORD.fullmatch(t) and t.rsplit("/", 1)[-1] not in NOT_COLLECTED
                ],
                "patch": patch,
                "project": project.name,
                "version": project.version,
            },
            files=files,
            secrets=secrets,
            outputs=[f"/app/{p}" for p in sorted(mutated)],
            separate_verifier=True,
            # verify.py copies /app (the project, its tests and their configuration) and runs it
            artifacts=["/app/"],
            forbidden_strings=sorted(self._unique_original_lines(sites, mutated)),
            agent_timeout_sec=1800.0 if self.level == "hard" else 900.0,
            verifier_timeout_sec=float(timeout + 60),
            memory_mb=2048,
            tags=[
                "python",
                "debugging",
                "real-code",
                f"project:{project.name}",
                f"report:{source}",
                *sorted({f"mutation:{s.operator.value}" for s in sites}),
            ],
            mutations=mutations,
            faults=sorted(faults),
        )

    # --- pieces -------------------------------------------------------------------------------
    def _hard_solution(
        self,
        sites: list[Site],
        mutated: dict[str, str],
        chosen: list[MutantRecord],
        held: dict,
    ) -> dict[str, Any]:
        """The hard reference, as a person works: run the suite, then for each bug look at the
        place and patch it (one patch per planted bug, applied in turn), then run the tests
        that failed (the visible ones) again."""
        edits = []
        current = dict(mutated)
        rest = list(sites)
        for site in sites:
            rest.remove(site)
            left = mutant_sources(self.sources, rest)
            fixed = left.get(site.path, self.sources[site.path])
            diff = unified(site.path, current[site.path], fixed)
            hunk = re.search(r"^@@ -(\d+)(?:,(\d+))? ", diff, re.M)
            if not diff or hunk is None:
                raise ValueError(f"no patch for the bug in {site.function}")
            first, count = int(hunk.group(1)), int(hunk.group(2) or 1)
            edits.append(
                {"path": site.path, "first": first, "last": first + count - 1, "patch": diff}
            )
            current[site.path] = fixed
        if any(current[p] != self.sources[p] for p in mutated):
            raise ValueError("the per-bug patches do not restore the project")
        hidden = {t for h in held.values() for t in h.hidden}
        shown = sorted({function_id(t) for m in chosen for t in m.failed} - hidden)
        # a src layout is not installed in the image: its package is found through PYTHONPATH
        env = f"PYTHONPATH={self.project.root} " if self.project.root else ""
        return {
            "edits": edits,
            "suite_command": env + run_command(self.project).split(" && ", 1)[1],
            "failed_again": env
            + "python3 -m pytest -q -o addopts= "
            + " ".join(shlex.quote(t) for t in shown),
        }

    def _usable(self, mutant: MutantRecord) -> bool:
        """Its failing tests are in the project's test files, and fully pass at baseline."""
        unclean = set(self.record.unclean)
        return all(
            t.split("::")[0] in self.tests and function_id(t) not in unclean for t in mutant.failed
        )

    def _hideable(self, functions: list[str]) -> list[str]:
        out = []
        by_path: dict[str, list[str]] = {}
        for test in functions:
            by_path.setdefault(test.split("::")[0], []).append(test)
        for path, ids in sorted(by_path.items()):
            if path in self.tests:
                out += hideable(path, self.tests[path], ids)
        return sorted(out)

    def _alternative(self, chosen: list[MutantRecord]) -> MutantRecord | None:
        """Another kept mutant near the first one (same file first): the 'wrong fix' probe."""
        first = chosen[0].site
        others = [
            m
            for m in self.record.kept()
            if all(not _overlaps(m.site, c.site) for c in chosen) and self._usable(m)
        ]
        same = [m for m in others if m.site.path == first.path]
        pool = sorted(same or others, key=lambda m: m.site.id)
        return self.rng.choice(pool) if pool else None

    def _symptoms(self, chosen: list[MutantRecord], held: dict) -> list[Symptom]:
        hidden = {t for h in held.values() for t in h.hidden}
        per_mutant = {"easy": 2, "medium": 2, "hard": 1}[self.level]
        out: list[Symptom] = []
        for m in chosen:
            tests = sorted(m.failed, key=lambda t: (function_id(t) in hidden, t))
            seen_api: set[tuple[str, ...]] = set()
            found = 0
            for test in tests:
                path = test.split("::")[0]
                api = called_names(self.tests.get(path, ""), test, self.public)
                name = function_id(test).rsplit("::", 1)[-1]
                key = (name,) if self.level == "easy" else tuple(api)
                if key in seen_api:
                    continue  # one line per failing test (easy), per API (otherwise)
                seen_api.add(key)
                error, detail = clean_message(m.failed[test], self.forbidden)
                out.append(Symptom(test=name, api=api, error=error, detail=detail))
                found += 1
                if found >= per_mutant:
                    break
        return out

    def _report(self, chosen: list[MutantRecord], held: dict) -> tuple[str, str]:
        symptoms = self._symptoms(chosen, held)
        command = run_command(self.project)
        seed = self.rng.randint(0, 2**31 - 1)
        text = template_report(
            random.Random(seed),
            project=self.project.name,
            version=self.project.version,
            level=self.level,
            symptoms=symptoms,
            run_command=command,
        )
        if self.params.get("llm_report", True):
            written = llm_report(
                project=self.project.name,
                version=self.project.version,
                level=self.level,
                symptoms=symptoms,
                run_command=command,
                forbidden=self.forbidden,
                seed=seed,
            )
            if written is not None:
                return written, f"llm-{PROMPT_VERSION}"
        problems = self.forbidden.problems(text)
        if problems:
            raise ValueError(f"the report {problems[0]}")
        return text, "template"

    def _original_lines(self, sites: list[Site]) -> set[str]:
        out = set()
        for site in sites:
            line = self.sources[site.path].splitlines()[site.line - 1].strip()
            if len(line) >= 12:
                out.add(line)
        return out

    def _unique_original_lines(self, sites: list[Site], mutated: dict[str, str]) -> set[str]:
        """Original lines at the sites found nowhere else in the project: if the image holds
        one, an original file was left in it."""
        out = set()
        for line in self._original_lines(sites):
            if len(line) < MIN_SCANNED_LINE:
                continue  # short lines also occur in the standard library or pytest
            needle = line.encode()
            elsewhere = any(
                needle in data
                for path, data in self.files.items()
                if path not in mutated and not path.endswith((".gz", ".zip"))
            )
            if not elsewhere and not any(line in text for text in mutated.values()):
                out.add(line)
        return out

    def _near_misses(
        self,
        chosen: list[MutantRecord],
        mutated: dict[str, str],
        patch: str,
        alt: MutantRecord | None,
        visible_tests: dict[str, str],
        held: dict,
    ) -> dict[str, str]:
        out: dict[str, str] = {}
        if alt is not None:
            wrong = mutant_sources(self.sources, [alt.site])
            script = patch_script(
                patch, "Near miss: the bug is fixed, but a nearby line is broken."
            )
            path = alt.site.path
            script += "patch -p1 <<'PATCH_EOF'\n" + unified(path, self.sources[path], wrong[path])
            out["wrong-fix"] = script + "PATCH_EOF\n"
        if len(chosen) > 1:
            rest = mutant_sources(self.sources, [m.site for m in chosen[1:]])
            partial = "".join(
                unified(p, mutated[p], rest.get(p, self.sources[p])) for p in sorted(mutated)
            )
            out["partial"] = patch_script(partial, "Near miss: only one of the bugs is fixed.")
        failing = sorted({function_id(t) for m in chosen for t in m.failed})
        shown = [t for t in failing if t not in {x for h in held.values() for x in h.hidden}]
        by_path: dict[str, list[str]] = {}
        for test in shown:
            by_path.setdefault(test.split("::")[0], []).append(test)
        lines = ["#!/bin/bash", "# Near miss: the failing tests are deleted, the bug stays."]
        for path, ids in sorted(by_path.items()):
            removable = hideable(path, visible_tests[path], ids)
            if removable:
                lines.append(
                    heredoc_write(path, hide(path, visible_tests[path], removable).visible)
                )
        if len(lines) > 2:
            out["delete-failing-tests"] = "\n".join(lines)
        folder = self.project.tests[0].rstrip("/")
        conftests = ["conftest.py"] + ([] if folder.endswith(".py") else [f"{folder}/conftest.py"])
        out["force-pass-conftest"] = (
            "#!/bin/bash\n# Near miss: conftest files that report every test as passed.\n"
            + "".join(heredoc_write(path, FORCE_PASS) for path in conftests)
        )
        return out
