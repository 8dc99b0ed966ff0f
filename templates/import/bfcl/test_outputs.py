"""Checks an imported BFCL multi-turn entry through the tool server's GET /state.

The expectation is computed here, at test time, by running BFCL's ground-truth calls on fresh
instances of BFCL's API classes (copies in this folder) with this container's Python: result
strings hold floats whose last digits depend on the interpreter (``sum`` changed in 3.12).

* the final state of every API instance must equal the one the ground truth leaves (BFCL's state
  check: all public attributes, compared after the last request);
* every ground-truth call's result string must appear among the results of the calls made, per
  request and counting repeats (BFCL's response check, over the whole episode).
"""

import json
import sys
import urllib.request
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import mpmath  # noqa: F401 - MathAPI needs it; Debian's python3-mpmath for any python3
except ImportError:
    sys.path.append("/usr/lib/python3/dist-packages")

import bfcl_runtime as rt  # noqa: E402

TASK = json.loads((HERE / "ground_truth.json").read_text())


@lru_cache(maxsize=1)
def ground_truth():
    """(result strings per request, final state) of the ground truth."""
    instances = rt.create_instances(
        HERE / "bfcl_api", TASK["involved_classes"], TASK["initial_config"]
    )
    table = rt.method_table(instances)
    results = [[rt.execute_text(table, call) for call in turn] for turn in TASK["ground_truth"]]
    return results, json.loads(json.dumps(rt.dump_state(instances)))


def snapshot():
    url = f"http://127.0.0.1:{TASK['port']}/state"
    with urllib.request.urlopen(url, timeout=20) as response:
        return json.loads(response.read())


def _diff(want, got, path="state"):
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if want.get(key, "<missing>") != got.get(key, "<missing>"):
                return _diff(want.get(key, "<missing>"), got.get(key, "<missing>"), f"{path}.{key}")
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            if a != b:
                return _diff(a, b, f"{path}[{i}]")
    return f"{path}: expected {json.dumps(want)[:300]}, found {json.dumps(got)[:300]}"


def test_final_state():
    expected = ground_truth()[1]
    state = snapshot()["state"]
    assert state == expected, _diff(expected, state)


def test_ground_truth_results_were_obtained():
    results = [entry.get("result") for entry in snapshot()["log"]]
    missing = []
    for number, wanted_results in enumerate(ground_truth()[0], 1):
        pool = list(results)
        for wanted in wanted_results:
            if wanted in pool:
                pool.remove(wanted)
            else:
                missing.append(f"request {number}: {wanted[:200]}")
    assert not missing, f"{len(missing)} expected result(s) never obtained: " + "; ".join(missing)
