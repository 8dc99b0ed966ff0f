"""One repo-bug task through the real certifier: the image fetches the pinned sdist at build
time, the verifier runs the project's own tests offline, nop scores 0, the inverse patch 1, and
every near miss (a different wrong fix, deleted failing tests, a forcing conftest) 0."""

from __future__ import annotations

import random

import pytest

from factory.families import registry
from factory.generate.render import Origin, render_family
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import Trial, certify_trial
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker


@pytest.mark.timeout(1800)
def test_a_repo_bug_task_certifies(runtime, tmp_path):
    family = registry.get("repo-bug")
    params = {**family.default_params, "projects": ["inflection"], "llm_report": False}
    draft = family.draft(random.Random(3), Difficulty.EASY, params)
    origin = Origin("it", "terminal/real-code/repo-bug", family.category, 3, family.name)
    spec = render_family(family, draft, task_id="rb-it", difficulty=Difficulty.EASY, origin=origin)
    trial = Trial(family.name, Difficulty.EASY, 3, spec, spec.write(tmp_path / "rb-it"))
    validator = Validator(runtime, tmp_path / "validation", jobs=1, force=True, repeats=1)
    cert = certify_trial(trial, validator).certificate
    assert cert.valid, f"{cert.outcome}: {cert.reason}\n{cert.log_tail}"
    assert cert.verifier_strength == 1.0
    assert {p.name for p in cert.probes if p.kind == "mutation"} >= {
        "wrong-fix",
        "force-pass-conftest",
    }
