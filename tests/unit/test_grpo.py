"""The algorithm seam and its two algorithms: advantages and the token-level loss (torch on
CPU, no model, no Docker)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from factory_train.algorithms import ALGORITHMS, make_algorithm  # noqa: E402
from factory_train.algorithms.base import has_signal  # noqa: E402
from factory_train.algorithms.grpo import group_advantages  # noqa: E402
from factory_train.algorithms.rloo import leave_one_out_advantages  # noqa: E402
from factory_train.batch import make_batch  # noqa: E402
from factory_train.config import TrainConfig  # noqa: E402
from factory_train.rollout import TokenTrace  # noqa: E402

from factory.errors import TaskFormatError  # noqa: E402


def grpo(**settings):
    return make_algorithm(TrainConfig(**settings))


def test_group_advantages():
    adv = group_advantages([1.0, 0.0, 0.0, 1.0])
    assert adv == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-3)
    assert sum(group_advantages([1.0, 0.0, 0.0])) == pytest.approx(0.0, abs=1e-9)
    assert group_advantages([1.0, 0.0], scale=False) == [0.5, -0.5]
    assert not has_signal([0.0, 0.0, 0.0]) and has_signal([0.0, 0.5])


def test_rloo_baseline_leaves_the_episode_out():
    assert leave_one_out_advantages([1.0, 0.0, 0.0]) == pytest.approx([1.0, -0.5, -0.5])
    rloo = make_algorithm(TrainConfig(algorithm="rloo"))
    assert rloo.name == "rloo" and rloo.advantages([1.0, 1.0]) == [0.0, 0.0]


def test_algorithms_are_chosen_by_config_and_validated():
    assert set(ALGORITHMS) >= {"grpo", "rloo"}
    assert grpo().name == "grpo"
    with pytest.raises(TaskFormatError, match="unknown algorithm 'ppo'"):
        from factory_train.config import load_train_config

        load_train_config(None, algorithm="ppo")


def test_groups_without_variance_are_skipped_unless_asked():
    assert not grpo().keeps([0.0, 0.0]) and grpo().keeps([0.0, 1.0])
    assert grpo(skip_zero_variance=False).keeps([0.0, 0.0])
    assert not grpo(skip_zero_variance=False).keeps([1.0])  # one healthy episode: no group


def test_loss_only_trains_policy_tokens():
    trace_a, trace_b = TokenTrace(), TokenTrace()
    trace_a.extend([1, 2, 3], policy=False)
    trace_a.extend([4, 5], policy=True, logprobs=[-0.5, -0.7])
    trace_a.extend([6, 7], policy=False)
    trace_b.extend([1, 2], policy=False)
    trace_b.extend([8], policy=True, logprobs=[-0.1])
    batch = make_batch([trace_a, trace_b], [1.0, -1.0], pad_id=0, device="cpu")
    # loss_mask[t] marks token t+1: the policy tokens 4, 5 (positions 3, 4) and 8 (position 2)
    assert batch.loss_mask.tolist() == [[0, 0, 1, 1, 0, 0], [0, 1, 0, 0, 0, 0]]
    assert batch.sampled_logps[0, 2:4].tolist() == pytest.approx([-0.5, -0.7])
    new = torch.zeros_like(batch.loss_mask, requires_grad=True)
    terms = grpo().loss(new, new.detach(), batch.advantages, batch.loss_mask)
    terms.total.backward()
    assert terms.tokens.item() == 3
    grad = new.grad
    assert torch.all(grad[batch.loss_mask == 0] == 0)  # observations never train the model
    assert torch.all(grad[0][batch.loss_mask[0] == 1] < 0)  # positive advantage: raise log-probs
    assert torch.all(grad[1][batch.loss_mask[1] == 1] > 0)


def test_sampled_tokens_need_their_logprobs():
    with pytest.raises(ValueError, match="log-prob"):
        TokenTrace().extend([1, 2], policy=True)


def test_ratio_clipping_stops_the_gradient():
    mask = torch.ones(1, 3)
    old = torch.zeros(1, 3)
    new = torch.tensor([[0.5, 0.0, -0.5]], requires_grad=True)  # ratios e^0.5, 1, e^-0.5
    terms = grpo(clip_epsilon=0.2).loss(new, old, torch.tensor([1.0]), mask)
    terms.total.backward()
    assert new.grad[0, 0] == 0  # ratio > 1 + eps with A > 0: clipped, no gradient
    assert new.grad[0, 1] != 0 and new.grad[0, 2] != 0
    assert terms.stats["clip_frac_sum"] == 2


def test_the_ratio_is_an_importance_weight_against_the_sampler():
    """Off the sampler's distribution, the gradient of a token is scaled by pi/pi_sampler."""
    mask = torch.ones(1, 1)
    new = torch.tensor([[-1.0]], requires_grad=True)
    sampler = torch.tensor([[-1.1]])  # the sampler gave the token a little less probability
    grpo(clip_epsilon=0.5).loss(new, sampler, torch.tensor([1.0]), mask).total.backward()
    assert new.grad[0, 0].item() == pytest.approx(-torch.exp(torch.tensor(0.1)).item(), rel=1e-5)


def test_kl_penalty_is_zero_at_the_reference():
    mask = torch.ones(1, 2)
    logps = torch.tensor([[-1.0, -2.0]])
    algo = grpo(kl_coef=0.1)
    assert algo.loss(logps, logps, torch.tensor([0.0]), mask, logps).stats["kl_sum"] == 0
    assert algo.loss(logps, logps, torch.tensor([0.0]), mask, logps - 1.0).stats["kl_sum"] > 0
