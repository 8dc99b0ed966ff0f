"""Effort and structural diversity of the terminal families at a difficulty (no Docker).

For every terminal family: render ``--seeds`` tasks and report

* the median number of commands or edits of the reference solution (``solution/solve.sh``,
  counted by :func:`factory.quality.structure.solution_steps`) and the share with at least 8;
* how many instructions name one of the task's declared traps (must be 0 at ``hard``);
* the structural diversity: distinct fault combinations, test structures and solution shapes
  per 100 tasks (:func:`factory.quality.structure.diversity`).

    PYTHONPATH=$PWD python bench/structure.py --difficulty hard --seeds 100

Exit status 1 when a family with a fault grammar misses 50 distinct fault combinations per 100
tasks, when a median is under 8 (``--min-steps``) or when an instruction names a trap.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from factory.families import registry
from factory.generate.render import Origin, render_family
from factory.quality.structure import diversity, named_traps, solution_steps, structure_of
from factory.vocabulary import Difficulty, Domain

MIN_COMBINATIONS_PER_100 = 50


def measure(name: str, difficulty: Difficulty, seeds: int) -> dict:
    family = registry.get(name)
    structures, steps, named = [], [], []
    for seed in range(1, seeds + 1):
        draft = family.draft(random.Random(seed), difficulty, dict(family.default_params))
        origin = Origin("bench", f"terminal/x/{name}", family.category, seed, name)
        spec = render_family(
            family, draft, task_id=f"{name}-{seed}", difficulty=difficulty, origin=origin
        )
        solution = spec.files["solution/solve.sh"].decode(errors="replace")
        steps.append(len(solution_steps(solution)))
        named += named_traps(spec.instruction, [(t.name, t.tells) for t in spec.traps])
        structures.append(structure_of(spec.faults, spec.text_of("tests/"), solution))
    div = diversity(structures)
    return {
        "family": name,
        "grammar": any(s.faults for s in structures),
        "median_steps": div.median_steps,
        "at_least_8": sum(n >= 8 for n in steps) / len(steps),
        "named": len(named),
        "named_example": named[0] if named else "",
        "combos": div.per_100(div.fault_combinations),
        "tests": div.per_100(div.test_structures),
        "shapes": div.per_100(div.solution_shapes),
        "distance": div.mean_distance or 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--difficulty", default="hard", choices=[d.value for d in Difficulty])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--min-steps", type=float, default=8)
    parser.add_argument("--family", action="append", help="only these families")
    args = parser.parse_args()
    difficulty = Difficulty(args.difficulty)
    names = args.family or [f.name for f in registry.all() if f.domain is Domain.TERMINAL]
    started = time.monotonic()
    print(
        f"{'family':22} {'steps':>6} {'>=8':>5} {'named':>5} {'combos':>7} {'tests':>6} "
        f"{'shapes':>7} {'dist':>5}   (per 100 tasks, {args.seeds} seeds, {difficulty.value})"
    )
    failures = []
    for name in names:
        row = measure(name, difficulty, args.seeds)
        print(
            f"{name:22} {row['median_steps']:6.1f} {row['at_least_8']:5.0%} {row['named']:5d} "
            f"{row['combos'] if row['grammar'] else 0:7.0f} {row['tests']:6.0f} "
            f"{row['shapes']:7.0f} {row['distance']:5.2f}"
        )
        if row["median_steps"] < args.min_steps:
            failures.append(f"{name}: median {row['median_steps']:g} steps < {args.min_steps:g}")
        if row["named"]:
            failures.append(f"{name}: {row['named']} trap names, e.g. {row['named_example']}")
        if row["grammar"] and row["combos"] < MIN_COMBINATIONS_PER_100:
            failures.append(f"{name}: {row['combos']:.0f} fault combinations per 100 tasks")
    print(f"\n{len(names)} families in {time.monotonic() - started:.0f}s")
    for line in failures:
        print(f"FAIL {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
