#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
import urllib.request

BASE = "http://kv:8080/keys/"
total = 0
with open("/app/inventory.csv", newline="") as handle:
    for row in csv.DictReader(handle):
        data = row["count"].encode()
        request = urllib.request.Request(BASE + "stock:" + row["item"], data=data, method="PUT")
        urllib.request.urlopen(request, timeout=10)
        total += int(row["count"])
multiplier = int(urllib.request.urlopen(BASE + "config:multiplier", timeout=10).read())
with open("/app/total.txt", "w") as out:
    out.write(f"{total * multiplier}\n")
PY
