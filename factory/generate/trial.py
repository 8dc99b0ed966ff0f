"""Try a family outside a suite: render it at some difficulties and seeds, then certify each
task exactly as generation would (`factory families try`, and the registry contract test)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from factory.families import registry
from factory.generate.certify import Certificate, certify
from factory.generate.render import Origin, render_family
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty
from factory.validate.validator import Validator


@dataclass
class Trial:
    family: str
    difficulty: Difficulty
    seed: int
    spec: TaskSpec
    path: Path
    certificate: Certificate | None = None


def render_trial(name: str, difficulty: Difficulty, seed: int, out_dir: Path) -> Trial:
    family = registry.get(name)
    task_id = f"{name}-{difficulty.value}-{seed}"
    draft = family.draft(random.Random(seed), difficulty, dict(family.default_params))
    origin = Origin(
        suite="trial",
        taxonomy_path=f"{family.domain.value}/{family.category}/{name}",
        category=family.category,
        seed=seed,
        generator=name,
    )
    spec = render_family(family, draft, task_id=task_id, difficulty=difficulty, origin=origin)
    return Trial(name, difficulty, seed, spec, spec.write(out_dir / task_id))


def certify_trial(trial: Trial, validator: Validator) -> Trial:
    trial.certificate = certify(
        trial.path,
        validator,
        secrets=trial.spec.secrets,
        outputs=trial.spec.outputs,
        mutations=dict(trial.spec.mutations),
        cheats=dict(trial.spec.cheats),
        forbidden_strings=trial.spec.forbidden_strings,
    )
    return trial
