#!/bin/bash
# Harbor's reward protocol: always write a reward; say why it is 0.
got="$(cat /app/answer.txt 2>/dev/null || echo '<missing>')"
if [ "$got" = "42" ]; then
  echo "PASS: /app/answer.txt holds 42"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAILED check_answer - /app/answer.txt holds '$got', expected '42'"
  echo 0 > /logs/verifier/reward.txt
fi
