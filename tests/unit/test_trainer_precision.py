"""Full fine-tuning keeps fp32 master weights: one AdamW step moves almost every element."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from factory_train.config import DType  # noqa: E402
from factory_train.precision import choose_precision  # noqa: E402
from fixtures.tiny_policy import tiny_llama  # noqa: E402


def one_step_changed_fraction(dtype) -> float:
    model = tiny_llama(vocab_size=256).to(dtype)
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(0, 256, (2, 16))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    changed = sum(
        int((a != b.detach()).sum()) for a, b in zip(before, model.parameters(), strict=True)
    )
    return changed / sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("setting", [DType.AUTO, DType.BF16, DType.FP32])
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_trainable_weights_are_fp32_everywhere(setting, device):
    assert choose_precision(setting, device).trainable == torch.float32


def test_bf16_stays_for_forward_passes_and_frozen_weights_on_gpus():
    gpu = choose_precision(DType.AUTO, "cuda")
    assert gpu.autocast == torch.bfloat16 and gpu.frozen == torch.bfloat16
    assert choose_precision(DType.FP32, "cuda").autocast is None


def test_one_step_moves_the_weights_it_trains():
    trained = one_step_changed_fraction(choose_precision(DType.AUTO, "cuda").trainable)
    assert trained > 0.9
    # what full fine-tuning did before: bf16 weights stepped by AdamW barely move
    assert one_step_changed_fraction(torch.bfloat16) < 0.2
