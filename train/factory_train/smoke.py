"""A short end-to-end run of the bundled trainer without Docker: the GPU check
(``scripts/gpu_check.sh``), and the same on CPU with a tiny step count.

    python -m factory_train.smoke [--model PATH] [--random-weights] [--steps 4] [--out DIR]

1. A suite of generated tool tasks, played in process (no container, no shell: only the
   tasks' ``tool`` commands exist): training families with short reference chains, one
   held-out family.
2. The policy: a model folder; with ``--random-weights`` only its config and tokenizer are
   used and the weights are drawn at random (a lent GPU cannot receive a checkpoint).
3. A warm start, so that RL has something to learn from: supervised steps on the training
   tasks' reference solutions, in rounds, until a group of sampled episodes has both a success
   and a failure (the signal GRPO needs) — stated in the output, not part of the trainer.
4. ``--steps`` trainer steps (``Trainer.train_step``: sampling, episodes, GRPO update),
   asserting that the update moved the weights.
5. Held-out pass@1 (the held-out family), tokens/s and step times.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from factory.agent.harness import Episode
from factory.errors import FactoryError
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial
from factory_train.config import TrainConfig
from factory_train.trainer import Trainer

TRAIN_FAMILIES = ("tool-inventory", "tool-crm", "tool-files")
HELD_OUT_FAMILY = "tool-banking"
FENCE = "```"


def make_suite(root: Path, per_family: int, train_families=TRAIN_FAMILIES) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    for family in (*train_families, HELD_OUT_FAMILY):
        for seed in range(1, per_family + 1):
            render_trial(family, Difficulty.EASY, seed, root / "tasks")
    return root


def random_weights(config_dir: Path, out: Path) -> Path:
    """A model folder with ``config_dir``'s architecture and tokenizer, weights drawn at random."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(str(config_dir))
    model = AutoModelForCausalLM.from_config(config)
    model.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(str(config_dir)).save_pretrained(str(out))
    return out


def reference_reply(task_dir: Path) -> str:
    lines = (task_dir / "solution" / "solve.sh").read_text().splitlines()
    return "\n".join(line for line in lines if line.startswith("tool ")) + f"\n{FENCE}"


def warm_start(trainer: Trainer, *, rounds: int, steps_per_round: int, lr: float, say) -> int:
    """Supervised steps on the reference replies until a sampled group has reward variance;
    returns the supervised steps taken."""
    import torch

    engine, tokenizer = trainer.engine, trainer.tokenizer
    examples = []
    for entry in trainer.train_tasks:
        opening = Episode(None, entry.task, "", trainer.harness).opening()  # type: ignore[arg-type]
        prompt = engine.frame.prompt_ids(opening) + engine.prefix_ids
        reply = tokenizer(reference_reply(entry.task.root), add_special_tokens=False)["input_ids"]
        examples.append((prompt, [*reply, tokenizer.eos_token_id]))
    params = [p for p in trainer.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr)
    taken = 0
    for round_ in range(1, rounds + 1):
        for _ in range(steps_per_round):
            total = 0.0
            for prompt, reply in examples:  # one step: every example, gradients accumulated
                ids = torch.tensor([prompt + reply], device=trainer.device)
                labels = ids.clone()
                labels[0, : len(prompt)] = -100
                with trainer.precision.context(trainer.device.type):
                    loss = trainer.model(input_ids=ids, labels=labels).loss
                (loss / len(examples)).backward()
                total += float(loss.detach()) / len(examples)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            taken += 1
        passes = probe(trainer)
        say(f"warm start round {round_}: mean loss {total:.3f}, sampled pass rates {passes}")
        if any(0 < p < 1 for p in passes):
            return taken
    raise FactoryError(
        f"no sampled group had both a success and a failure after {taken} warm-start steps; "
        "raise --warmup-rounds"
    )


def probe(trainer: Trainer) -> list[float]:
    """Per training task, the pass rate of one sampled group (as a training step samples)."""
    tasks = trainer.train_tasks
    episodes = [
        trainer.backend.episode(entry, trainer.harness)
        for entry in tasks
        for _ in range(trainer.config.group_size)
    ]
    groups = [i for i in range(len(tasks)) for _ in range(trainer.config.group_size)]
    rollouts, _ = trainer.engine.run(episodes, groups)
    return [
        sum(r.episode.reward or 0.0 for r in rollouts if r.group == i) / trainer.config.group_size
        for i in range(len(tasks))
    ]


