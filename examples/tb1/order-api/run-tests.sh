#!/bin/bash

# Setup UV and pytest
source $TEST_DIR/setup-uv-pytest.sh

# Run the tests
bash $TEST_DIR/run-uv-pytest.sh
