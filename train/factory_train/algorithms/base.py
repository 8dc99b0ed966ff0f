"""The algorithm seam: the trainer collects groups of episodes and asks an :class:`Algorithm`
which groups teach something, what each episode's advantage is, and what the loss is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from factory.errors import FactoryError

if TYPE_CHECKING:
    from factory_train.config import TrainConfig


@dataclass
class LossTerms:
    total: object
    """The loss summed over the policy's tokens (a scalar tensor): the trainer divides it by
    the token count of the whole batch, so micro-batches add up to a token-level mean."""
    tokens: object
    """Policy tokens in this micro-batch (a scalar tensor)."""
    stats: dict[str, float] = field(default_factory=dict)
    """Sums over tokens, logged per token: ``clip_frac_sum``, ``kl_sum``."""


class Algorithm(Protocol):
    name: str

    def keeps(self, rewards: list[float]) -> bool:
        """Whether a group with these (healthy episodes') rewards enters the update."""
        ...

    def advantages(self, rewards: list[float]) -> list[float]:
        """One advantage per episode of a group, in order."""
        ...

    def loss(self, new_logps, old_logps, advantages, loss_mask, ref_logps=None) -> LossTerms:
        """Per-token log-probs (B, T-1) of the policy being trained, of the policy that
        sampled (the behaviour policy), and of the reference model (None without a KL term);
        per-sequence advantages (B,); the mask of the policy's own tokens (B, T-1)."""
        ...


ALGORITHMS: dict[str, type] = {}
"""Name -> class; each class is built as ``cls(config)``."""


def register(name: str):
    def wrap(cls: type) -> type:
        cls.name = name
        ALGORITHMS[name] = cls
        return cls

    return wrap


def make_algorithm(config: TrainConfig) -> Algorithm:
    try:
        cls = ALGORITHMS[config.algorithm]
    except KeyError:
        raise FactoryError(
            f"unknown algorithm {config.algorithm!r}; known: {', '.join(sorted(ALGORITHMS))}"
        ) from None
    return cls(config)


def has_signal(rewards: list[float]) -> bool:
    """Dynamic sampling: a group whose rewards are all equal teaches nothing."""
    return len(rewards) >= 2 and max(rewards) - min(rewards) > 1e-9


def clipped_surrogate(new_logps, old_logps, advantages, loss_mask, *, clip_epsilon: float):
    """PPO's clipped objective per token, negated (a loss), and the clipped-token indicator.

    ``exp(new - old)`` is the importance weight of the trained policy against the policy that
    sampled the tokens: at the first pass it only corrects the numerical gap between sampler
    and trainer; later passes (``ppo_epochs``) are off-policy and the clip bounds them."""
    import torch

    ratio = torch.exp(new_logps - old_logps)
    adv = advantages.unsqueeze(-1)
    clipped = torch.clamp(ratio, 1 - clip_epsilon, 1 + clip_epsilon) * adv
    per_token = -torch.minimum(ratio * adv, clipped)
    with torch.no_grad():
        clip_sum = float((((ratio - 1).abs() > clip_epsilon).float() * loss_mask).sum())
    return per_token, clip_sum


def k3_kl(new_logps, ref_logps):
    """The k3 estimator of KL(policy || reference) per token (>= 0, unbiased)."""
    import torch

    delta = ref_logps - new_logps
    return torch.exp(delta) - delta - 1


class ClippedPolicyGradient:
    """What GRPO-style algorithms share: groups need reward variance (``skip_zero_variance``)
    and the loss is the clipped token-level surrogate plus ``kl_coef`` x k3 KL. A subclass
    only says how rewards become advantages."""

    name = ""

    def __init__(self, config) -> None:
        self.clip_epsilon = config.clip_epsilon
        self.kl_coef = config.kl_coef
        self.skip_zero_variance = config.skip_zero_variance

    def keeps(self, rewards: list[float]) -> bool:
        if len(rewards) < 2:
            return False
        return has_signal(rewards) or not self.skip_zero_variance

    def advantages(self, rewards: list[float]) -> list[float]:
        raise NotImplementedError

    def loss(self, new_logps, old_logps, advantages, loss_mask, ref_logps=None) -> LossTerms:
        import torch

        per_token, clip_sum = clipped_surrogate(
            new_logps, old_logps, advantages, loss_mask, clip_epsilon=self.clip_epsilon
        )
        kl = torch.zeros_like(per_token)
        if ref_logps is not None and self.kl_coef > 0:
            kl = k3_kl(new_logps, ref_logps)
            per_token = per_token + self.kl_coef * kl
        with torch.no_grad():
            kl_sum = float((kl * loss_mask).sum())
        return LossTerms(
            total=(per_token * loss_mask).sum(),
            tokens=loss_mask.sum(),
            stats={"clip_frac_sum": clip_sum, "kl_sum": kl_sum},
        )
