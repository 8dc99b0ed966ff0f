"""GRPO math and token bookkeeping (torch on CPU, no model, no Docker)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from factory_train.grpo import group_advantages, grpo_loss, has_signal, make_batch  # noqa: E402
from factory_train.rollout import TokenTrace  # noqa: E402


def test_group_advantages():
    adv = group_advantages([1.0, 0.0, 0.0, 1.0])
    assert adv == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-3)
    assert sum(group_advantages([1.0, 0.0, 0.0])) == pytest.approx(0.0, abs=1e-9)
    assert group_advantages([1.0, 0.0], scale=False) == [0.5, -0.5]
    assert not has_signal([0.0, 0.0, 0.0]) and has_signal([0.0, 0.5])


def test_loss_only_trains_policy_tokens():
    trace_a, trace_b = TokenTrace(), TokenTrace()
    trace_a.extend([1, 2, 3], policy=False)
    trace_a.extend([4, 5], policy=True)
    trace_a.extend([6, 7], policy=False)
    trace_b.extend([1, 2], policy=False)
    trace_b.extend([8], policy=True)
    batch = make_batch([trace_a, trace_b], [1.0, -1.0], pad_id=0, device="cpu")
    # loss_mask[t] marks token t+1: the policy tokens 4, 5 (positions 3, 4) and 8 (position 2)
    assert batch.loss_mask.tolist() == [[0, 0, 1, 1, 0, 0], [0, 1, 0, 0, 0, 0]]
    new = torch.zeros_like(batch.loss_mask, requires_grad=True)
    total, tokens, _ = grpo_loss(
        new, new.detach(), batch.advantages, batch.loss_mask, clip_epsilon=0.2
    )
    total.backward()
    assert tokens.item() == 3
    grad = new.grad
    assert torch.all(grad[batch.loss_mask == 0] == 0)  # observations never train the model
    assert torch.all(grad[0][batch.loss_mask[0] == 1] < 0)  # positive advantage: raise log-probs
    assert torch.all(grad[1][batch.loss_mask[1] == 1] > 0)


def test_ratio_clipping_stops_the_gradient():
    mask = torch.ones(1, 3)
    old = torch.zeros(1, 3)
    new = torch.tensor([[0.5, 0.0, -0.5]], requires_grad=True)  # ratios e^0.5, 1, e^-0.5
    total, _, stats = grpo_loss(new, old, torch.tensor([1.0]), mask, clip_epsilon=0.2)
    total.backward()
    assert new.grad[0, 0] == 0  # ratio > 1 + eps with A > 0: clipped, no gradient
    assert new.grad[0, 1] != 0 and new.grad[0, 2] != 0
    assert stats["clip_frac_sum"] == 2


def test_kl_penalty_is_zero_at_the_reference():
    mask = torch.ones(1, 2)
    logps = torch.tensor([[-1.0, -2.0]])
    _, _, stats = grpo_loss(
        logps, logps, torch.tensor([0.0]), mask, clip_epsilon=0.2, ref_logps=logps, kl_coef=0.1
    )
    assert stats["kl_sum"] == pytest.approx(0.0)
    _, _, stats = grpo_loss(
        logps,
        logps,
        torch.tensor([0.0]),
        mask,
        clip_epsilon=0.2,
        ref_logps=logps - 1.0,
        kl_coef=0.1,
    )
    assert stats["kl_sum"] > 0
