"""A tool-calling evaluation end to end: SmolLM2-135M behind llama-cpp-python's server with
the ``chatml-function-calling`` chat format (grammar-constrained calls for chatml models) is
offered bash and a tool task's MCP tools, its structured calls run in the task's container
(the MCP ones through the task's tool server), the results go back as ``role: tool`` messages,
and the verifier scores the episode. The model is far too small to solve the task; the point
is that every link of the chain works."""

from __future__ import annotations

import json

import pytest
from factory.toolenv.core import load_domain
from fixtures.llama_server import llama_server

from factory.agent.actions import ActionFormat
from factory.agent.evaluation import evaluate_endpoint
from factory.agent.harness import HarnessConfig
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial
from factory.llm import LlmClient, LlmSettings

pytestmark = [pytest.mark.docker, pytest.mark.llm]


@pytest.fixture(scope="module")
def tool_calling_server():
    with llama_server(chat_format="chatml-function-calling") as url:
        yield url


def test_a_tool_calling_eval_runs_against_llama_cpp(runtime, tmp_path, tool_calling_server):
    render_trial("tool-calendar", Difficulty.EASY, 2, tmp_path / "suite" / "tasks")
    client = LlmClient(
        LlmSettings(base_url=tool_calling_server, model="smollm2", max_retries=1, concurrency=1)
    )
    harness = HarnessConfig(max_turns=2, command_timeout_sec=20, action_format=ActionFormat.TOOLS)
    out = tmp_path / "eval"
    summary = evaluate_endpoint(
        tmp_path / "suite",
        client,
        harness,
        runtime=runtime,
        split="all",
        k=1,
        out=out,
        jobs=1,
        max_tokens=96,
        say=lambda _m: None,
    )
    assert summary["episodes"] == 1 and summary["infra_failures"] == 0, summary
    assert json.loads((out / "eval.json").read_text())["pass_at_1"] in (0.0, 1.0)
    record = json.loads((out / "transcript.jsonl").read_text().splitlines()[0])
    assert record["infra_error"] is None and record["reward"] in (0.0, 1.0)
    messages = record["messages"]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert calls, "the model was offered tools and made no call"
    offered = {"bash", *load_domain("calendar").tools}
    assert all(c["function"]["name"] in offered for c in calls)
    answers = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == [c["id"] for c in calls]
    assert all(m["content"] for m in answers)
