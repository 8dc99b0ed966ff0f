    norm=$(echo "$path" | sed -E 's/[0-9]+/N/g')
