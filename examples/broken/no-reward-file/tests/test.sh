#!/bin/bash
set -e
grep -qx 42 /app/answer.txt
echo "all good"
