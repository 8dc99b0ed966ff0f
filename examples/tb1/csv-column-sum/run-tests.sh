#!/bin/bash
set -e
apt-get update && apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source $HOME/.local/bin/env
uv venv .tbenv
source .tbenv/bin/activate
uv pip install pytest==8.4.1 pandas==2.2.3
uv run pytest $TEST_DIR/test_outputs.py -rA
