"""The repo-bug family's rendering, without Docker (bundled screening records, sdists from the
package index through pip into the host cache): what the image, the verifier and the
reference solution get, and instructions that name no file or line of the project."""

from __future__ import annotations

import difflib
import json
import random
import subprocess

import pytest

from factory.families import registry
from factory.families.terminal.repo_bug.family import RepoBug, choose_mutants
from factory.families.terminal.repo_bug.mutate import compiles
from factory.families.terminal.repo_bug.projects import (
    load_projects,
    project_files,
    project_tests,
    source_modules,
)
from factory.families.terminal.repo_bug.report import Forbidden
from factory.families.terminal.repo_bug.screen import function_id, load_record
from factory.generate.render import Origin, render_family
from factory.generate.taxonomy import Difficulty
from factory.quality.leaks import find_leaks
from factory.quality.structure import solution_steps

PROJECTS = load_projects()
SCREENED = sorted(n for n, p in PROJECTS.items() if load_record(p) is not None)


def render(difficulty: Difficulty, seed: int, projects: list[str] | None = None):
    family = registry.get("repo-bug")
    params = {**family.default_params, "projects": projects or SCREENED, "llm_report": False}
    draft = family.draft(random.Random(seed), difficulty, params)
    origin = Origin("t", "terminal/real-code/repo-bug", family.category, seed, family.name)
    spec = render_family(family, draft, task_id=f"rb-{seed}", difficulty=difficulty, origin=origin)
    return draft, spec


def project_of(spec) -> str:
    return next(
        t.split(":", 1)[1] for t in spec.config.metadata["tags"] if t.startswith("project:")
    )


def patches_of(script: str) -> list[str]:
    """The heredoc patches of a solution or near miss, in order."""
    return [part.split("PATCH_EOF\n", 1)[0] for part in script.split("<<'PATCH_EOF'\n")[1:]]


def test_every_listed_project_is_screened_with_kept_mutants():
    assert len(PROJECTS) >= 10
    assert sorted(PROJECTS) == SCREENED
    for name in SCREENED:
        record = load_record(PROJECTS[name])
        assert len(record.kept()) >= 3, name
        assert all(1 <= len({function_id(t) for t in m.failed}) <= 10 for m in record.kept())


@pytest.mark.parametrize("difficulty", list(Difficulty))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_task_files_are_consistent(difficulty, seed, tmp_path):
    draft, spec = render(difficulty, seed)
    project = PROJECTS[project_of(spec)]
    sources, tests = source_modules(project), project_tests(project)
    files = spec.files
    spec_json = json.loads(files["tests/spec.json"])
    overlay = {
        p[len("environment/overlay/") :]: v.decode()
        for p, v in files.items()
        if p.startswith("environment/overlay/")
    }
    mutated = {p: t for p, t in overlay.items() if p in sources}
    n_sites = len([t for t in draft.tags if t.startswith("mutation:")])
    assert mutated and n_sites >= 1
    if difficulty is Difficulty.HARD:
        assert "partial" in spec.mutations
    for text in overlay.values():
        assert compiles(text)
    # the image gets no original module; the held-out tests are not in the visible files
    for path, text in mutated.items():
        assert text != sources[path]
    for path, entry in spec_json["restore"].items():
        assert overlay[path] != tests[path] and entry["inserts"]
    # every expected test runs, and the failing ones are expected
    assert set(spec_json["expect"]) | set(spec_json["regress"]) == set(spec_json["run"])
    assert spec_json["expect"] and not set(spec_json["expect"]) & set(spec_json["regress"])
    assert set(spec_json["protected"]) >= set(tests)
    # the reference solution restores the original files exactly
    work = tmp_path / "app"
    for path, text in mutated.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    solve = files["solution/solve.sh"].decode()
    for patch in patches_of(solve):
        subprocess.run(["patch", "-p1", "-s"], input=patch, text=True, cwd=work, check=True)
    for path in mutated:
        assert (work / path).read_text() == sources[path]
    # the Dockerfile fetches the pinned sdist and checks it; nothing leaks
    dockerfile = files["environment/Dockerfile"].decode()
    assert f"{project.name} {project.version} {project.sha256}" in dockerfile
    assert "pytest==" in dockerfile and dockerfile.startswith("FROM python:3.12-slim-bookworm")
    assert find_leaks(spec.write(tmp_path / "task"), spec.secrets) == []
    assert {"wrong-fix", "force-pass-conftest"} <= set(spec.mutations)
    assert spec.config.environment.network_enabled is False


def test_rendering_is_deterministic():
    assert render(Difficulty.MEDIUM, 5)[1].files == render(Difficulty.MEDIUM, 5)[1].files


@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_no_instruction_names_a_file_or_line_of_the_project(difficulty):
    for seed in range(1, 16):
        _, spec = render(difficulty, seed)
        project = PROJECTS[project_of(spec)]
        forbidden = Forbidden.of(sorted(project_files(project)), project.package, project.root)
        problems = forbidden.problems(spec.instruction)
        assert problems == [], f"seed {seed}: {problems}\n{spec.instruction}"
        assert "/app" in spec.instruction


