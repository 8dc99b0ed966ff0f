while IFS= read -r line; do
    [ -n "$line" ] || continue
    host=$(echo "$line" | cut -d' ' -f2)
    path=$(echo "$line" | cut -d' ' -f4)
    status=$(echo "$line" | cut -d' ' -f5)
    size=$(echo "$line" | cut -d' ' -f6)
