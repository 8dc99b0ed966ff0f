#!/bin/bash

# Setup UV and pytest
source $TEST_DIR/setup-uv-pytest.sh

# Install requests for our tests
uv add requests==2.32.4

# Run the tests
bash $TEST_DIR/run-uv-pytest.sh
