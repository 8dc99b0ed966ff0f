"""GRPO: group-normalised advantages; the token-level clipped surrogate with an optional k3 KL
penalty to the reference policy, over the policy's own tokens (:class:`ClippedPolicyGradient`)."""

from __future__ import annotations

import math

from factory_train.algorithms.base import ClippedPolicyGradient, register


def group_advantages(rewards: list[float], *, scale: bool = True, eps: float = 1e-4) -> list[float]:
    """r - mean(r), divided by the group's std when ``scale`` (Dr. GRPO drops the division)."""
    mean = sum(rewards) / len(rewards)
    if not scale:
        return [r - mean for r in rewards]
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    return [(r - mean) / (std + eps) for r in rewards]


@register("grpo")
class GRPO(ClippedPolicyGradient):
    """Settings: ``scale_rewards``, ``clip_epsilon``, ``kl_coef``, ``skip_zero_variance``."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.scale = config.scale_rewards

    def advantages(self, rewards: list[float]) -> list[float]:
        return group_advantages(rewards, scale=self.scale)
