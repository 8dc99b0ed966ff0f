    if echo "$status" | grep -q '^5'; then
