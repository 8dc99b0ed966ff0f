"""Try a family outside a suite: render it at some difficulties and seeds, then certify each
task exactly as generation would (`factory families try`, and the registry contract test)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory.errors import FactoryError
from factory.executor import Executor
from factory.families import registry
from factory.generate.certify import Certificate, certify
from factory.generate.render import Origin, render_family
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty
from factory.llm import LlmClient
from factory.validate.independent import model_wrong_solutions, variation_scripts
from factory.validate.validator import Validator, map_interruptibly


@dataclass
class Trial:
    family: str
    difficulty: Difficulty
    seed: int
    spec: TaskSpec
    path: Path
    certificate: Certificate | None = None


def render_trial(
    name: str,
    difficulty: Difficulty,
    seed: int,
    out_dir: Path,
    params: dict[str, Any] | None = None,
) -> Trial:
    """One task of family ``name``; ``params`` over the family's defaults."""
    family = registry.get(name)
    task_id = f"{name}-{difficulty.value}-{seed}"
    draft = family.draft(random.Random(seed), difficulty, family.params_with(params or {}))
    origin = Origin(
        suite="trial",
        taxonomy_path=f"{family.domain.value}/{family.category}/{name}",
        category=family.category,
        seed=seed,
        generator=name,
    )
    spec = render_family(family, draft, task_id=task_id, difficulty=difficulty, origin=origin)
    return Trial(name, difficulty, seed, spec, spec.write(out_dir / task_id))


def certify_trial(trial: Trial, validator: Validator, llm: LlmClient | None = None) -> Trial:
    """Certify as generation would, and also run the wrong solutions the family did not write
    (:mod:`factory.validate.independent`): variations of the reference, and model-written ones
    when ``llm`` is given. Those are reported (probe kind ``independent``), not counted in
    verifier strength: only the family knows whether its tests grade the outputs' text."""
    reference = trial.spec.files["solution/solve.sh"].decode("utf-8", errors="replace")
    independent = variation_scripts(reference, trial.spec.outputs)
    if llm is not None:
        found = model_wrong_solutions(llm, trial.spec.instruction, reference, seed=trial.seed)
        independent.update(found)
    trial.certificate = certify(
        trial.path,
        validator,
        secrets=trial.spec.secrets,
        outputs=trial.spec.outputs,
        mutations=dict(trial.spec.mutations),
        cheats=dict(trial.spec.cheats),
        independent=independent,
        forbidden_strings=trial.spec.forbidden_strings,
    )
    return trial


def try_families(
    names: list[str],
    difficulties: list[Difficulty],
    seeds: list[int],
    out: Path,
    *,
    executor: Executor | None = None,
    llm: LlmClient | None = None,
    params: dict[str, Any] | None = None,
    on_done: Callable[[Trial], None] = lambda _trial: None,
) -> list[Trial]:
    """`factory families try`: render every (family, difficulty, seed) into ``OUT/tasks``
    and, given an executor, certify each as generation would (logs in ``OUT/validation``),
    with model-written wrong solutions too when ``llm`` is given; ``params`` over each family's
    defaults; ``on_done`` sees each trial certified."""
    try:
        trials = [
            render_trial(name, level, seed, out / "tasks", params)
            for name in names
            for level in difficulties
            for seed in seeds
        ]
    except KeyError as exc:
        raise FactoryError(str(exc.args[0])) from None
    except ValueError as exc:  # a family parameter it does not take (--param)
        raise FactoryError(str(exc)) from None
    if executor is None:
        return trials
    validator = Validator(executor.runtime, out / "validation", force=True, executor=executor)

    def one(trial: Trial) -> Trial:
        on_done(certify_trial(trial, validator, llm))
        return trial

    return map_interruptibly(one, trials, validator.jobs, on_interrupt=validator.cancel)
