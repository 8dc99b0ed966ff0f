    host=$(echo "$host" | tr '[:upper:]' '[:lower:]')
