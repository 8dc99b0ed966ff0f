"""What the LLM web-app and tool-domain modes make from a capable model's reply certifies in
real containers: nop 0, oracle 1, and the derived near misses rejected."""

from __future__ import annotations

import json

import pytest
from fixtures.llm_envs import TOOL, TOOL_DOMAIN_REPLY, WEB, WEB_APP_REPLY
from fixtures.llm_stub import Stub, reply

from factory.generate.certify import certify
from factory.generate.llm_backend import LlmBackend
from factory.generate.taxonomy import Difficulty
from factory.llm import LlmClient, LlmSettings
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


@pytest.mark.parametrize(("leaf", "answer"), [(WEB, WEB_APP_REPLY), (TOOL, TOOL_DOMAIN_REPLY)])
def test_llm_environment_task_certifies(runtime, tmp_path, stub, leaf, answer):
    stub.queue = [reply(json.dumps(answer))]
    llm = LlmBackend(LlmClient(LlmSettings(base_url=stub.url, model="m")), "s")
    spec, _ = llm.make(leaf, Difficulty.HARD, 3, f"{leaf.skill.name}-000")
    task_dir = spec.write(tmp_path / "tasks" / spec.id)
    validator = Validator(runtime, tmp_path / "validation", jobs=1, force=True)
    certificate = certify(
        task_dir,
        validator,
        secrets=spec.secrets,
        outputs=spec.outputs,
        mutations=dict(spec.mutations),
        forbidden_strings=spec.forbidden_strings,
    )
    assert certificate.valid, f"{certificate.outcome}: {certificate.reason}\n{certificate.log_tail}"
    assert certificate.verifier_strength == 1.0
