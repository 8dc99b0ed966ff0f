while read -r stamp host method path status size; do
    [ -n "$stamp" ] || continue
