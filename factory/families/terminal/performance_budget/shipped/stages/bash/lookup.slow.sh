    dc=$(grep -m1 "^$host " "$hosts" | cut -d' ' -f2)
