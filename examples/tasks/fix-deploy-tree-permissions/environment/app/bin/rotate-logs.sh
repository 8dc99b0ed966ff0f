#!/bin/bash
# Rotate the service logs, keeping five generations.
set -euo pipefail
for f in /srv/app/logs/*.log; do
  [ -e "$f" ] || continue
  mv "$f" "$f.$(date +%Y%m%d)"
done
