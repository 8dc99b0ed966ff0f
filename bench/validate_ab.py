"""Harness overhead of two factory trees side by side: bench/validate.py run round by round,
alternating between a base tree (e.g. main) and this one, on the same engine.

    .venv/bin/python bench/validate_ab.py --base /path/to/main [--rounds 3]

Each round runs ``bench/validate.py --rounds 1`` of the base tree, then of this tree (each with
its own tree first on PYTHONPATH), and reads its "harness overhead per container phase" and
"validate --jobs 1" lines. Medians per tree and the ratio are printed; interleaving keeps
the machine's noise (other load) from favouring either side.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_OVERHEAD = re.compile(r"harness overhead per container phase \| ([\d.]+) s")
_JOBS1 = re.compile(r"\| validate --jobs 1 \| ([\d.]+) s")
_FLOOR = re.compile(r"floor: .*? \| ([\d.]+) s")


def run_once(tree: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "train")])}
    result = subprocess.run(
        [sys.executable, str(tree / "bench" / "validate.py"), "--rounds", "1"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    if result.returncode != 0:
        raise SystemExit(f"{tree}: bench/validate.py failed:\n{result.stderr[-2000:]}")
    found = {}
    for name, pattern in (("overhead", _OVERHEAD), ("jobs1", _JOBS1), ("floor", _FLOOR)):
        match = pattern.search(result.stdout)
        if not match:
            raise SystemExit(f"{tree}: no '{name}' line in:\n{result.stdout[-2000:]}")
        found[name] = float(match.group(1))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="The tree to compare against.")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "this": REPO}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        for name, tree in trees.items():
            results[name].append(run_once(tree))
        print(
            f"round {round_ + 1}/{args.rounds}: "
            + ", ".join(
                f"{name} {r[-1]['overhead']:.3f} s/phase (jobs=1 {r[-1]['jobs1']:.1f} s)"
                for name, r in results.items()
            ),
            flush=True,
        )
    med = {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    print()
    print(f"| measure (median of {args.rounds} interleaved rounds) | base | this branch |")
    print("|---|---|---|")
    print(
        f"| harness overhead per container phase | {med['base']['overhead']:.3f} s | "
        f"{med['this']['overhead']:.3f} s |"
    )
    print(
        f"| validate --jobs 1 wall (6 tasks) | {med['base']['jobs1']:.1f} s | "
        f"{med['this']['jobs1']:.1f} s |"
    )
    print(
        f"| floor (scripts by docker exec) | {med['base']['floor']:.1f} s | "
        f"{med['this']['floor']:.1f} s |"
    )
    ratio = med["this"]["overhead"] / med["base"]["overhead"] if med["base"]["overhead"] else 0
    print(f"| overhead ratio this / base | {ratio:.2f}x | |")


if __name__ == "__main__":
    main()
