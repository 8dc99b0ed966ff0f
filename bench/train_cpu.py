"""Does training help? Held-out pass@1 before and after training, over several training seeds,
with task-level bootstrap intervals, on 2 CPU cores.

    .venv/bin/python bench/train_cpu.py --split tasks    --seeds 0 1 2 --steps 20 --k 4 --out runs/bench-learn
    .venv/bin/python bench/train_cpu.py --split families --seeds 0 1 2 --steps 20 --k 4 --out runs/bench-learn
    .venv/bin/python bench/train_cpu.py --report --out runs/bench-learn

SmolLM2-135M-Instruct, full fine-tune with the bundled trainer, episodes in the tasks' own
containers (Docker). Two held-out splits, fixed across seeds (``split_seed``):

* ``tasks`` — one family (shell-basics, easy: the instruction names the command; the only
  setting where this model's base rate is above zero), a third of its tasks held out;
* ``families`` — training on shell-basics (easy), evaluation on tasks of *other* families at
  easy (file-search, text-transform, file-permissions): generalisation, not memorisation.

Per seed: pass@1 of the initial model on the held-out tasks (k episodes per task, sampled with
that seed), then ``--steps`` training steps, then pass@1 again at the same k. Each seed's
results go to OUT/<split>-seed<N>.json as soon as it ends (a rerun skips finished seeds).
``--report`` pools the seeds: per held-out task, its pass rate before and after (averaged over
seeds), and the lift after - before with a 95% bootstrap interval that resamples *tasks*
(episodes of one task are not independent draws).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "train"))

from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402

TRAIN_FAMILY = "shell-basics"
HELD_OUT_FAMILIES = ["file-search", "text-transform", "file-permissions"]


def make_suite(root: Path, split: str) -> Path:
    for seed in range(1, 49 if split == "tasks" else 33):
        render_trial(TRAIN_FAMILY, Difficulty.EASY, seed, root / "tasks")
    if split == "families":
        for family in HELD_OUT_FAMILIES:
            for seed in range(1, 7):
                render_trial(family, Difficulty.EASY, seed, root / "tasks")
    return root


def train_config(split: str, seed: int, steps: int):
    from factory_train.config import TrainConfig

    held = {"split": "task", "test_fraction": 1 / 3} if split == "tasks" else {
        "split": "family", "test_families": HELD_OUT_FAMILIES,
    }  # fmt: skip
    return TrainConfig(
        seed=seed,
        split_seed=0,
        steps=steps,
        tasks_per_step=4,
        group_size=4,
        max_turns=2,
        max_new_tokens=48,
        learning_rate=2e-6,
        micro_batch_size=8,
        checkpoint_every=10_000,
        reply_prefix="```bash\n",
        temperature=1.0,
        max_resample=1,
        max_empty_steps=10,
        **held,
    )


def run_seed(split: str, seed: int, steps: int, k: int, out: Path) -> dict:
    from factory_train.trainer import Trainer

    with tempfile.TemporaryDirectory() as tmp:
        suite = make_suite(Path(tmp) / "suite", split)
        trainer = Trainer(
            suite, train_config(split, seed, steps), Path(tmp) / "run", say=lambda _m: None
        )
        trainer.setup()
        started = time.monotonic()
        try:
            before = trainer.evaluate(k=k)
            print(f"[{split} seed {seed}] before: pass@1 {before['pass_at_1']:.3f}", flush=True)
            rows, attempts = [], 0
            while trainer.step < steps and attempts < 3 * steps:
                attempts += 1
                row = trainer.train_step()
                if row is not None:
                    rows.append(row)
                    print(
                        f"[{split} seed {seed}] step {row['step']}: reward "
                        f"{row['reward_mean']:.3f}, groups {row['groups_used']}, "
                        f"{row['step_sec']:.0f}s",
                        flush=True,
                    )
            after = trainer.evaluate(k=k)
            print(f"[{split} seed {seed}] after: pass@1 {after['pass_at_1']:.3f}", flush=True)
        finally:
            trainer.close()
    result = {
        "split": split,
        "seed": seed,
        "k": k,
        "steps": len(rows),
        "minutes": (time.monotonic() - started) / 60,
        "held_out": sorted(before["per_task"]),
        "before": before["per_task"],
        "after": after["per_task"],
        "infra_failures": before["infra_failures"] + after["infra_failures"],
        "train_reward": [r["reward_mean"] for r in rows],
        "groups_used": [r["groups_used"] for r in rows],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{split}-seed{seed}.json").write_text(json.dumps(result, indent=1))
    return result


def bootstrap(values: list[float], draws: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the mean, resampling the values (here: held-out tasks)."""
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(draws))
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def report(out: Path) -> None:
    for split in ("tasks", "families"):
        runs = [json.loads(p.read_text()) for p in sorted(out.glob(f"{split}-seed*.json"))]
        if not runs:
            continue
        tasks = sorted(set.intersection(*(set(r["before"]) & set(r["after"]) for r in runs)))
        before = [statistics.fmean(r["before"][t] for r in runs) for t in tasks]
        after = [statistics.fmean(r["after"][t] for r in runs) for t in tasks]
        lift = [a - b for a, b in zip(after, before, strict=True)]
        k = runs[0]["k"]
        b_lo, b_hi = bootstrap(before)
        a_lo, a_hi = bootstrap(after)
        l_lo, l_hi = bootstrap(lift)
        print(
            f"\n### held-out {split}: {len(tasks)} tasks, k = {k}, seeds {[r['seed'] for r in runs]}"
        )
        print("| measure | value |\n|---|---|")
        print(
            f"| pass@1 before (95% task bootstrap) | {statistics.fmean(before):.3f} [{b_lo:.3f}, {b_hi:.3f}] |"
        )
        print(f"| pass@1 after | {statistics.fmean(after):.3f} [{a_lo:.3f}, {a_hi:.3f}] |")
        print(f"| lift after - before | {statistics.fmean(lift):+.3f} [{l_lo:+.3f}, {l_hi:+.3f}] |")
        for r in runs:
            print(
                f"| seed {r['seed']}: before / after / steps / minutes | "
                f"{statistics.fmean(r['before'][t] for t in tasks):.3f} / "
                f"{statistics.fmean(r['after'][t] for t in tasks):.3f} / {r['steps']} / "
                f"{r['minutes']:.0f} |"
            )
        families = sorted({t.split("__")[-1].rsplit("-easy-", 1)[0] for t in tasks})
        print(f"| held-out task families | {', '.join(families)} |")
        print(f"| episodes lost to infrastructure | {sum(r['infra_failures'] for r in runs)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["tasks", "families"], default="tasks")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "bench-learn")
    parser.add_argument("--report", action="store_true", help="Only pool the finished seeds.")
    args = parser.parse_args()
    if not args.report:
        for seed in args.seeds:
            if (args.out / f"{args.split}-seed{seed}.json").is_file():
                print(f"[{args.split} seed {seed}] done already", flush=True)
                continue
            run_seed(args.split, seed, args.steps, args.k, args.out)
    report(args.out)


if __name__ == "__main__":
    main()
