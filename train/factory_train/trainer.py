"""The RL loop, in one readable place (the single-machine path: CPU or one GPU).

Each step: sample tasks from the training split; run ``group_size`` episodes per task (batched
sampling with transformers, commands in parallel, in the tasks' containers or in process);
drop episodes that failed for infrastructure reasons (an episode whose command stopped its
own environment scores 0 instead); ask the algorithm (``config.algorithm``, GRPO by default)
which groups carry a learning signal and what each episode's advantage is, resampling tasks up
to ``max_resample`` times when no group does; take one policy-gradient update over the
policy's own tokens against the sampler's log-probs; log; checkpoint. A step that ends with no
group to learn from is not counted and not checkpointed; ``max_empty_steps`` of them in a row,
or a step whose every episode failed for infrastructure reasons, stop the run with an error.
A killed run resumes from its last checkpoint with ``--resume``.

For many GPUs and vLLM use TRL's GRPOTrainer with :mod:`factory_train.trl_env`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from factory.agent.backends import EpisodeBackend, make_backend
from factory.agent.evaluation import SuiteSplit
from factory.agent.runners import harness_config
from factory.agent.suite import SuiteTask
from factory.errors import TrainingError
from factory_train.algorithms import make_algorithm
from factory_train.batch import make_batch, token_logprobs
from factory_train.checkpoint import latest_checkpoint, restore_state, save_checkpoint
from factory_train.config import TrainConfig
from factory_train.generation import HFSampler
from factory_train.metrics import MetricsLog
from factory_train.models import load_policy, resolve_model
from factory_train.precision import Precision, pick_device
from factory_train.rollout import Rollout, RolloutEngine


def split_tasks(suite: Path, config: TrainConfig) -> tuple[list[SuiteTask], list[SuiteTask]]:
    """The suite's (training, held-out) tasks, split as ``factory eval`` splits them."""
    return SuiteSplit.of(config).parts(suite)


def sampling_engine(
    model, tokenizer, config: TrainConfig, precision: Precision, *, concurrency: int
) -> RolloutEngine:
    """A rollout engine over ``model`` sampling from the training distribution
    (``config.sampling``: temperature, top-p, top-k)."""
    sampler = HFSampler(
        model,
        tokenizer,
        max_new_tokens=config.max_new_tokens,
        sampling=config.sampling,
        precision=precision,
    )
    return RolloutEngine(
        sampler,
        tokenizer,
        max_episode_tokens=config.max_episode_tokens,
        concurrency=concurrency,
        reply_prefix=config.reply_prefix,
    )


