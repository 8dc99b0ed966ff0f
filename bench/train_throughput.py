"""Step time of the bundled trainer and of TRL's GRPOTrainer side by side, multi-turn, in one run.

    .venv/bin/python bench/train_throughput.py [--steps 3] [--rounds 2]

Identical settings on both sides, from one TrainConfig (TRL's through
``factory_train.trl_env.grpo_config``): SmolLM2-135M-Instruct on the CPU, fp32 weights with bf16
autocast, temperature 1.0, top-p 1.0, top-k 0, G = 4 episodes of each of 2 tasks per step, up
to 2 turns of at most 48 new tokens, lr 1e-6, one optimizer step per step, no gradient
checkpointing. The environment is the same on both sides: 4 generated shell-basics tasks (easy),
each episode in a fresh container of its task, reward from its verifier. The policies act in
their native formats: fenced ```` ```bash ```` blocks for the bundled trainer, tool calls
(TRL's environment, which adds the tool schema to the prompt) for TRL, so prompt and reply
lengths differ; tokens per step are printed beside the times. The sides alternate round by
round; the first step of each run is warm-up and left out; medians are reported.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_CONFIG = REPO / "examples" / "train.yaml"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "train"))

from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402


def make_suite(root: Path) -> Path:
    for seed in range(1, 5):
        render_trial("shell-basics", Difficulty.EASY, seed, root / "tasks")
    return root


def config(steps: int):
    """examples/train.yaml with every step updating (TRL does) and no held-out split; the
    sampling defaults (temperature 1.0, top-p 1.0, top-k 0) and precision (auto) unchanged."""
    from factory_train.config import load_train_config

    return load_train_config(
        EXAMPLE_CONFIG, environment="docker", test_fraction=0.0, steps=steps, tasks_per_step=2,
        learning_rate=1e-6, max_observation_chars=400, skip_zero_variance=False,
        max_resample=0, checkpoint_every=10_000, eval_every=0, seed=0,
    )  # fmt: skip


def run_ours(suite: Path, out: Path, steps: int) -> list[dict]:
    from factory_train.trainer import Trainer

    trainer = Trainer(suite, config(steps), out, say=lambda _m: None)
    trainer.setup()
    try:
        return [trainer.train_step() for _ in range(steps)]
    finally:
        trainer.close()


def run_trl(suite: Path, out: Path, steps: int, model_path: Path) -> list[dict]:
    from factory_train.trl_env import SuiteSource, grpo_config
    from transformers import TrainerCallback
    from trl import GRPOTrainer

    settings = config(steps)
    source = SuiteSource(suite, settings)
    rows: list[dict] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            rows.append({"step_sec": time.perf_counter() - self.started})

        def on_log(self, args, state, control, logs=None, **kwargs):
            if rows and logs and "completions/mean_length" in logs:
                rows[-1]["tokens"] = logs["completions/mean_length"] * settings.group_size * 2

    trainer = GRPOTrainer(
        model=str(model_path),
        args=grpo_config(settings, out),
        train_dataset=source.dataset(repeat=steps * 4),
        processing_class=source.tokenizer(model_path),
        environment_factory=source.environment,
        callbacks=[Timer(), source.callback()],
    )
    try:
        trainer.train()
    finally:
        source.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    from factory_train.models import resolve_model

    model_path = resolve_model("SmolLM2-135M-Instruct")
    ours, trl, ours_tokens, trl_tokens, rollout, update = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        suite = make_suite(Path(tmp) / "suite")
        print(f"suite: 4 shell-basics tasks in containers; {args.steps} steps x "
              f"{args.rounds} rounds per side", flush=True)  # fmt: skip
        for round_ in range(args.rounds):
            rows = run_ours(suite, Path(tmp) / f"ours-{round_}", args.steps)
            steady = rows[1:] or rows  # the first step pays for warm-up
            ours += [r["step_sec"] for r in steady]
            ours_tokens += [r["policy_tokens"] for r in steady]
            rollout += [r["rollout_sec"] for r in steady]
            update += [r["update_sec"] for r in steady]
            trl_rows = run_trl(suite, Path(tmp) / f"trl-{round_}", args.steps, model_path)
            trl_steady = trl_rows[1:] or trl_rows
            trl += [r["step_sec"] for r in trl_steady]
            trl_tokens += [r.get("tokens", 0) for r in trl_steady]
            print(
                f"round {round_ + 1}: ours {[round(r['step_sec'], 1) for r in rows]} s, "
                f"TRL {[round(r['step_sec'], 1) for r in trl_rows]} s",
                flush=True,
            )
    o, t = statistics.median(ours), statistics.median(trl)
    print()
    print(f"| measure (median of {len(ours)} steady steps per side) | bundled | TRL GRPOTrainer |")
    print("|---|---|---|")
    print(f"| step time | {o:.1f} s | {t:.1f} s |")
    print(f"| episodes / minute | {60 * 8 / o:.1f} | {60 * 8 / t:.1f} |")
    print(
        f"| policy tokens per step | {statistics.median(ours_tokens):.0f} | "
        f"{statistics.median(trl_tokens):.0f} |"
    )
    print(f"| bundled: rollout / update share | {statistics.median(rollout) / o:.0%} / "
          f"{statistics.median(update) / o:.0%} | |")  # fmt: skip
    print(f"| TRL step / bundled step | {t / o:.2f}x | |")


if __name__ == "__main__":
    main()
