"""A tool-domain episode with an LLM customer end to end: SmolLM2-135M behind llama-cpp-python's
OpenAI-compatible server plays the customer of an airline task (its hidden goal and facts in
its prompt), a scripted agent talks to it with `say`, does the task's work in process and tells
the customer their new reservation code, and the verifier's rule (final state, policy, what the
customer was told) scores the episode. The model's replies will be poor; the test checks that
they came from the server, reached the agent as observations and the transcript, and that the
episode was scored — not what the model said. No Docker: the tools run in process."""

from __future__ import annotations

import json

import pytest
from fixtures.airline import airline_entry
from fixtures.llama_server import llama_server

from factory.agent.backends import InProcessEpisodes
from factory.agent.harness import HarnessConfig
from factory.agent.tool_episode import ToolEpisode
from factory.agent.user_sim import LlmUser, UserKind
from factory.llm import LlmClient, LlmSettings
from factory.tasks.user_profile import load_user_profile

pytestmark = [pytest.mark.llm]

FENCE = "```"


@pytest.fixture(scope="module")
def llm_url():
    with llama_server() as url:
        yield url


def episode_with(entry, client: LlmClient, log_dir) -> ToolEpisode:
    backend = InProcessEpisodes()
    backend.prepare([entry])
    profile = load_user_profile(entry.task.paths.tests_dir)
    user = LlmUser(profile, client, title="airline", max_tokens=48, seed=3)
    spec = backend.specs[entry.task.id]
    return ToolEpisode(entry.task, HarnessConfig(max_turns=6), log_dir, spec, user)


def test_an_airline_episode_with_an_llm_customer(tmp_path, llm_url):
    entry = airline_entry(tmp_path)
    profile = load_user_profile(entry.task.paths.tests_dir)
    (fact,) = profile.communicate
    solve = (entry.task.root / "solution" / "solve.sh").read_text().splitlines()
    tools = "\n".join(line for line in solve if line.startswith("tool "))
    client = LlmClient(LlmSettings(base_url=llm_url, model="smollm2", max_retries=1, concurrency=1))

    episode = episode_with(entry, client, tmp_path / "log")
    episode.start()
    seen = [
        episode.observe(f"{FENCE}bash\nsay Hello, how can I help you today?\n{FENCE}"),
        episode.observe(f"{FENCE}bash\nsay Could you tell me your user id?\n{FENCE}"),
        episode.observe(
            f"{FENCE}bash\n{tools}\nsay All done: your new reservation code is "
            f"{fact.any_of[0]}.\n{FENCE}"
        ),
    ]
    episode.observe("DONE")
    result = episode.finish()

    # the customer's replies came from the server (tokens generated there), one per `say`
    replies = [u for u in result.conversation if u["role"] == "user"][1:]
    assert len(replies) == 3 and all(u["source"] == UserKind.LLM.value for u in replies)
    assert sum(u.get("completion_tokens", 0) for u in replies) > 0
    assert client.tokens_used > 0
    # and reached the agent as its observations
    for observation, reply in zip(seen, replies, strict=True):
        words = reply["content"].replace("###STOP###", "").strip() or "(no reply)"
        assert f"customer: {words}" in observation
    # the episode was scored by the verifier's rule, the communicate check included
    assert result.infra_error is None
    assert result.reward == 1.0, result.checks
    assert result.checks == {"communicate": "the customer was told every required fact"}
    record = json.loads((tmp_path / "log" / "transcript.jsonl").read_text().splitlines()[0])
    assert record["conversation"] == result.conversation and record["reward"] == 1.0

    # the same work without telling the customer scores 0
    quiet = episode_with(entry, client, None)
    quiet.start()
    quiet.observe(f"{FENCE}bash\nsay Hello, how can I help you today?\n{FENCE}")
    quiet.observe(f"{FENCE}bash\n{tools}\nsay All done, goodbye.\n{FENCE}")
    quiet.observe("DONE")
    missed = quiet.finish()
    assert missed.reward == 0.0 and "new reservation code" in missed.checks["communicate"]
