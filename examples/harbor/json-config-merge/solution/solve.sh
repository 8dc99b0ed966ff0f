#!/bin/bash
python3 - <<'PY'
import json
from pathlib import Path

def merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for key, value in b.items():
            out[key] = merge(a[key], value) if key in a else value
        return out
    return b

result = {}
for path in sorted(Path("/app/conf.d").glob("*.json")):
    result = merge(result, json.loads(path.read_text()))
Path("/app/merged.json").write_text(json.dumps(result, indent=2))
PY
