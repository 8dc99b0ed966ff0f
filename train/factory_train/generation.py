"""Sampling replies with transformers ``generate`` (CPU or one GPU), returning the sampled
tokens with the log-probability the sampler drew each one with.

The warp (temperature, top-k, top-p) is :class:`factory_train.sampling.SamplingParams`, applied
by a logits processor; during ``generate`` the model's own generation config (a repetition
penalty or a default top-k from its ``generation_config.json``) is swapped for a blank one, so
nothing else can make the sampler's distribution differ from the one the trainer scores.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from factory_train.precision import Precision
from factory_train.sampling import RecordLogprobs, SamplingParams


@dataclass
class Sample:
    ids: list[int]
    """The new tokens, ending with EOS unless ``truncated``."""
    logprobs: list[float] = field(default_factory=list)
    """The sampler's log-prob of each token of ``ids``."""
    truncated: bool = False
    """Cut at the token budget before the policy ended its reply."""


@dataclass(eq=False, repr=False)
class HFSampler:
    """Batched sampling: left-padded prompts in, one :class:`Sample` per prompt out."""

    model: Any
    tokenizer: Any
    _: KW_ONLY
    max_new_tokens: int
    sampling: SamplingParams
    precision: Precision | None = None

    def __call__(self, prompts: list[list[int]], budgets: list[int] | None = None) -> list[Sample]:
        """``budgets[i]``: tokens prompt i may still get (its episode's token limit), capped
        by ``max_new_tokens``."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        limits = [
            min(self.max_new_tokens, b) for b in (budgets or [self.max_new_tokens] * len(prompts))
        ]
        device = next(self.model.parameters()).device
        pad, eos = self.tokenizer.pad_token_id, self.tokenizer.eos_token_id
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            input_ids[row, width - len(prompt) :] = torch.tensor(prompt)
            attention[row, width - len(prompt) :] = 1
        recorder = RecordLogprobs(self.sampling)
        config = GenerationConfig(
            do_sample=True,
            max_new_tokens=max(1, max(limits)),
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            pad_token_id=pad,
            eos_token_id=eos,
        )
        inner = self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model
        was_training, own_config = self.model.training, inner.generation_config
        self.model.eval()
        inner.generation_config = GenerationConfig(pad_token_id=pad, eos_token_id=eos)
        context = self.precision.context(device.type) if self.precision else _null()
        try:
            with torch.no_grad(), context:
                out = self.model.generate(
                    input_ids=input_ids.to(device),
                    attention_mask=attention.to(device),
                    generation_config=config,
                    logits_processor=LogitsProcessorList([recorder]),
                )
        finally:
            inner.generation_config = own_config
            if was_training:
                self.model.train()
        new = out[:, width:]
        logprobs = recorder.finish(new)
        samples = []
        for row, limit in zip(new.tolist(), limits, strict=True):
            ids, lps = [], logprobs[len(samples)]
            for token in row[:limit]:
                ids.append(token)
                if token == eos:
                    break
            ended = bool(ids) and ids[-1] == eos
            samples.append(Sample(ids, lps[: len(ids)], truncated=not ended))
        return samples


def _null():
    import contextlib

    return contextlib.nullcontext()
