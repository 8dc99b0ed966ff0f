#!/usr/bin/env bash
# The main job on the embedded default: set everything up, then generate the quickstart suite
# from examples/taxonomy.yaml with the procedural backend (no model needed). Every candidate is
# certified in containers; the verified tasks land in suites/quickstart/tasks, the coverage
# table is printed, and a rerun resumes where a killed run stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/factory generate examples/taxonomy.yaml --out suites/quickstart --jobs 2 "$@"
