"""Generation verdicts do not depend on which worker finishes first: near-duplicates are
settled in leaf and attempt order, so the earlier candidate is kept in every run."""

from __future__ import annotations

import time

import pytest
import yaml

from factory.generate.certify import Certificate
from factory.generate.pipeline import SuiteGenerator, candidate_seed
from factory.generate.procedural import ProceduralBackend
from factory.generate.taxonomy import parse_taxonomy
from factory.runtime import DockerRuntime

TAXONOMY = """suite: order
seed: 5
defaults: {quota: 2, difficulty: {easy: 1}, attempts_per_task: 3, repeats: 1}
domains:
  - name: terminal
    categories:
      - name: shell
        skills:
          - {name: basics, generator: shell-basics}
          - {name: words, generator: shell-basics}
"""


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


def _run(tmp_path, delays: dict[str, float], jobs: int) -> dict[str, tuple[str, str | None]]:
    taxonomy = parse_taxonomy(yaml.safe_load(TAXONOMY))
    copies = {
        "shell-basics-001": ("terminal/shell/basics", 0),
        "shell-words-000": ("terminal/shell/basics", 0),
    }
    backend = CopyingBackend(taxonomy.suite, copies)
    generator = SuiteGenerator(
        taxonomy, TAXONOMY, tmp_path, DockerRuntime("unit-order"), lambda _leaf: backend, jobs=jobs
    )

    def certify(self, leaf, spec, staging):
        time.sleep(delays.get(staging.name, 0.0))
        return Certificate("valid", "ok")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SuiteGenerator, "_certify", certify)
        generator.run()
    return {
        r.id: (r.outcome, r.duplicate_of)
        for state in generator.states.values()
        for r in state.results.values()
    }


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
