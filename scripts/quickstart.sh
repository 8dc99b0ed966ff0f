#!/usr/bin/env bash
# The main job on the embedded default: set everything up, then certify the bundled example
# tasks in containers (fail-to-pass) and print the table. Report: validation/validation.json
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/factory validate examples/tasks --jobs 2 --out validation "$@"
