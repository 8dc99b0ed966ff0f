#!/usr/bin/env bash
# Set everything up, then run the whole test suite: unit tests and the Docker integration
# tests (which must not be skipped here: FACTORY_REQUIRE_DOCKER=1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/ruff check factory tests bench
FACTORY_REQUIRE_DOCKER=1 exec .venv/bin/pytest -q "$@"
