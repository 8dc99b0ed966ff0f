"""Trainer throughput, side by side with TRL's GRPOTrainer, in one run.

    .venv/bin/python bench/train_throughput.py [--steps 3] [--rounds 2]

Same single-turn config on both sides: SmolLM2-135M-Instruct on the CPU, 8 completions of
64 tokens per step from one prompt, reward from the task's verifier in its own container
(factory's SuiteReward for TRL, factory's harness for ours), one optimizer step. The two sides
alternate round by round; medians are reported. Ours is also reported split into rollout
(generation + containers) and update time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "train"))

from factory.agent.harness import HarnessConfig  # noqa: E402
from factory.agent.suite import load_suite_tasks  # noqa: E402
from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402

PREFIX = "```bash\n"
COMPLETIONS, TOKENS = 8, 64


def make_suite(root: Path, count: int) -> Path:
    for seed in range(1, count + 1):
        render_trial("shell-basics", Difficulty.EASY, seed, root / "tasks")
    return root


def run_ours(suite: Path, out: Path, steps: int, dtype: str) -> list[dict]:
    from factory_train.config import TrainConfig
    from factory_train.trainer import Trainer

    config = TrainConfig(
        steps=steps,
        tasks_per_step=1,
        group_size=COMPLETIONS,
        max_turns=1,
        max_new_tokens=TOKENS,
        split="task",
        test_fraction=0.0,
        max_resample=0,
        skip_zero_variance=False,
        learning_rate=1e-6,
        micro_batch_size=COMPLETIONS,
        checkpoint_every=10_000,
        reply_prefix=PREFIX,
        dtype=dtype,
        concurrency=COMPLETIONS,
    )
    trainer = Trainer(suite, config, out, say=lambda _m: None)
    trainer.setup()
    try:
        return [trainer.train_step() for _ in range(steps)]
    finally:
        trainer.close()


def run_trl(suite: Path, out: Path, steps: int, model_path: str, bf16: bool) -> list[float]:
    from factory_train.trl_adapter import SuiteReward, suite_dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    reward = SuiteReward(
        suite, harness=HarnessConfig(max_turns=1), reply_prefix=PREFIX, concurrency=COMPLETIONS
    )
    times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            times.append(time.perf_counter() - self.started)

    args = GRPOConfig(
        output_dir=str(out),
        use_cpu=True,
        bf16=bf16,
        num_generations=COMPLETIONS,
        per_device_train_batch_size=COMPLETIONS,
        max_completion_length=TOKENS,
        max_steps=steps,
        learning_rate=1e-6,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        temperature=1.0,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model_path,
        reward_funcs=reward,
        args=args,
        train_dataset=suite_dataset(reward, repeat=steps * 2),
        callbacks=[Timer()],
    )
    try:
        trainer.train()
    finally:
        reward.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    args = parser.parse_args()

    from factory_train.models import resolve_model

    model_path = str(resolve_model("SmolLM2-135M-Instruct"))
    ours, trl, rollout, update = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        suite = make_suite(Path(tmp) / "suite", 8)
        print(
            f"suite: {len(load_suite_tasks(suite))} shell-basics tasks; "
            f"{COMPLETIONS} completions x {TOKENS} tokens per step; {args.precision}",
            flush=True,
        )
        for round_ in range(args.rounds):
            rows = run_ours(
                suite,
                Path(tmp) / f"ours-{round_}",
                args.steps,
                "auto" if args.precision == "bf16" else "fp32",
            )
            steady = rows[1:] or rows  # the first step pays for warm-up
            ours += [r["step_sec"] for r in steady]
            rollout += [r["rollout_sec"] for r in steady]
            update += [r["update_sec"] for r in steady]
            trl_times = run_trl(
                suite, Path(tmp) / f"trl-{round_}", args.steps, model_path, args.precision == "bf16"
            )
            trl += trl_times[1:] or trl_times
            print(
                f"round {round_ + 1}: ours {[round(r['step_sec'], 1) for r in rows]} s, "
                f"TRL {[round(t, 1) for t in trl_times]} s",
                flush=True,
            )
    o, t = statistics.median(ours), statistics.median(trl)
    r, u = statistics.median(rollout), statistics.median(update)
    print()
    print(f"| measure (median of {len(ours)} steady steps per side) | factory | TRL GRPOTrainer |")
    print("|---|---|---|")
    print(f"| step time | {o:.1f} s | {t:.1f} s |")
    print(f"| episodes / minute | {60 * COMPLETIONS / o:.1f} | {60 * COMPLETIONS / t:.1f} |")
    print(f"| share of step in rollout (generation + containers) | {r / o:.0%} | - |")
    print(f"| share of step in the update | {u / o:.0%} | - |")
    print(f"| TRL step / factory step | {t / o:.2f}x | |")


if __name__ == "__main__":
    main()
