"""Does training help? Held-out pass@1 before and after training, over several training seeds,
with task-level bootstrap intervals, on 2 CPU cores.

    .venv/bin/python bench/train_cpu.py --split tasks    --seeds 0 1 2 --steps 8 --k 4 --out runs/bench-learn
    .venv/bin/python bench/train_cpu.py --split families --seeds 0 1 2 --steps 8 --k 4 --out runs/bench-learn
    .venv/bin/python bench/train_cpu.py --report --out runs/bench-learn

SmolLM2-135M-Instruct, full fine-tune with the bundled trainer, episodes in the tasks' own
containers (Docker). Two held-out splits, the same for every seed (``split_seed``):

* ``tasks`` — one family (shell-basics, easy: the instruction names the command; the only
  setting where this model's base rate is above zero), 12 of its 36 tasks held out;
* ``families`` — training on 24 shell-basics tasks (easy), evaluation on 12 tasks of *other*
  families at easy (file-search, text-transform, file-permissions): generalisation, not
  memorisation of a family.

The baseline is the initial model's pass@1 on the held-out tasks, k episodes per task, measured
once per split (OUT/<split>-baseline.json). Per seed: ``--steps`` training steps from the same
initial model, then pass@1 at the same k (OUT/<split>-seed<N>.json, written as soon as the seed
ends; a rerun skips what is done). A seed whose training the trainer stops early
(``max_empty_steps`` groups in a row without reward variance) is still evaluated and pooled,
with the reason recorded, so no seed drops out of the pool for having learnt nothing.
``--report`` pools the seeds: per held-out task its pass rate before and after (after averaged
over seeds), and the lift after - before with a 95% bootstrap interval that resamples *tasks*
(the episodes of one task are not independent draws).
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

from factory.errors import TrainingError  # noqa: E402
from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402

EXAMPLE_CONFIG = REPO / "examples" / "train.yaml"
TRAIN_FAMILY = "shell-basics"
HELD_OUT_FAMILIES = ["file-search", "text-transform", "file-permissions"]


def make_suite(root: Path, split: str) -> Path:
    for seed in range(1, 37 if split == "tasks" else 25):
        render_trial(TRAIN_FAMILY, Difficulty.EASY, seed, root / "tasks")
    if split == "families":
        for family in HELD_OUT_FAMILIES:
            for seed in range(1, 5):
                render_trial(family, Difficulty.EASY, seed, root / "tasks")
    return root


def train_config(split: str, seed: int, steps: int):
    """examples/train.yaml (the documented CPU run), smaller per step, the split fixed."""
    from factory_train.config import load_train_config

    held = {"split": "task", "test_fraction": 1 / 3} if split == "tasks" else {
        "split": "family", "test_families": HELD_OUT_FAMILIES,
    }  # fmt: skip
    return load_train_config(
        EXAMPLE_CONFIG, seed=seed, split_seed=0, steps=steps, tasks_per_step=2,
        max_new_tokens=32, max_resample=1, max_empty_steps=10, checkpoint_every=10_000,
        eval_every=0, **held,
    )  # fmt: skip


def run_seed(split: str, seed: int | None, steps: int, k: int, out: Path) -> dict:
    """``seed`` None: the baseline (the initial model, no training)."""
    from factory_train.trainer import Trainer

    label = f"{split} " + ("baseline" if seed is None else f"seed {seed}")
    with tempfile.TemporaryDirectory() as tmp:
        suite = make_suite(Path(tmp) / "suite", split)
        config = train_config(split, seed or 0, steps)
        trainer = Trainer(suite, config, Path(tmp) / "run", say=lambda _m: None)
        trainer.setup()
        started = time.monotonic()
        rows = []
        stopped = None
        try:
            attempts = 0
            while seed is not None and trainer.step < steps and attempts < 3 * steps:
                attempts += 1
                try:
                    row = trainer.train_step()
                except TrainingError as exc:
                    # The trainer gave up (e.g. max_empty_steps groups in a row without reward
                    # variance). The seed still counts: its policy is evaluated as training left
                    # it, so a seed that found no signal is not silently dropped from the pool.
                    stopped = str(exc)
                    print(f"[{label}] training stopped: {stopped}", flush=True)
                    break
                if row is not None:
                    rows.append(row)
                    print(
                        f"[{label}] step {row['step']}: reward {row['reward_mean']:.3f}, "
                        f"groups {row['groups_used']}, {row['step_sec']:.0f}s",
                        flush=True,
                    )
            summary = trainer.evaluate(k=k)
            print(f"[{label}] pass@1 {summary['pass_at_1']:.3f}", flush=True)
        finally:
            trainer.close()
    result = {
        "split": split,
        "seed": seed,
        "k": k,
        "steps": len(rows),
        "minutes": (time.monotonic() - started) / 60,
        "pass": summary["per_task"],
        "infra_failures": summary["infra_failures"],
        "train_reward": [r["reward_mean"] for r in rows],
        "groups_used": [r["groups_used"] for r in rows],
        "stopped": stopped,
    }
    out.mkdir(parents=True, exist_ok=True)
    name = "baseline" if seed is None else f"seed{seed}"
    (out / f"{split}-{name}.json").write_text(json.dumps(result, indent=1))
    return result


def bootstrap(values: list[float], draws: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the mean, resampling the values (here: held-out tasks)."""
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(draws))
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def report(out: Path) -> None:
    for split in ("tasks", "families"):
        base_file = out / f"{split}-baseline.json"
        runs = [json.loads(p.read_text()) for p in sorted(out.glob(f"{split}-seed*.json"))]
        if not runs or not base_file.is_file():
            continue
        base = json.loads(base_file.read_text())
        tasks = sorted(set(base["pass"]).intersection(*(set(r["pass"]) for r in runs)))
        before = [base["pass"][t] for t in tasks]
        after = [statistics.fmean(r["pass"][t] for r in runs) for t in tasks]
        lift = [a - b for a, b in zip(after, before, strict=True)]
        k = base["k"]
        b_lo, b_hi = bootstrap(before)
        a_lo, a_hi = bootstrap(after)
        l_lo, l_hi = bootstrap(lift)
        seeds = [r["seed"] for r in runs]
        families = sorted({t.split("__")[-1].rsplit("-easy-", 1)[0] for t in tasks})
        print(
            f"\n### held-out {split}: {len(tasks)} tasks of {', '.join(families)}; k = {k}; seeds {seeds}"
        )
        print("| measure | value |\n|---|---|")
        print(
            f"| pass@1 before, initial model (95% task bootstrap) | {statistics.fmean(before):.3f} [{b_lo:.3f}, {b_hi:.3f}] |"
        )
        print(
            f"| pass@1 after, mean of {len(runs)} seeds | {statistics.fmean(after):.3f} [{a_lo:.3f}, {a_hi:.3f}] |"
        )
        print(f"| lift after - before | {statistics.fmean(lift):+.3f} [{l_lo:+.3f}, {l_hi:+.3f}] |")
        print(f"| successes / episodes before | {round(sum(before) * k)} / {len(tasks) * k} |")
        for r in runs:
            print(
                f"| seed {r['seed']}: pass@1 after, steps, minutes, train reward by step | "
                f"{statistics.fmean(r['pass'][t] for t in tasks):.3f}, {r['steps']}, "
                f"{r['minutes']:.0f}, {[round(x, 2) for x in r['train_reward']]} |"
            )
            if r.get("stopped"):
                print(f"| seed {r['seed']}: training stopped early | {r['stopped']} |")
        infra = base["infra_failures"] + sum(r["infra_failures"] for r in runs)
        print(f"| evaluation episodes lost to infrastructure | {infra} |")


def main() -> None:
    sigterm_as_ctrl_c()  # the trainer closes its runtime (containers removed)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["tasks", "families"], default="tasks")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "bench-learn")
    parser.add_argument("--report", action="store_true", help="Only pool the finished seeds.")
    args = parser.parse_args()
    if not args.report:
        for seed in [None, *args.seeds]:
            name = "baseline" if seed is None else f"seed{seed}"
            if (args.out / f"{args.split}-{name}.json").is_file():
                print(f"[{args.split} {name}] done already", flush=True)
                continue
            run_seed(args.split, seed, args.steps, args.k, args.out)
    report(args.out)


if __name__ == "__main__":
    main()
