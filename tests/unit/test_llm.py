"""The LLM client against a stub OpenAI-compatible server on loopback, and the LLM backend's
parsing with recorded replies."""

from __future__ import annotations

import json
import time

import pytest
from fixtures.llm_stub import GOOD_TASK, Stub, reply

from factory.generate.llm_backend import LlmBackend, extract_json
from factory.generate.pipeline import GenerationError
from factory.generate.results import QualityOutcome
from factory.generate.taxonomy import Difficulty, parse_taxonomy
from factory.llm import BudgetExceededError, LlmClient, LlmError, LlmSettings
from factory.tasks.config import VerifierEnvironmentMode
from factory.tasks.lint import lint_task


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


def client(stub: Stub, **extra) -> LlmClient:
    return LlmClient(LlmSettings(base_url=stub.url, model="m", max_retries=3, **extra))


MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def sleeps(monkeypatch):
    """The waits the client asks for between tries (recorded, not slept)."""
    waited: list[float] = []
    monkeypatch.setattr(time, "sleep", waited.append)
    return waited


def test_retries_on_429_and_5xx(stub, sleeps):
    stub.queue = [
        (429, {"error": {"message": "slow down"}}),
        (503, {"error": {"message": "busy"}}),
        reply("ok"),
    ]
    result = client(stub).complete(MESSAGES)
    assert result.text == "ok" and len(stub.requests) == 3
    assert len(sleeps) == 2 and all(0 < s <= 8 for s in sleeps)  # backoff with jitter
    assert [h.get("x-stainless-retry-count") for h in stub.request_headers] == ["0", "1", "2"]


def test_retry_after_is_honoured(stub, sleeps):
    stub.queue = [
        (429, {"error": {"message": "rate limited"}}, {"Retry-After": "7"}),
        (503, {"error": {"message": "busy"}}, {"retry-after-ms": "1500"}),
        reply("ok"),
    ]
    assert client(stub).complete(MESSAGES).text == "ok"
    assert sleeps == [7.0, 1.5]


def test_a_wait_longer_than_the_sdk_accepts_is_not_waited_for(stub, sleeps):
    stub.queue = [(429, {"error": {"message": "come back tomorrow"}}, {"Retry-After": "86400"})]
    with pytest.raises(LlmError, match="gave up after 4 tries: 429"):
        client(stub).complete(MESSAGES)
    assert sleeps == [] and len(stub.requests) == 1


def test_gives_up_after_retries(stub, sleeps):
    stub.queue = [(503, {"error": {"message": "down"}})] * 4
    with pytest.raises(LlmError, match="gave up after 4 tries"):
        client(stub).complete(MESSAGES)
    assert len(stub.requests) == 4 and len(sleeps) == 3


def test_a_refusal_is_not_retried(stub, sleeps):
    stub.queue = [(401, {"error": {"message": "bad key"}})]
    with pytest.raises(LlmError, match="401.*bad key"):
        client(stub).complete(MESSAGES)
    assert len(stub.requests) == 1 and sleeps == []


def test_retries_share_the_budget_and_the_cache(stub, sleeps, tmp_path):
    stub.queue = [(429, {"error": {"message": "slow"}}, {"Retry-After": "1"}), reply("a", 30, 20)]
    c = client(stub, cache_dir=tmp_path, max_tokens_budget=60)
    assert c.complete(MESSAGES, seed=3).text == "a" and c.tokens_used == 50
    assert c.complete(MESSAGES, seed=3).cached  # the retried answer was cached once
    c.complete([{"role": "user", "content": "next"}])
    with pytest.raises(BudgetExceededError):
        c.complete([{"role": "user", "content": "more"}])


def test_response_format_falls_back(stub):
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    stub.queue = [
        (500, {"error": {"message": "body.response_format.type: Input should be 'json_object'"}}),
        reply('{"a": "x"}'),
    ]
    c = client(stub)
    assert c.complete(MESSAGES, schema=schema).text == '{"a": "x"}'
    first, second = stub.requests
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object", "schema": schema}
    c.complete([{"role": "user", "content": "again"}], schema=schema)
    assert stub.requests[-1]["response_format"]["type"] == "json_object"  # remembered