def run(args: argparse.Namespace, say=print) -> dict:
    import torch

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = Path(args.model)
    if args.random_weights:
        model = random_weights(model, out / "random-model")
    suite = make_suite(out / "suite", args.tasks_per_family, args.train_families)
    config = TrainConfig(
        model=str(model),
        environment="in-process",
        split="family",
        test_families=[HELD_OUT_FAMILY],
        steps=args.steps,
        tasks_per_step=args.tasks_per_step,
        group_size=args.group_size,
        max_turns=2,
        max_new_tokens=args.max_new_tokens,
        reply_prefix=f"{FENCE}bash\n",
        learning_rate=args.lr,
        micro_batch_size=args.micro_batch_size,
        temperature=1.0,
        max_resample=3,
        checkpoint_every=10_000,
        seed=args.seed,
    )
    trainer = Trainer(suite, config, out / "run", say=say)
    trainer.setup()
    device = torch.cuda.get_device_name() if trainer.device.type == "cuda" else "cpu"
    size = sum(p.numel() for p in trainer.model.parameters())
    say(f"device {device}; model {model.name}, {size / 1e6:.1f}M parameters")
    try:
        warm = warm_start(
            trainer,
            rounds=args.warmup_rounds,
            steps_per_round=args.warmup_steps,
            lr=args.warmup_lr,
            say=say,
        )
        before = trainer.evaluate(k=args.k)
        weights = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
        rows, started = [], time.monotonic()
        while trainer.step < args.steps and time.monotonic() - started < args.budget_sec:
            row = trainer.train_step()
            if row is not None:
                rows.append(row)
        if not rows:
            raise FactoryError("no training step had a learning signal")
        moved = _moved_fraction(weights, trainer.model)
        after = trainer.evaluate(k=args.k)
    finally:
        trainer.close()
    summary = {
        "device": device,
        "parameters": size,
        "warmup_steps": warm,
        "steps": len(rows),
        "weights_moved": moved,
        "step_sec": [round(r["step_sec"], 2) for r in rows],
        "update_sec": [round(r["update_sec"], 2) for r in rows],
        "tokens_per_sec": [round(r["tokens_per_sec"], 1) for r in rows],
        "train_reward": [round(r["reward_mean"], 3) for r in rows],
        "held_out_pass_at_1": (before["pass_at_1"], after["pass_at_1"]),
        "held_out_tasks": after["tasks"],
        "eval_tokens_per_sec": round(after["tokens_per_sec"], 1),
    }
    for row in rows:
        say(
            f"step {row['step']}: reward {row['reward_mean']:.3f}, groups {row['groups_used']}, "
            f"step {row['step_sec']:.2f}s (rollout {row['rollout_sec']:.2f}s, update "
            f"{row['update_sec']:.2f}s), {row['tokens_per_sec']:.0f} tokens/s, "
            f"sampler gap {row['sampler_gap']:.2e}"
        )
    say(
        f"weights moved by RL: {moved:.1%} of non-embedding elements; held-out "
        f"{HELD_OUT_FAMILY} pass@1 {before['pass_at_1']:.3f} -> {after['pass_at_1']:.3f} "
        f"({after['tasks']} tasks, k={args.k}, {after['tokens_per_sec']:.0f} tokens/s)"
    )
    if moved < 0.5:
        raise FactoryError(f"the update moved only {moved:.1%} of the weights")
    return summary


def _moved_fraction(before: dict, model) -> float:
    changed = total = 0
    for name, param in model.named_parameters():
        if "embed" in name or not param.requires_grad:
            continue
        changed += int((before[name] != param.detach()).sum())
        total += param.numel()
    return changed / max(total, 1)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="SmolLM2-135M-Instruct")
    p.add_argument("--random-weights", action="store_true")
    p.add_argument("--out", default="runs/smoke")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--budget-sec", type=float, default=600)
    p.add_argument("--tasks-per-family", type=int, default=2)
    p.add_argument("--train-families", nargs="+", default=list(TRAIN_FAMILIES))
    p.add_argument("--tasks-per-step", type=int, default=4)
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--micro-batch-size", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=96)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--warmup-rounds", type=int, default=20)
    p.add_argument("--warmup-steps", type=int, default=25)
    p.add_argument("--warmup-lr", type=float, default=1e-3)
    p.add_argument("--k", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    return p


def main() -> None:
    run(parser().parse_args())


if __name__ == "__main__":
    main()
