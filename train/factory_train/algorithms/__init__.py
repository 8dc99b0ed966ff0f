"""Trainer algorithms behind one seam (:class:`Algorithm`): how a group's rewards become
advantages, and the loss over the sampled tokens. ``TrainConfig.algorithm`` picks one by name.

* ``grpo`` (:mod:`.grpo`): group-normalised advantages, token-level clipped surrogate, k3 KL.
* ``rloo`` (:mod:`.rloo`): leave-one-out baseline, the same clipped surrogate.

Adding one: a module here with a class that implements :class:`Algorithm`, registered with
``@register("name")`` and imported below (train/README.md has the recipe).
"""

from factory_train.algorithms import grpo, rloo  # noqa: E402,F401 - fill the registry
from factory_train.algorithms.base import (
    ALGORITHMS,
    Algorithm,
    ClippedPolicyGradient,
    LossTerms,
    make_algorithm,
    register,
)

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "ClippedPolicyGradient",
    "LossTerms",
    "make_algorithm",
    "register",
]
