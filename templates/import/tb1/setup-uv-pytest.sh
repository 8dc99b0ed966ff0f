#!/bin/bash
# Written by `factory tasks import-tb1` in place of Terminal-Bench's shared setup-uv-pytest.sh,
# which installs curl and uv from the internet at test time. Here uv (the real one) and what
# `uv add` needs were fetched when the image was built; the verifier runs uv offline.
source "$HOME/.local/bin/env" 2>/dev/null || true
if [ "$PWD" = "/" ]; then
    echo "Error: No working directory set. Please set a WORKDIR in your Dockerfile before running this script."
    exit 1
fi
uv init 2>/dev/null || true
uv add pytest==8.4.1