def test_long_bounds_stay_off_the_wire_and_are_still_enforced(stub):
    """llama.cpp turns maxLength: 2000 into 2,000 nested optionals and its grammar parser crashed
    the server (SIGSEGV) on LlmTask's snapshot command: such bounds are not sent; pydantic still
    rejects an answer that breaks them."""
    from factory.generate.llm_backend import LlmSnapshot, LlmTask

    schema = LlmTask.model_json_schema()
    sent = json.dumps(schema)
    assert '"maxLength": 2000' in sent  # the model's bound is there ...
    stub.queue = [reply('{"a": "x"}')]
    client(stub).complete(MESSAGES, schema=schema)
    wire = json.dumps(stub.requests[0]["response_format"])
    assert '"maxLength": 2000' not in wire  # ... and not on the wire
    assert '"minLength": 20' in wire  # short bounds that help a small model stay
    assert '"maxItems"' in wire  # verifier_reads/snapshots item caps are small: kept
    with pytest.raises(ValueError, match="at most 2000"):
        LlmSnapshot(name="s", command="x" * 2001)


def test_cache_makes_reruns_free(stub, tmp_path):
    stub.queue = [reply("first")]
    assert client(stub, cache_dir=tmp_path).complete(MESSAGES, seed=1).text == "first"
    again = client(stub, cache_dir=tmp_path).complete(MESSAGES, seed=1)
    assert again.text == "first" and again.cached and len(stub.requests) == 1


def test_token_budget(stub):
    stub.queue = [reply("a", 60, 50), reply("b")]
    c = client(stub, max_tokens_budget=100)
    c.complete(MESSAGES)
    with pytest.raises(BudgetExceededError, match="token budget"):
        c.complete([{"role": "user", "content": "more"}])


def test_cost_is_estimated(stub):
    stub.queue = [reply("a", 1000, 2000)]
    result = client(stub, price_prompt_per_1k=0.5, price_completion_per_1k=1.0).complete(MESSAGES)
    assert result.cost_usd == pytest.approx(2.5)


# --- the backend with recorded replies ---------------------------------------------------

TAXONOMY = parse_taxonomy(
    {
        "suite": "s",
        "domains": [
            {
                "name": "terminal",
                "categories": [
                    {"name": "text", "skills": [{"name": "count", "generator": "llm"}]},
                    {
                        "name": "sec",
                        "skills": [
                            {"name": "flag", "generator": "llm", "params": {"mode": "hidden-flag"}}
                        ],
                    },
                ],
            }
        ],
    }
)
COUNT, FLAG = list(TAXONOMY.leaves())


def backend(stub: Stub, parse_repairs: int = 0) -> LlmBackend:
    return LlmBackend(client(stub), "s", parse_repairs=parse_repairs)


def test_free_form_reply_becomes_a_task(stub):
    stub.queue = [reply("Here it is:\n```json\n" + json.dumps(GOOD_TASK) + "\n```")]
    spec, usage = backend(stub).make(COUNT, Difficulty.EASY, 7, "text-count-000")
    assert spec.files["environment/in.txt"] == b"a\nb\nc\n"
    assert spec.files["solution/solve.sh"].startswith(b"#!/bin/bash\n")
    assert b"pytest" in spec.files["tests/test.sh"]
    assert spec.outputs == ("/app/count.txt",)
    provenance = spec.config.provenance
    assert (provenance.generator, provenance.prompt_version, provenance.model) == (
        "llm",
        "task_v1",
        "m",
    )
    assert spec.config.environment.network_enabled is False
    # hermetic: pytest (pinned) and the tools the prompt promises are installed at build time,
    # right after FROM; test.sh fetches nothing
    dockerfile = spec.files["environment/Dockerfile"].decode().splitlines()
    assert dockerfile[0] == "FROM python:3.12-slim-bookworm"
    assert "pip install" in dockerfile[1] and "pytest==8.4.2" in dockerfile[1]
    assert "procps" in dockerfile[2] and dockerfile[-1] == "COPY in.txt /data/in.txt"
    assert b"pip install" not in spec.files["tests/test.sh"]
    assert usage.calls == 1 and usage.prompt_tokens == 10
    prompt = stub.requests[0]["messages"][1]["content"]
    assert "easy" in prompt and "count" in prompt


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("I cannot do that.", "no JSON object"),
        (json.dumps({**GOOD_TASK, "dockerfile": "RUN echo hi"}), "must start with FROM"),
        (json.dumps({**GOOD_TASK, "test_py": "assert True  # no test function"}), "no pytest test"),
        (
            json.dumps(
                {**GOOD_TASK, "environment_files": [{"path": "../../etc/x", "content": ""}]}
            ),
            "must be relative",
        ),
        (json.dumps({"instruction": "short"}), "instruction"),
    ],
)
def test_bad_replies_are_rejected_with_the_reason(stub, text, needle):
    stub.queue = [reply(text)]
    with pytest.raises(GenerationError) as info:
        backend(stub).make(COUNT, Difficulty.MEDIUM, 1, "text-count-001")
    assert info.value.outcome is QualityOutcome.UNPARSEABLE
    assert needle in str(info.value)
    assert info.value.usage.calls == 1


