#!/bin/bash
# Waits for a service that never comes up.
while ! [ -S /run/never.sock ]; do sleep 1; done
echo 1 > /logs/verifier/reward.txt
