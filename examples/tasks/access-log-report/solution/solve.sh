#!/bin/bash
set -euo pipefail
LOG=/var/log/webapp/access.log
OUT=/app/report.txt
export LC_ALL=C
{
  echo "total_requests: $(grep -vc '^#' "$LOG")"
  echo "unique_ips: $(grep -v '^#' "$LOG" | awk '{print $1}' | sort -u | wc -l)"
  echo "server_errors: $(grep -v '^#' "$LOG" | awk '$9 >= 500 && $9 <= 599' | wc -l)"
  echo "top_ips:"
  grep -v '^#' "$LOG" | awk '{print $1}' | sort | uniq -c \
    | awk '{print $2, $1}' | sort -k2,2nr -k1,1 | head -n 10
  echo "status_counts:"
  grep -v '^#' "$LOG" | awk '{print $9}' | sort | uniq -c | awk '{print $2, $1}' | sort -k1,1n
} > "$OUT"