def test_unparseable_reply_goes_back_with_the_error(stub):
    stub.queue = [reply("Sure, here is a task!"), reply(json.dumps(GOOD_TASK))]
    spec, usage = backend(stub, parse_repairs=1).make(COUNT, Difficulty.EASY, 7, "text-count-002")
    assert spec.outputs == ("/app/count.txt",) and usage.calls == 2
    retry = stub.requests[1]["messages"]
    assert retry[2] == {"role": "assistant", "content": "Sure, here is a task!"}
    assert "no JSON object" in retry[3]["content"]
    stub.queue = [reply("nope"), reply("still nope")]
    with pytest.raises(GenerationError, match="after 2 tries"):
        backend(stub, parse_repairs=1).make(COUNT, Difficulty.EASY, 8, "text-count-003")


def test_hidden_flag_mode_fills_only_the_open_parts(stub, tmp_path):
    stub.queue = [
        reply(
            json.dumps(
                {
                    "technique": "base64 in a config file",
                    "hide_sh": 'mkdir -p /etc/app && printf %s "$FLAG" | base64 > /etc/app/token',
                    "find_sh": "base64 -d /etc/app/token > /app/flag.txt; echo >> /app/flag.txt",
                }
            )
        )
    ]
    spec, _ = backend(stub).make(FLAG, Difficulty.HARD, 3, "sec-flag-000")
    flag = spec.secrets[0]
    assert flag.startswith("FLAG{") and spec.forbidden_strings == (flag,)
    assert flag.encode() in spec.files["tests/test_outputs.py"]
    assert flag.encode() not in spec.files["instruction.md"]
    assert b"base64" in spec.files["environment/hide.sh"]
    assert spec.config.provenance.prompt_version == "hidden_flag_v1"
    assert flag not in json.dumps(stub.requests[0])  # the model never sees the flag
    # Harbor's separate verifier: the tests get the flag file alone, and the linter is quiet
    assert spec.config.verifier.mode is VerifierEnvironmentMode.SEPARATE
    assert spec.config.artifacts == ["/app/flag.txt"]
    root = spec.write(tmp_path / "task")
    assert [f.line() for f in lint_task(root)] == []


def test_repair_sends_the_verdict_back(stub):
    from factory.generate.certify import Certificate

    stub.queue = [reply(json.dumps(GOOD_TASK)), reply(json.dumps(GOOD_TASK))]
    b = backend(stub)
    spec, _ = b.make(COUNT, Difficulty.EASY, 7, "text-count-000")
    cert = Certificate(
        "passes_without_solution",
        "the tests score 1 on the untouched environment",
        log_tail="1 passed",
    )
    repaired, _ = b.repair(COUNT, spec, cert)
    messages = stub.requests[1]["messages"]
    assert messages[2]["role"] == "assistant"
    assert (
        "passes_without_solution" in messages[3]["content"] and "1 passed" in messages[3]["content"]
    )
    assert repaired.config.provenance.prompt_version == "task_v1+repair_v1"


def test_extract_json_variants():
    assert extract_json('{"a": 1} trailing') == {"a": 1}
    assert extract_json('prose {"a": {"b": 2}} more {"c": 3}') == {"a": {"b": 2}}
    with pytest.raises(ValueError):
        extract_json("[1, 2]")


def test_verifier_setup_goes_into_the_final_stage():
    from factory.generate.llm_backend import with_verifier_setup

    text = with_verifier_setup(
        "FROM python:3.12 AS build\nRUN make\nFROM python:3.12-slim\nCOPY x /x\n"
    )
    lines = text.splitlines()
    assert lines[:3] == ["FROM python:3.12 AS build", "RUN make", "FROM python:3.12-slim"]
    assert "pytest==8.4.2" in lines[3] and lines[-1] == "COPY x /x"
