#!/usr/bin/env bash
# Set everything up, then run the whole test suite: unit tests and the Docker integration
# tests, the LLM backend's end-to-end test against a real small model and the trainer's CPU
# tests with the real SmolLM2 checkpoint included (none of them may be skipped here:
# FACTORY_REQUIRE_DOCKER=1, FACTORY_REQUIRE_LLM=1), and the HTML report rendered in headless
# Chromium (FACTORY_REQUIRE_BROWSER=1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --full
.venv/bin/ruff check factory tests bench train scripts environments
FACTORY_REQUIRE_DOCKER=1 FACTORY_REQUIRE_LLM=1 FACTORY_REQUIRE_BROWSER=1 exec .venv/bin/pytest -q --durations=30 "$@"
