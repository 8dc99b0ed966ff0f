"""The procedural backend: a leaf's family drafts the task, its templates render it."""

from __future__ import annotations

import random
from typing import Any

from factory.families import registry
from factory.families.base import Family
from factory.generate.certify import Certificate
from factory.generate.pipeline import GenerationError, persona_and_scenario
from factory.generate.render import Origin, render_family
from factory.generate.results import LlmUsage
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty, Leaf


def render_candidate(
    family: Family,
    params: dict[str, Any],
    leaf: Leaf,
    difficulty: Difficulty,
    seed: int,
    task_id: str,
    **origin: Any,
) -> TaskSpec:
    """``family``'s task for a candidate of ``leaf``: drafted with the candidate's seed and
    rendered with its origin (``origin``: the :class:`Origin` fields beyond the leaf's and the
    seed's, ``suite`` first)."""
    where = Origin(
        taxonomy_path=leaf.path,
        category=family.category,
        seed=seed,
        generator=family.name,
        **origin,
    )
    draft = family.draft(random.Random(seed), difficulty, params)
    return render_family(family, draft, task_id=task_id, difficulty=difficulty, origin=where)


class ProceduralBackend:
    def __init__(self, suite: str) -> None:
        self.suite = suite

    def make(
        self, leaf: Leaf, difficulty: Difficulty, seed: int, task_id: str
    ) -> tuple[TaskSpec, LlmUsage]:
        try:
            family = registry.get(leaf.skill.generator)
        except KeyError as exc:
            raise GenerationError(str(exc.args[0])) from None
        params = family.params_with(leaf.skill.params)
        persona, scenario = persona_and_scenario(leaf, seed)
        origin = {"suite": self.suite, "persona": persona, "scenario": scenario}
        try:
            spec = render_candidate(family, params, leaf, difficulty, seed, task_id, **origin)
        except Exception as exc:  # noqa: BLE001 - a family bug rejects one candidate, not the run
            raise GenerationError(
                f"family {family.name} failed: {type(exc).__name__}: {exc}"
            ) from None
        return spec, LlmUsage()

    def repair(self, leaf: Leaf, spec: TaskSpec, certificate: Certificate) -> None:
        return None
