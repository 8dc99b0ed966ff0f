#!/bin/bash
# Written by `factory tasks import-tb1` in place of Terminal-Bench's shared run-uv-pytest.sh.
uv run pytest "$TEST_DIR/test_outputs.py" -rA