def test_hard_tasks_plant_bugs_in_different_places():
    for seed in range(1, 8):
        draft, spec = render(Difficulty.HARD, seed)
        spec_json = json.loads(spec.files["tests/spec.json"])
        assert len(json.loads(json.dumps(spec_json["run"]))) >= 2
        solve = spec.files["solution/solve.sh"].decode()
        patches = patches_of(solve)
        assert 3 <= len(patches) <= 4, "one patch per planted bug, three or four"
        assert all(p.count("\n@@ ") == 1 for p in patches)
        assert len(draft.faults) == len(patches) == len(set(draft.faults))
        # every bug is a near miss of its own: all the others fixed, that one left
        for fault in draft.faults:
            near = patches_of(spec.mutations[f"unfixed-{fault}"])
            assert len(near) == 1 and near[0].count("\n@@ ") == len(patches) - 1


def test_each_unfixed_near_miss_leaves_exactly_one_bug(tmp_path):
    for seed in (1, 2):
        draft, spec = render(Difficulty.HARD, seed)
        sources = source_modules(PROJECTS[project_of(spec)])
        mutated = {
            p[len("environment/overlay/") :]: v.decode()
            for p, v in spec.files.items()
            if p.startswith("environment/overlay/") and p[len("environment/overlay/") :] in sources
        }
        for fault in draft.faults:
            work = tmp_path / f"{seed}-{fault}"
            for path, text in mutated.items():
                (work / path).parent.mkdir(parents=True, exist_ok=True)
                (work / path).write_text(text)
            for patch in patches_of(spec.mutations[f"unfixed-{fault}"]):
                subprocess.run(["patch", "-p1", "-s"], input=patch, text=True, cwd=work, check=True)
            left = [
                line
                for path in mutated
                for line in difflib.unified_diff(
                    sources[path].splitlines(), (work / path).read_text().splitlines(), n=0
                )
                if line.startswith("@@")
            ]
            assert len(left) == 1, (fault, left)


def test_hard_reference_is_what_a_person_types():
    """Run the suite, look at each place and patch it, run the failing tests again: at least
    eight steps, the patches applied one after another restore the project."""
    steps = []
    for seed in range(1, 12):
        draft, spec = render(Difficulty.HARD, seed)
        solve = spec.files["solution/solve.sh"].decode()
        steps.append(len(solution_steps(solve)))
        assert solve.count("\nsed -n '") == len(draft.faults)
        last = solve.rstrip("\n").rsplit("\n", 1)[1]
        assert "python3 -m pytest -q -o addopts= " in last and "::" in last
    assert sorted(steps)[len(steps) // 2] >= 8


def test_easy_and_medium_plant_no_grammar_faults():
    for difficulty in (Difficulty.EASY, Difficulty.MEDIUM):
        draft, spec = render(difficulty, 1)
        assert draft.faults == [] and not any(k.startswith("unfixed-") for k in spec.mutations)
        assert "sed -n" not in spec.files["solution/solve.sh"].decode()


def test_choose_mutants_by_level():
    record = load_record(PROJECTS[SCREENED[0]])
    kept = record.kept()
    apis = {m.site.id: set() for m in kept}
    for level in ("easy", "medium"):
        assert len(choose_mutants(random.Random(1), kept, level, apis)) == 1
    hard = choose_mutants(random.Random(1), kept, "hard", apis)
    assert 3 <= len(hard) <= 4
    assert len({m.site.function for m in hard}) == len(hard)
    with pytest.raises(ValueError):
        choose_mutants(random.Random(1), kept[:1], "hard", apis)
    two = [m for m in kept if m.site.function in {kept[0].site.function, kept[-1].site.function}]
    with pytest.raises(ValueError):
        choose_mutants(random.Random(1), two, "hard", apis)


def test_unknown_project_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown"):
        RepoBug().draft(random.Random(1), Difficulty.EASY, {"projects": ["no-such-project"]})


def test_projects_file_errors_name_the_field(tmp_path):
    from factory.errors import TaskFormatError

    bad = tmp_path / "projects.toml"
    bad.write_text('[[project]]\nname = "x"\nversion = "1"\nsha256 = "nothex"\n')
    with pytest.raises(TaskFormatError, match="project.0"):
        load_projects(bad)
    bad.write_text("[[project]\n")
    with pytest.raises(TaskFormatError, match="cannot read"):
        load_projects(bad)
    entry = PROJECTS[SCREENED[0]].model_dump()
    for tests, ok in ((entry["tests"], True), (["../outside"], False)):
        fields = {**entry, "tests": tests}
        bad.write_text(
            "[[project]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())
        )
        if ok:
            assert list(load_projects(bad)) == [entry["name"]]
    with pytest.raises(TaskFormatError, match="tests"):
        load_projects(bad)


def test_screening_image_task_is_the_project_without_a_mutant(tmp_path):
    from factory.families.terminal.repo_bug.screen import project_image_task
    from factory.tasks.model import load_task

    project = PROJECTS[SCREENED[0]]
    task = load_task(project_image_task(project, tmp_path / "img"))
    dockerfile = task.paths.dockerfile.read_text()
    assert f"fetch_sdist.py {project.name} {project.version} {project.sha256}" in dockerfile
    overlay = task.paths.environment_dir / "overlay"
    assert [p.name for p in overlay.iterdir()] == [".overlay"]
    assert (task.paths.environment_dir / "fetch_sdist.py").is_file()
