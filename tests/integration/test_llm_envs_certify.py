"""What the LLM web-app, tool-domain and free-form modes make from a capable model's reply
certifies in real containers (all three in Harbor's separate verifier): nop 0, oracle 1, and the
derived near misses rejected."""

from __future__ import annotations

import json

import pytest
from fixtures.llm_envs import (
    FREE,
    FREE_FORM_NEAR_MISSES,
    FREE_FORM_REPLY,
    TOOL,
    TOOL_DOMAIN_REPLY,
    WEB,
    WEB_APP_REPLY,
)
from fixtures.llm_stub import Stub, reply

from factory.generate.certify import certify
from factory.generate.llm_backend import LlmBackend
from factory.generate.taxonomy import Difficulty
from factory.llm import LlmClient, LlmSettings
from factory.tasks.lint import lint_task
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


@pytest.mark.parametrize(
    ("leaf", "answer", "near_misses"),
    [
        (WEB, WEB_APP_REPLY, {}),
        (TOOL, TOOL_DOMAIN_REPLY, {}),
        (FREE, FREE_FORM_REPLY, FREE_FORM_NEAR_MISSES),
    ],
    ids=["web-app", "tool-domain", "free-form"],
)
def test_llm_environment_task_certifies(runtime, tmp_path, stub, leaf, answer, near_misses):
    stub.queue = [reply(json.dumps(answer))]
    llm = LlmBackend(LlmClient(LlmSettings(base_url=stub.url, model="m")), "s")
    spec, _ = llm.make(leaf, Difficulty.HARD, 3, f"{leaf.skill.name}-000")
    task_dir = spec.write(tmp_path / "tasks" / spec.id)
    assert [f.line() for f in lint_task(task_dir)] == []  # no shared-verifier among them
    validator = Validator(runtime, tmp_path / "validation", jobs=1, force=True)
    certificate = certify(
        task_dir,
        validator,
        secrets=spec.secrets,
        outputs=spec.outputs,
        mutations={**spec.mutations, **near_misses},
        forbidden_strings=spec.forbidden_strings,
    )
    assert certificate.valid, f"{certificate.outcome}: {certificate.reason}\n{certificate.log_tail}"
    assert certificate.verifier_strength == 1.0
