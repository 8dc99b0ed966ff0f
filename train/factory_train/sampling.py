"""One definition of the sampling distribution, shared by the sampler and the scorer.

The policy samples from ``softmax(warp(logits))``: logits divided by the temperature, then
cut to the ``top_k`` most likely tokens, then to the smallest nucleus whose probability
reaches ``top_p`` (the order transformers applies them). The trainer scores sampled tokens
under the same warp, so the policy-gradient ratio compares like with like; the sampler records
the log-probability of each token it draws (:class:`RecordLogprobs`), so the trainer needs no
separate pass to learn what the sampler's probabilities were.
"""

from __future__ import annotations

from dataclasses import dataclass

LOGP_FLOOR = -1e4
"""Log-probs are clamped here: a sampled token that the scorer's (numerically slightly
different) nucleus leaves out gets a tiny, finite probability instead of -inf (no NaN ratio)."""


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    """0: no top-k cut."""

    def warp(self, logits):
        """Scores whose softmax is the sampling distribution (float32; cut tokens at -inf)."""
        import torch

        scores = logits.float()
        if self.temperature != 1.0:
            scores = scores / self.temperature
        if self.top_k and self.top_k < scores.shape[-1]:
            kth = torch.topk(scores, self.top_k, dim=-1).values[..., -1:]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        if self.top_p < 1.0:
            ordered, order = torch.sort(scores, dim=-1, descending=False)
            cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
            cut = cumulative <= (1 - self.top_p)
            cut[..., -1:] = False  # the most likely token always stays
            scores = scores.masked_fill(cut.scatter(-1, order, cut), float("-inf"))
        return scores

    def logprobs(self, logits, tokens):
        """log p(token) under the sampling distribution, for ``tokens`` of shape logits[..., 0]."""
        import torch

        logps = torch.log_softmax(self.warp(logits), dim=-1)
        picked = logps.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
        return picked.clamp(min=LOGP_FLOOR)


class RecordLogprobs:
    """A transformers ``LogitsProcessor`` that applies :meth:`SamplingParams.warp` (generation
    then adds no warper of its own) and records the log-probability of every sampled token.

    At each step it sees the token drawn at the previous step (the last column of
    ``input_ids``) and reads its log-prob from the distribution it kept; :meth:`finish` reads
    the last step's tokens. Memory: one (batch, vocabulary) row of log-probs at a time.
    """

    def __init__(self, params: SamplingParams) -> None:
        self.params = params
        self.steps: list = []
        self._last = None

    def __call__(self, input_ids, scores):
        if self._last is not None:
            self._take(input_ids[:, -1])
        warped = self.params.warp(scores)
        import torch

        self._last = torch.log_softmax(warped, dim=-1)
        return warped

    def _take(self, tokens) -> None:
        picked = self._last.gather(-1, tokens.unsqueeze(-1).to(self._last.device)).squeeze(-1)
        self.steps.append(picked.clamp(min=LOGP_FLOOR).float())  # on the device: no sync per token
        self._last = None

    def finish(self, sequences) -> list[list[float]]:
        """Per row, the log-prob of each generated token (rows padded after they ended hold
        log-probs of the padding: callers cut each row where its reply ends)."""
        if self._last is not None:
            self._take(sequences[:, -1])
        if not self.steps:
            return [[] for _ in range(sequences.shape[0])]
        import torch

        return torch.stack(self.steps, dim=1).cpu().tolist()
