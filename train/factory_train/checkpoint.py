"""Checkpoints of a run: ``RUN/checkpoints/step-NNNNN/``.

* ``model/`` — a complete model folder (config.json, safetensors, tokenizer) that `factory
  eval`, `factory calibrate` and any transformers code load as is. For a LoRA run it holds
  the base weights with the adapters merged in (computed on the side: the training model is
  not touched).
* ``adapter/`` — LoRA runs only: the adapters alone (peft format), what a resume continues.
* ``optimizer.pt``, ``state.json`` — optimizer state, step, RNG states, config.

Writes go to ``step-N.partial`` and are renamed when complete; the last two are kept.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

KEEP_CHECKPOINTS = 2


def checkpoint_dir(out: Path, step: int) -> Path:
    return out / "checkpoints" / f"step-{step:05d}"


def latest_checkpoint(out: Path) -> Path | None:
    folder = out / "checkpoints"
    found = sorted(folder.glob("step-?????")) if folder.is_dir() else []
    return found[-1] if found else None


def merged_state_dict(peft_model) -> dict:
    """The base model's state dict with every LoRA adapter's delta added to its weight, under
    the base model's own key names (no ``base_layer``, no ``lora_`` entries)."""
    from peft.tuners.lora import LoraLayer

    base = peft_model.get_base_model()
    deltas = {}
    for name, module in base.named_modules():
        if isinstance(module, LoraLayer):
            for adapter in module.active_adapters:
                if adapter in module.lora_A:
                    delta = module.get_delta_weight(adapter).detach()
                    deltas[name] = deltas[name] + delta if name in deltas else delta
    state = {}
    for key, value in base.state_dict().items():
        if "lora_" in key:
            continue
        state[key.replace(".base_layer.", ".")] = value.detach()
    for name, delta in deltas.items():
        key = f"{name}.weight"
        state[key] = (state[key].float() + delta.float()).to(state[key].dtype)
    return state


def save_checkpoint(
    out: Path, step: int, model, tokenizer, optimizer, config, *, lora: bool
) -> Path:
    import torch

    target = checkpoint_dir(out, step)
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    if lora:
        model.save_pretrained(str(staging / "adapter"), safe_serialization=True)
        base = model.get_base_model()
        base.save_pretrained(
            str(staging / "model"), state_dict=merged_state_dict(model), safe_serialization=True
        )
    else:
        model.save_pretrained(str(staging / "model"), safe_serialization=True)
    tokenizer.save_pretrained(str(staging / "model"))
    torch.save(optimizer.state_dict(), staging / "optimizer.pt")
    (staging / "state.json").write_text(
        json.dumps(
            {
                "step": step,
                "python_rng": _list_state(random.getstate()),
                "torch_rng": torch.get_rng_state().tolist(),
                "config": config.model_dump(mode="json"),
            }
        )
    )
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    for old in sorted((out / "checkpoints").glob("step-?????"))[:-KEEP_CHECKPOINTS]:
        shutil.rmtree(old, ignore_errors=True)
    return target


def restore_state(checkpoint: Path, optimizer, device) -> int:
    """Load the optimizer and RNG states; returns the checkpoint's step."""
    import torch

    state = json.loads((checkpoint / "state.json").read_text())
    optimizer_file = checkpoint / "optimizer.pt"
    if optimizer_file.is_file():
        optimizer.load_state_dict(torch.load(optimizer_file, map_location=device))
    random.setstate(_tuple_state(state["python_rng"]))
    torch.set_rng_state(torch.tensor(state["torch_rng"], dtype=torch.uint8))
    return int(state["step"])


def _list_state(state):
    return [list(s) if isinstance(s, tuple) else s for s in state]


def _tuple_state(state):
    return tuple(tuple(s) if isinstance(s, list) else s for s in state)
