#!/usr/bin/env bash
# The bundled trainer for a few steps on a lent GPU machine (torch, transformers and peft there;
# no Docker, no vLLM, no network): factory_train.smoke plays generated tool tasks in process
# (no container and no shell: model output is never run on the host), warm-starts the policy,
# takes trainer steps, asserts that the update moved the weights, evaluates a held-out family,
# and prints tokens/s and step times. Also runs on CPU (slowly: the warm start dominates).
#
#   scripts/gpu_check.sh --prepare            # here: what the GPU machine lacks, into .gpu-check/
#   scripts/gpu_check.sh [smoke options]      # there (carry .gpu-check): a few minutes on an H200
#
# --prepare writes .gpu-check/ (git-ignored; name it in the device run's carry): SmolLM2-135M's
# config and tokenizer (the weights, 98 MB even quantized, exceed what may travel, so the
# check draws them at random: same architecture, same cost per token) and wheels of the pure
# Python packages factory needs that the GPU image lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--prepare" ]; then
    mkdir -p .gpu-check/model .gpu-check/wheels
    PYTHONPATH="$PWD:$PWD/train" python - <<'PY'
import shutil
from factory_train.models import resolve_model
source = resolve_model("SmolLM2-135M-Instruct")
for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
    if (source / name).is_file():
        shutil.copy(source / name, ".gpu-check/model/")
PY
    # the versions installed here (pydantic pins its pydantic-core exactly)
    pins=$(python -m pip list --format=freeze 2>/dev/null \
        | grep -iE '^(pydantic|pydantic-core|pydantic_core|annotated-types|annotated_types|typing-inspection|typing_inspection|tomli-w|tomli_w|tomlkit)==')
    # shellcheck disable=SC2086
    python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .gpu-check/wheels $pins
    du -sh .gpu-check
    exit 0
fi
if ! python3 -c "import pydantic" 2>/dev/null && [ -d .gpu-check/wheels ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/gpu-check-site .gpu-check/wheels/*.whl
    export PYTHONPATH="/tmp/gpu-check-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD:$PWD/train${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
if [ $# -eq 0 ] && [ -f .gpu-check/model/config.json ]; then
    set -- --model .gpu-check/model --random-weights --out /tmp/gpu-check
fi
exec python3 -m factory_train.smoke "$@"
