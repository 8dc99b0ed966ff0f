"""Generation verdicts do not depend on which worker finishes first: near-duplicates are
settled in leaf and attempt order, so the earlier candidate is kept in every run."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
import yaml
from fixtures.generate_cli import shell_basics_taxonomy

from factory.generate.certify import Certificate
from factory.generate.pipeline import SuiteGenerator, candidate_seed
from factory.generate.procedural import ProceduralBackend
from factory.generate.taxonomy import parse_taxonomy
from factory.runtime import DockerRuntime

TAXONOMY = shell_basics_taxonomy(
    "order", 5, "{quota: 2, difficulty: {easy: 1}, attempts_per_task: 3, repeats: 1}"
)


class CopyingBackend:
    """shell-basics, except that some candidates copy another one's content."""

    def __init__(self, suite: str, copies: dict[str, tuple[str, int]]) -> None:
        self.inner = ProceduralBackend(suite)
        self.copies = copies
        """task id -> (leaf path, attempt) whose seed it reuses."""

    def make(self, leaf, difficulty, seed, task_id):
        if task_id in self.copies:
            path, attempt = self.copies[task_id]
            seed = candidate_seed(5, path, attempt)
        return self.inner.make(leaf, difficulty, seed, task_id)

    def repair(self, leaf, spec, certificate):
        return None


def _generate(tmp_path, text: str, backend, delays: dict[str, float], jobs: int):
    """Run generation with every candidate valid after ``delays[id]`` seconds of certification."""
    taxonomy = parse_taxonomy(yaml.safe_load(text))
    generator = SuiteGenerator(
        taxonomy, text, tmp_path, DockerRuntime("unit-order"), lambda _leaf: backend, jobs=jobs
    )

    def certify(self, leaf, spec, staging):
        time.sleep(delays.get(staging.name, 0.0))
        return Certificate("valid", "ok")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SuiteGenerator, "_certify", certify)
        generator.run()
    return [r for state in generator.states.values() for r in state.results.values()]


def _run(tmp_path, delays: dict[str, float], jobs: int) -> dict[str, tuple[str, str | None]]:
    copies = {
        "shell-basics-001": ("terminal/shell/basics", 0),
        "shell-words-000": ("terminal/shell/basics", 0),
    }
    backend = CopyingBackend("order", copies)
    results = _generate(tmp_path, TAXONOMY, backend, delays, jobs)
    return {r.id: (r.outcome, r.duplicate_of) for r in results}


def test_the_earlier_near_duplicate_is_kept_whoever_finishes_first(tmp_path):
    # First run: every candidate is quick. Second run: the first candidate is the slowest, so
    # its copies finish certification long before it does.
    quick = _run(tmp_path / "quick", {}, jobs=1)
    slow_first = _run(tmp_path / "slow", {"shell-basics-000": 0.6}, jobs=4)
    assert quick == slow_first
    assert quick["shell-basics-000"] == ("valid", None)
    assert quick["shell-basics-001"] == ("duplicate", "shell-basics-000")
    assert quick["shell-words-000"] == ("duplicate", "shell-basics-000")
    accepted = sorted(i for i, (outcome, _) in quick.items() if outcome == "valid")
    assert [i.rsplit("-", 1)[0] for i in accepted] == ["shell-basics"] * 2 + ["shell-words"] * 2
    assert sorted(p.name for p in (tmp_path / "slow" / "tasks").iterdir()) == accepted


class FaultBackend(CopyingBackend):
    """shell-basics with a fault combination per candidate: attempts 0 and 1 share one."""

    FAULTS = {0: ("bind", "port"), 1: ("port", "bind"), 2: ("perm",)}

    def make(self, leaf, difficulty, seed, task_id):
        spec, usage = super().make(leaf, difficulty, seed, task_id)
        attempt = int(task_id.rsplit("-", 1)[1])
        return dataclasses.replace(spec, faults=self.FAULTS[attempt]), usage


def _run_structure(tmp_path, delays: dict[str, float], jobs: int) -> dict[str, tuple[str, str]]:
    text = TAXONOMY.replace("repeats: 1}", "repeats: 1, min_fault_combinations: 1.0}")
    text = text.replace("          - {name: words, generator: shell-basics}\n", "")
    results = _generate(tmp_path, text, FaultBackend("order", {}), delays, jobs)
    return {r.id: (r.outcome, r.reason) for r in results}


def test_a_repeated_fault_combination_is_refused_in_attempt_order(tmp_path):
    quick = _run_structure(tmp_path / "quick", {}, jobs=1)
    slow_first = _run_structure(tmp_path / "slow", {"shell-basics-000": 0.6}, jobs=3)
    assert quick == slow_first
    assert quick["shell-basics-000"][0] == "valid"
    outcome, reason = quick["shell-basics-001"]
    assert outcome == "same_structure"
    assert "bind, port" in reason or "port, bind" in reason
    assert quick["shell-basics-002"][0] == "valid"
    journal = json.loads((tmp_path / "slow" / "suite.json").read_text())
    assert sorted(tuple(t["faults"]) for t in journal["tasks"]) == [("bind", "port"), ("perm",)]