@dataclass(eq=False)
class Trainer:
    """A training run of ``config`` on ``suite``, written under ``out``; :meth:`setup` loads
    the model (from ``out``'s last checkpoint with ``resume``)."""

    suite: Path
    config: TrainConfig
    out: Path
    _: KW_ONLY
    resume: bool = False
    say: Callable[[str], object] = print
    backend: EpisodeBackend | None = None
    step: int = field(default=0, init=False)
    empty_steps: int = field(default=0, init=False)
    """Steps in a row that ended without an update (not counted in ``step``)."""

    # --- set-up -------------------------------------------------------------------------
    def setup(self) -> None:
        import torch

        config = self.config
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "config.json").write_text(config.model_dump_json(indent=2))
        self.device, self.precision = pick_device(config.dtype)
        latest = latest_checkpoint(self.out) if self.resume else None
        base = resolve_model(config.model)
        self._load_model(base, latest)
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            params, lr=config.learning_rate, weight_decay=config.weight_decay
        )
        self.reference = None
        if config.kl_coef > 0 and not config.lora.enabled:
            self.reference, _ = load_policy(base, device=self.device, dtype=self.precision.frozen)
            self.reference.eval().requires_grad_(False)
        if latest:
            self.step = restore_state(latest, self.optimizer, self.device)
            self.say(f"resumed from {latest.name} (step {self.step})")
        self.algorithm = make_algorithm(config)
        self.train_tasks, self.test_tasks = split_tasks(self.suite, config)
        self.say(
            f"{len(self.train_tasks)} training tasks, {len(self.test_tasks)} held out "
            f"(families: {sorted({t.family for t in self.test_tasks})})"
        )
        if self.backend is None:
            self.backend = make_backend(
                config.environment, run_prefix="train", concurrency=config.concurrency
            )
        self.backend.prepare(self.train_tasks + self.test_tasks)
        self.harness = harness_config(config)
        self.engine = sampling_engine(
            self.model, self.tokenizer, config, self.precision, concurrency=config.concurrency
        )
        self.metrics = MetricsLog(self.out, self.out.name)
        if latest:
            self.metrics.truncate_to(self.step)

    def _load_model(self, base: Path, latest: Path | None) -> None:
        """The policy in its precision: full fine-tuning trains fp32 weights; LoRA trains fp32
        adapters over a frozen base. Dropout stays off for good (eval mode): the sampler and
        the scorer must compute the same function of the same weights."""
        lora = self.config.lora
        if not lora.enabled:
            path = latest / "model" if latest else base
            self.say(f"model: {path} on {self.device}")
            self.model, self.tokenizer = load_policy(
                path, device=self.device, dtype=self.precision.trainable
            )
        else:
            from peft import LoraConfig as PeftLora
            from peft import PeftModel, get_peft_model

            self.say(f"model: {base} + LoRA r={lora.r} on {self.device}")
            model, self.tokenizer = load_policy(
                base, device=self.device, dtype=self.precision.frozen
            )
            if latest:
                self.model = PeftModel.from_pretrained(
                    model, str(latest / "adapter"), is_trainable=True
                )
            else:
                self.model = get_peft_model(
                    model,
                    PeftLora(
                        r=lora.r,
                        lora_alpha=lora.alpha,
                        lora_dropout=0.0,
                        target_modules=lora.target_modules,
                        task_type="CAUSAL_LM",
                    ),
                )
            for param in self.model.parameters():
                if param.requires_grad:
                    param.data = param.data.to(self.precision.trainable)
        self.model.eval()

    # --- the loop -----------------------------------------------------------------------
    def train(self) -> None:
        try:
            while self.step < self.config.steps:
                self.train_step()
        finally:
            self.close()

    def train_step(self) -> dict | None:
        """One step; None when it ended without an update (then it does not count)."""
        started = time.monotonic()
        kept, stats, counts = self.collect()
        episodes = counts["episodes"]
        if episodes and counts["infra"] == len(episodes):
            first = next(r.episode.infra_error for r in episodes)
            raise TrainingError(
                f"every one of the {len(episodes)} episodes of step {self.step + 1} failed for "
                f"infrastructure reasons (first: {first}); check the environment (Docker "
                "engine, images) and rerun with --resume"
            )
        if not kept:
            self.empty_steps += 1
            self.say(
                f"step {self.step + 1}: no group had a learning signal after "
                f"{counts['resamples']} resamples; not counted "
                f"({self.empty_steps} of {self.config.max_empty_steps} in a row)"
            )
            if self.empty_steps >= self.config.max_empty_steps:
                raise TrainingError(
                    f"{self.empty_steps} steps in a row without a single group whose rewards "
                    "differ: the tasks are all too hard or all too easy for this policy "
                    "(measure them with `factory calibrate`), or raise group_size"
                )
            return None
        update = self.update(kept)
        self.step += 1
        rewards = [r.episode.reward for r in episodes if r.episode.reward is not None]
        row = {
            "step": self.step,
            "reward_mean": _mean(rewards),
            "reward_std": _std(rewards),
            "pass_rate": _mean([1.0 if r >= 1 else 0.0 for r in rewards]),
            "episodes": len(episodes),
            "infra_failures": counts["infra"],
            "policy_failures": counts["policy"],
            "groups_used": counts["groups_used"],
            "groups_skipped": counts["groups_skipped"],
            "resamples": counts["resamples"],
            "empty_steps_before": self.empty_steps,
            **update,
            "policy_tokens": sum(r.trace.policy_tokens for r in kept),
            "truncated_replies": sum(r.trace.truncated_turns for r in episodes),
            "tokens_per_sec": stats["generated_tokens"] / max(stats["generate_sec"], 1e-9),
            "rollout_sec": stats["rollout_sec"],
            "generate_sec": stats["generate_sec"],
            "env_sec": stats["env_sec"],
            "step_sec": time.monotonic() - started,
        }
        self.empty_steps = 0
        if self.config.eval_every and self.test_tasks and self.step % self.config.eval_every == 0:
            row["eval_pass_at_1"] = self.evaluate(k=1)["pass_at_1"]
        self.metrics.add(row)
        self.say(
            f"step {self.step}/{self.config.steps}: reward {row['reward_mean']:.3f} "
            f"pass {row['pass_rate']:.2f} loss {row['loss']:.4f} groups {row['groups_used']} "
            f"(skipped {row['groups_skipped']}, infra {row['infra_failures']}, "
            f"policy-broken {row['policy_failures']}) "
            f"rollout {row['rollout_sec']:.1f}s update {row['update_sec']:.1f}s"
        )
        if self.step % self.config.checkpoint_every == 0 or self.step == self.config.steps:
            self.save_checkpoint()
        return row

    def collect(self) -> tuple[list[Rollout], dict, dict]:
        """Episodes for this step, and the rollouts that carry a learning signal."""
        config = self.config
        rng = random.Random(f"{config.seed}:{self.step}:{self.empty_steps}")
        counts = {
            "episodes": [],
            "infra": 0,
            "policy": 0,
            "groups_used": 0,
            "groups_skipped": 0,
            "resamples": 0,
        }
        total = {"generated_tokens": 0, "generate_sec": 0.0, "env_sec": 0.0, "rollout_sec": 0.0}
        kept: list[Rollout] = []
        for attempt in range(config.max_resample + 1):
            counts["resamples"] = attempt
            tasks = rng.sample(self.train_tasks, min(config.tasks_per_step, len(self.train_tasks)))
            rollouts, stats = self.rollouts(tasks)
            for key in total:
                total[key] += stats.get(key, 0.0)
            counts["episodes"] += rollouts
            kept += self.advantaged(rollouts, counts)
            if kept:
                break
        return kept, total, counts

    def rollouts(self, tasks: list[SuiteTask]) -> tuple[list[Rollout], dict]:
        log_dir = self.out / "episodes" / f"step-{self.step + 1:05d}"
        episodes, groups = [], []
        for index, entry in enumerate(tasks):
            for _ in range(self.config.group_size):
                episodes.append(self.backend.episode(entry, self.harness, log_dir))
                groups.append(index)
        return self.engine.run(episodes, groups)

    def advantaged(self, rollouts: list[Rollout], counts: dict) -> list[Rollout]:
        """Drop infra failures; keep the groups the algorithm learns from; attach advantages."""
        kept = []
        for group in sorted({r.group for r in rollouts}):
            members = [r for r in rollouts if r.group == group]
            healthy = [r for r in members if r.episode.reward is not None]
            counts["infra"] += len(members) - len(healthy)
            counts["policy"] += sum(1 for r in healthy if r.episode.policy_error)
            rewards = [r.episode.reward for r in healthy]
            if not self.algorithm.keeps(rewards):
                counts["groups_skipped"] += 1
                continue
            counts["groups_used"] += 1
            for rollout, advantage in zip(healthy, self.algorithm.advantages(rewards), strict=True):
                rollout.advantage = advantage
                kept.append(rollout)
        return kept

    def update(self, kept: list[Rollout]) -> dict:
        """``ppo_epochs`` passes of the algorithm's loss over the kept rollouts. The ratio's
        denominator is the sampler's own log-prob of each token (no extra scoring pass)."""
        import torch

        started = time.monotonic()
        config = self.config
        size = config.micro_batch_size
        batches = [
            make_batch(
                [r.trace for r in kept[i : i + size]],
                [r.advantage for r in kept[i : i + size]],
                self.tokenizer.pad_token_id,
                self.device,
            )
            for i in range(0, len(kept), size)
        ]
        total_tokens = float(sum(b.loss_mask.sum() for b in batches)) or 1.0
        refs: list = [None] * len(batches)
        if config.kl_coef > 0:
            with torch.no_grad(), self._autocast():
                refs = [self._reference_logprobs(b) for b in batches]
        sums = {"loss": 0.0, "kl_sum": 0.0, "clip_frac_sum": 0.0, "gap": 0.0}
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        for epoch in range(config.ppo_epochs):
            self.optimizer.zero_grad(set_to_none=True)
            for batch, ref_lp in zip(batches, refs, strict=True):
                with self._autocast():
                    new_lp = token_logprobs(self.model, batch, config.sampling)
                terms = self.algorithm.loss(
                    new_lp, batch.sampled_logps, batch.advantages, batch.loss_mask, ref_lp
                )
                (terms.total / total_tokens).backward()
                sums["loss"] += float(terms.total.detach()) / total_tokens
                sums["kl_sum"] += terms.stats.get("kl_sum", 0.0)
                sums["clip_frac_sum"] += terms.stats.get("clip_frac_sum", 0.0)
                if epoch == 0:
                    gap = (new_lp.detach() - batch.sampled_logps).abs() * batch.loss_mask
                    sums["gap"] += float(gap.sum())
            torch.nn.utils.clip_grad_norm_(trainable, config.grad_clip)
            self.optimizer.step()
        passes = config.ppo_epochs
        return {
            "loss": sums["loss"] / passes,
            "kl": sums["kl_sum"] / total_tokens / passes,
            "clip_frac": sums["clip_frac_sum"] / total_tokens / passes,
            "sampler_gap": sums["gap"] / total_tokens,
            "update_sec": time.monotonic() - started,
        }

    def _reference_logprobs(self, batch):
        if self.config.lora.enabled:
            with self.model.disable_adapter():
                return token_logprobs(self.model, batch, self.config.sampling)
        return token_logprobs(self.reference, batch, self.config.sampling)

    def _autocast(self):
        return self.precision.context(self.device.type)

    # --- evaluation, checkpoints ----------------------------------------------------------
    def evaluate(self, k: int = 1) -> dict:
        from factory_train.evaluate import evaluate_tasks

        return evaluate_tasks(
            self.engine,
            self.backend,
            self.test_tasks,
            self.harness,
            k=k,
            log_dir=self.out / "eval" / f"step-{self.step:05d}",
        )

    def save_checkpoint(self) -> Path:
        return save_checkpoint(
            self.out,
            self.step,
            self.model,
            self.tokenizer,
            self.optimizer,
            self.config,
            lora=self.config.lora.enabled,
        )

    def close(self) -> None:
        if hasattr(self, "engine"):
            self.engine.close()
        if self.backend is not None:
            self.backend.close()
        if hasattr(self, "metrics"):
            self.metrics.close()


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _std(values: list[float]) -> float:
    if not values:
        return 0.0
    mean = _mean(values)
    return (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
