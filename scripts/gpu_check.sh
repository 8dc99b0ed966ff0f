#!/usr/bin/env bash
# One short check for a lent GPU machine (torch, transformers and peft there; no vLLM, no
# Docker, nothing downloadable): a few GRPO steps of the default model on the GPU with an
# in-process environment, printing tokens/s and step times. Carry the converted model
# (~/.cache/factory/models/...) into the repo, e.g. as .model/, and pass --model .model.
set -euo pipefail
cd "$(dirname "$0")/.."
pip install -q gguf >/dev/null 2>&1 || true
exec python scripts/gpu_check.py "$@"
