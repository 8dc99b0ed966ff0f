"""The stock counts must be in the kv sidecar and the total must use its multiplier.

The sidecar's answers come from the snapshot the collect hook took of the agent's `kv` (see
task.toml); this verifier's own `kv` is a fresh one and is never asked. No snapshot: fail."""

import json
import sys
from pathlib import Path

EXPECTED = {"apple": "12", "pear": "7", "plum": "30", "fig": "4"}
SNAPSHOT = Path("/var/lib/kv-snapshot/kv.json")
STORE = json.loads(SNAPSHOT.read_text())


def get(key):
    return STORE[key]


def main():
    problems = []
    for item, count in EXPECTED.items():
        found = get(f"stock:{item}")
        if (found or "").strip() != count:
            problems.append(f"stock:{item} is {found!r}, expected {count}")
    multiplier = int(get("config:multiplier"))
    expected_total = sum(int(c) for c in EXPECTED.values()) * multiplier
    try:
        total = Path("/app/total.txt").read_text().strip()
    except OSError:
        total = None
    if total != str(expected_total):
        problems.append(f"/app/total.txt holds {total!r}, expected {expected_total}")
    for problem in problems:
        print("FAIL:", problem)
    return 1 if problems else 0


sys.exit(main())
