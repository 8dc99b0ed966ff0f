#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import json
import urllib.request

items = json.load(urllib.request.urlopen("http://api:8000/items", timeout=10))
value = round(sum(item["price"] * item["stock"] for item in items), 2)
lowest = min(items, key=lambda item: item["stock"])["sku"]
with open("/app/report.json", "w") as out:
    json.dump({"stock_value": value, "lowest_stock": lowest}, out)
body = json.dumps({"sku": lowest, "quantity": 25}).encode()
request = urllib.request.Request(
    "http://api:8000/orders", data=body, headers={"Content-Type": "application/json"}
)
urllib.request.urlopen(request, timeout=10)
PY
