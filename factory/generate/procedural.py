"""The procedural backend: a leaf's family drafts the task, its templates render it."""

from __future__ import annotations

import random

from factory.families import registry
from factory.generate.certify import Certificate
from factory.generate.pipeline import GenerationError, persona_and_scenario
from factory.generate.render import Origin, render_family
from factory.generate.results import LlmUsage
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty, Leaf


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
        params = {**family.default_params, **leaf.skill.params}
        persona, scenario = persona_and_scenario(leaf, seed)
        origin = Origin(
            suite=self.suite,
            taxonomy_path=leaf.path,
            category=family.category,
            seed=seed,
            generator=family.name,
            persona=persona,
            scenario=scenario,
        )
        try:
            draft = family.draft(random.Random(seed), difficulty, params)
            spec = render_family(
                family, draft, task_id=task_id, difficulty=difficulty, origin=origin
            )
        except Exception as exc:  # noqa: BLE001 - a family bug rejects one candidate, not the run
            raise GenerationError(
                f"family {family.name} failed: {type(exc).__name__}: {exc}"
            ) from None
        return spec, LlmUsage()

    def repair(self, leaf: Leaf, spec: TaskSpec, certificate: Certificate) -> None:
        return None
