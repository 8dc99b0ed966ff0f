"""Does training help? Held-out pass rate before and after GRPO on 2 CPU cores.

    .venv/bin/python bench/train_cpu.py [--tasks 48] [--steps 30] [--budget-min 25] [--k 4]

SmolLM2-135M-Instruct, the shell-basics family at easy difficulty (the instruction names the
command: the small model's base rate is above zero there), a seeded 1/3 of the tasks held out.
Held-out pass@1 is measured with k episodes per task before training and after, with a 95%
confidence interval (Wilson, over episodes). Training stops after --steps or when the time
budget is spent, whichever comes first.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "train"))

from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def evaluate(trainer, k: int, label: str) -> dict:
    summary = trainer.evaluate(k=k)
    episodes = summary["episodes"] - summary["infra_failures"]
    successes = round(summary["pass_at_1"] * episodes)
    low, high = wilson(successes, episodes)
    print(
        f"{label}: pass@1 {summary['pass_at_1']:.3f} [{low:.3f}, {high:.3f}] over {episodes} "
        f"episodes of {summary['tasks']} held-out tasks",
        flush=True,
    )
    return {**summary, "ci": (low, high), "successes": successes, "n": episodes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=48)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--budget-min", type=float, default=25.0)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from factory_train.config import TrainConfig
    from factory_train.trainer import Trainer

    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        for seed in range(1, args.tasks + 1):
            render_trial("shell-basics", Difficulty.EASY, seed, suite / "tasks")
        config = TrainConfig(
            steps=args.steps,
            tasks_per_step=4,
            group_size=4,
            max_turns=2,
            max_new_tokens=48,
            split="task",
            test_fraction=1 / 3,
            learning_rate=2e-6,
            micro_batch_size=8,
            checkpoint_every=10_000,
            reply_prefix="```bash\n",
            temperature=1.0,
            max_resample=1,
            seed=0,
        )
        out = args.out or Path(tmp) / "run"
        trainer = Trainer(suite, config, out, say=lambda _m: None)
        trainer.setup()
        started = time.monotonic()
        try:
            print(
                f"{len(trainer.train_tasks)} training tasks, {len(trainer.test_tasks)} held out",
                flush=True,
            )
            before = evaluate(trainer, args.k, "before")
            steps = 0
            while steps < args.steps and time.monotonic() - started < args.budget_min * 60:
                row = trainer.train_step()
                steps += 1
                print(
                    f"step {steps}: train reward {row['reward_mean']:.3f}, groups {row['groups_used']}, "
                    f"{row['step_sec']:.0f}s",
                    flush=True,
                )
            after = evaluate(trainer, args.k, "after")
        finally:
            trainer.close()
        minutes = (time.monotonic() - started) / 60
    print()
    print("| measure | before | after |\n|---|---|---|")
    print(
        f"| held-out pass@1 (95% CI) | {before['pass_at_1']:.3f} [{before['ci'][0]:.3f}, {before['ci'][1]:.3f}] "
        f"| {after['pass_at_1']:.3f} [{after['ci'][0]:.3f}, {after['ci'][1]:.3f}] |"
    )
    print(
        f"| successes / episodes | {before['successes']} / {before['n']} | {after['successes']} / {after['n']} |"
    )
    print(f"| held-out tasks x k | {before['tasks']} x {args.k} | {after['tasks']} x {args.k} |")
    print(f"| GRPO steps, wall time (incl. evals) | {steps} steps, {minutes:.1f} min | |")


if __name__ == "__main__":
    main()
