#!/bin/bash
# A verifier that depends on chance: its verdict changes between identical runs.
echo $(( $(od -An -N1 -tu1 /dev/urandom) % 2 )) > /logs/verifier/reward.txt
