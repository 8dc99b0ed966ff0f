"""Which dtype each part of the model lives in.

Trainable weights and the optimizer's state are always fp32 ("master weights"): an AdamW step
of a bf16 weight rounds most updates away (at lr 1e-5 one step changed 1.7% of a bf16 model's
weight elements against 99.5% in fp32), so full fine-tuning in bf16 barely moves the model.
The forward passes run in bf16 under autocast where it helps (CPU and GPU alike); frozen
weights (a LoRA base, the KL reference model) are stored in bf16 on GPUs to halve their memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from factory_train.config import DType


@dataclass(frozen=True)
class Precision:
    trainable: object
    """torch dtype of weights the optimizer steps (always float32)."""
    frozen: object
    """torch dtype of weights that never change."""
    autocast: object | None
    """torch dtype of forward passes under autocast (None: no autocast)."""

    def context(self, device_type: str):
        import contextlib

        import torch

        if self.autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device_type, dtype=self.autocast)


def choose_precision(setting: DType | str, device_type: str) -> Precision:
    import torch

    setting = DType(setting)
    if setting is DType.FP32:
        return Precision(torch.float32, torch.float32, None)
    if device_type == "cuda":
        if not torch.cuda.is_available() or torch.cuda.is_bf16_supported():
            return Precision(torch.float32, torch.bfloat16, torch.bfloat16)
        return Precision(torch.float32, torch.float32, None)  # pre-Ampere: no bf16
    return Precision(torch.float32, torch.float32, torch.bfloat16)


def pick_device(setting: DType | str = DType.AUTO):
    """(device, precision) for this machine: the GPU when there is one."""
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return device, choose_precision(setting, device.type)
