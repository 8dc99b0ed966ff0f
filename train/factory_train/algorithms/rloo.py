"""RLOO (REINFORCE leave-one-out): each episode's baseline is the mean reward of the *other*
episodes of its group, an unbiased baseline without a learned value; the loss is GRPO's
clipped token-level surrogate (+ KL) (:class:`ClippedPolicyGradient`)."""

from __future__ import annotations

from factory_train.algorithms.base import ClippedPolicyGradient, register


def leave_one_out_advantages(rewards: list[float]) -> list[float]:
    """r_i - mean(r_j for j != i)."""
    total, n = sum(rewards), len(rewards)
    return [r - (total - r) / (n - 1) for r in rewards]


@register("rloo")
class RLOO(ClippedPolicyGradient):
    """Settings: ``clip_epsilon``, ``kl_coef``, ``skip_zero_variance``."""

    def advantages(self, rewards: list[float]) -> list[float]:
        return leave_one_out_advantages(rewards)
