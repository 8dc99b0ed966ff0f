"""The GRPO loop, in one readable place.

Each step: sample tasks from the training families; run ``group_size`` episodes per task in
the tasks' own containers (batched generation, commands in parallel); drop episodes that failed
for infrastructure reasons; skip groups whose rewards are all equal (resampling tasks up to
``max_resample`` times when nothing is left); give every episode its group-normalised
advantage; take one clipped policy-gradient update over the policy's own tokens; log; and
checkpoint. A killed run resumes from its last checkpoint with ``--resume``.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from factory.agent.actions import ActionFormat
from factory.agent.harness import Episode, HarnessConfig
from factory.agent.suite import SuiteTask, load_suite_tasks, split_suite
from factory.images.task_image import TaskImageBuilder
from factory.runtime import DockerRuntime, new_run_id
from factory_train.config import TrainConfig
from factory_train.generation import HFGenerator
from factory_train.grpo import group_advantages, grpo_loss, has_signal, make_batch, token_logprobs
from factory_train.metrics import MetricsLog
from factory_train.models import load_policy, resolve_model
from factory_train.rollout import Rollout, RolloutEngine

log = logging.getLogger(__name__)
KEEP_CHECKPOINTS = 2


def pick_device_and_dtype(setting: str):
    """(device, parameter dtype, autocast dtype). On CPU the parameters stay fp32 and matmuls
    run in bf16 under autocast (about 2x faster on these CPUs); on GPU everything is bf16."""
    import torch

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    if setting == "fp32":
        return device, torch.float32, None
    if cuda:
        return device, torch.bfloat16, torch.bfloat16
    return device, torch.float32, torch.bfloat16


class Trainer:
    def __init__(
        self, suite: Path, config: TrainConfig, out: Path, *, resume: bool = False, say=print
    ) -> None:
        self.suite = suite
        self.config = config
        self.out = out
        self.resume = resume
        self.say = say
        self.step = 0

    # --- set-up -------------------------------------------------------------------------
    def setup(self) -> None:
        import torch

        config = self.config
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "config.json").write_text(config.model_dump_json(indent=2))
        self.device, param_dtype, self.autocast = pick_device_and_dtype(config.dtype)
        latest = self._latest_checkpoint() if self.resume else None
        model_path = latest / "model" if latest else resolve_model(config.model)
        self.base_model_path = resolve_model(config.model)
        self.say(f"model: {model_path} on {self.device}")
        self.model, self.tokenizer = load_policy(
            self.base_model_path if config.lora.enabled else model_path,
            device=self.device,
            dtype=param_dtype,
        )
        if config.lora.enabled:
            self._wrap_lora(latest)
        self.model.train()
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            params, lr=config.learning_rate, weight_decay=config.weight_decay
        )
        self.reference = None
        if config.kl_coef > 0 and not config.lora.enabled:
            self.reference, _ = load_policy(
                self.base_model_path, device=self.device, dtype=param_dtype
            )
            self.reference.eval().requires_grad_(False)
        if latest:
            state = json.loads((latest / "state.json").read_text())
            self.step = state["step"]
            optimizer_file = latest / "optimizer.pt"
            if optimizer_file.is_file():
                self.optimizer.load_state_dict(torch.load(optimizer_file, map_location=self.device))
            random.setstate(_tuple_state(state["python_rng"]))
            torch.set_rng_state(torch.tensor(state["torch_rng"], dtype=torch.uint8))
            self.say(f"resumed from {latest.name} (step {self.step})")
        entries = load_suite_tasks(self.suite)
        self.train_tasks, self.test_tasks = split_suite(
            entries,
            test_families=config.test_families,
            test_fraction=config.test_fraction,
            seed=config.seed,
            by=config.split,
        )
        self.say(
            f"{len(self.train_tasks)} training tasks, {len(self.test_tasks)} held out "
            f"(families: {sorted({t.family for t in self.test_tasks})})"
        )
        self.runtime = DockerRuntime(new_run_id("train"), pool_size=4 * config.concurrency)
        self.runtime.ping()
        builder = TaskImageBuilder(self.runtime)
        with ThreadPoolExecutor(max_workers=2) as pool:
            refs = list(
                pool.map(lambda e: builder.ensure(e.task).ref, self.train_tasks + self.test_tasks)
            )
        self.images = {
            e.task.id: ref for e, ref in zip(self.train_tasks + self.test_tasks, refs, strict=True)
        }
        self.harness = HarnessConfig(
            max_turns=config.max_turns,
            command_timeout_sec=config.command_timeout_sec,
            max_observation_chars=config.max_observation_chars,
            action_format=ActionFormat(config.action_format),
        )
        self.generator = HFGenerator(
            self.model,
            self.tokenizer,
            max_new_tokens=config.max_new_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            autocast_dtype=self.autocast,
        )
        if config.backend == "vllm" or (
            config.backend == "auto" and self.device.type == "cuda" and _has_vllm()
        ):
            from factory_train.generation import VLLMGenerator

            self.generator = VLLMGenerator(
                self.model,
                self.tokenizer,
                str(model_path),
                max_new_tokens=config.max_new_tokens,
                temperature=config.temperature,
                top_p=config.top_p,
                seed=config.seed,
            )
        self.engine = RolloutEngine(
            self.generator,
            self.tokenizer,
            max_episode_tokens=config.max_episode_tokens,
            concurrency=config.concurrency,
            reply_prefix=config.reply_prefix,
        )
        self.metrics = MetricsLog(self.out, self.out.name)
        if latest:
            self.metrics.truncate_to(self.step)

    def _wrap_lora(self, latest: Path | None) -> None:
        from peft import LoraConfig as PeftLora
        from peft import PeftModel, get_peft_model

        lora = self.config.lora
        if latest:
            self.model = PeftModel.from_pretrained(
                self.model, str(latest / "model"), is_trainable=True
            )
        else:
            self.model = get_peft_model(
                self.model,
                PeftLora(
                    r=lora.r,
                    lora_alpha=lora.alpha,
                    lora_dropout=lora.dropout,
                    target_modules=lora.target_modules,
                    task_type="CAUSAL_LM",
                ),
            )

    # --- the loop -----------------------------------------------------------------------
    def train(self) -> None:
        try:
            while self.step < self.config.steps:
                self.train_step()
        finally:
            self.close()

    def train_step(self) -> dict:
        started = time.monotonic()
        kept, stats, counts = self.collect()
        update = self.update(kept) if kept else {"loss": None, "kl": None, "clip_frac": None}
        self.step += 1
        rewards = [r.episode.reward for r in counts["episodes"] if r.episode.reward is not None]
        row = {
            "step": self.step,
            "reward_mean": _mean(rewards),
            "reward_std": _std(rewards),
            "pass_rate": _mean([1.0 if r >= 1 else 0.0 for r in rewards]),
            "episodes": len(counts["episodes"]),
            "infra_failures": counts["infra"],
            "groups_used": counts["groups_used"],
            "groups_skipped": counts["groups_skipped"],
            "resamples": counts["resamples"],
            **update,
            "policy_tokens": sum(r.trace.policy_tokens for r in kept),
            "tokens_per_sec": stats["generated_tokens"] / max(stats["generate_sec"], 1e-9),
            "rollout_sec": stats["rollout_sec"],
            "generate_sec": stats["generate_sec"],
            "env_sec": stats["env_sec"],
            "update_sec": update.get("update_sec", 0.0),
            "step_sec": time.monotonic() - started,
        }
        if self.config.eval_every and self.test_tasks and self.step % self.config.eval_every == 0:
            row["eval_pass_at_1"] = self.evaluate(k=1)["pass_at_1"]
        self.metrics.add(row)
        self.say(
            f"step {self.step}/{self.config.steps}: reward {row['reward_mean']:.3f} "
            f"pass {row['pass_rate']:.2f} loss {_fmt(row['loss'])} groups {row['groups_used']} "
            f"(skipped {row['groups_skipped']}, infra {row['infra_failures']}) "
            f"rollout {row['rollout_sec']:.1f}s update {row['update_sec']:.1f}s"
        )
        if self.step % self.config.checkpoint_every == 0 or self.step == self.config.steps:
            self.save_checkpoint()
        return row

    def collect(self) -> tuple[list[Rollout], dict, dict]:
        """Episodes for this step, and the rollouts that carry a learning signal."""
        config = self.config
        rng = random.Random(config.seed * 1_000_003 + self.step)
        counts = {"episodes": [], "infra": 0, "groups_used": 0, "groups_skipped": 0, "resamples": 0}
        total = {"generated_tokens": 0, "generate_sec": 0.0, "env_sec": 0.0, "rollout_sec": 0.0}
        kept: list[Rollout] = []
        for attempt in range(config.max_resample + 1):
            tasks = rng.sample(self.train_tasks, min(config.tasks_per_step, len(self.train_tasks)))
            rollouts, stats = self.rollouts(tasks)
            for key in total:
                total[key] += stats.get(key, 0.0)
            counts["episodes"] += rollouts
            kept += self.advantaged(rollouts, counts)
            if kept:
                break
            counts["resamples"] = attempt + 1
        return kept, total, counts

    def rollouts(self, tasks: list[SuiteTask]) -> tuple[list[Rollout], dict]:
        episodes, groups = [], []
        for index, entry in enumerate(tasks):
            for _ in range(self.config.group_size):
                log_dir = self.out / "episodes" / f"step-{self.step + 1:05d}"
                episodes.append(
                    Episode(
                        self.runtime, entry.task, self.images[entry.task.id], self.harness, log_dir
                    )
                )
                groups.append(index)
        return self.engine.run(episodes, groups)

    def advantaged(self, rollouts: list[Rollout], counts: dict) -> list[Rollout]:
        """Drop infra failures; keep groups with reward variance; attach advantages."""
        kept = []
        for group in sorted({r.group for r in rollouts}):
            members = [r for r in rollouts if r.group == group]
            healthy = [r for r in members if r.episode.infra_error is None]
            counts["infra"] += len(members) - len(healthy)
            rewards = [r.episode.reward for r in healthy]
            if len(healthy) < 2 or (self.config.skip_zero_variance and not has_signal(rewards)):
                counts["groups_skipped"] += 1
                continue
            counts["groups_used"] += 1
            for rollout, advantage in zip(
                healthy, group_advantages(rewards, scale=self.config.scale_rewards), strict=True
            ):
                rollout.advantage = advantage
                kept.append(rollout)
        return kept

    def update(self, kept: list[Rollout]) -> dict:
        """One clipped policy-gradient update (``ppo_epochs`` passes) over the kept rollouts."""
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
        with torch.no_grad(), self._autocast():
            old = [token_logprobs(self.model, b) for b in batches]
            refs = (
                [self._reference_logprobs(b) for b in batches]
                if config.kl_coef > 0
                else [None] * len(batches)
            )
        loss_value, kl_sum, clip_sum = 0.0, 0.0, 0.0
        for _ in range(config.ppo_epochs):
            self.optimizer.zero_grad(set_to_none=True)
            for batch, old_lp, ref_lp in zip(batches, old, refs, strict=True):
                with self._autocast():
                    new_lp = token_logprobs(self.model, batch)
                loss_sum, _tokens, stats = grpo_loss(
                    new_lp,
                    old_lp,
                    batch.advantages,
                    batch.loss_mask,
                    clip_epsilon=config.clip_epsilon,
                    ref_logps=ref_lp,
                    kl_coef=config.kl_coef,
                )
                (loss_sum / total_tokens).backward()
                loss_value += float(loss_sum.detach()) / total_tokens
                kl_sum += stats["kl_sum"]
                clip_sum += stats["clip_frac_sum"]
            torch.nn.utils.clip_grad_norm_(
                [p for p in self.model.parameters() if p.requires_grad], config.grad_clip
            )
            self.optimizer.step()
        self.generator.sync()
        passes = config.ppo_epochs
        return {
            "loss": loss_value / passes,
            "kl": kl_sum / total_tokens / passes,
            "clip_frac": clip_sum / total_tokens / passes,
            "update_sec": time.monotonic() - started,
        }

    def _reference_logprobs(self, batch):
        if self.config.lora.enabled:
            with self.model.disable_adapter():
                return token_logprobs(self.model, batch)
        return token_logprobs(self.reference, batch)

    def _autocast(self):
        import contextlib

        import torch

        if self.autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.autocast)

    # --- evaluation, checkpoints ----------------------------------------------------------
    def evaluate(self, k: int = 1) -> dict:
        from factory_train.evaluate import evaluate_tasks

        return evaluate_tasks(
            self.engine,
            self.runtime,
            self.test_tasks,
            self.images,
            self.harness,
            k=k,
            log_dir=self.out / "eval" / f"step-{self.step:05d}",
        )

    def save_checkpoint(self) -> Path:
        import torch

        target = self.out / "checkpoints" / f"step-{self.step:05d}"
        staging = target.with_name(target.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        self.model.save_pretrained(str(staging / "model"), safe_serialization=True)
        self.tokenizer.save_pretrained(str(staging / "model"))
        torch.save(self.optimizer.state_dict(), staging / "optimizer.pt")
        (staging / "state.json").write_text(
            json.dumps(
                {
                    "step": self.step,
                    "python_rng": _list_state(random.getstate()),
                    "torch_rng": torch.get_rng_state().tolist(),
                    "config": self.config.model_dump(),
                }
            )
        )
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        for old in sorted((self.out / "checkpoints").glob("step-?????"))[:-KEEP_CHECKPOINTS]:
            shutil.rmtree(old, ignore_errors=True)
        return target

    def _latest_checkpoint(self) -> Path | None:
        found = (
            sorted((self.out / "checkpoints").glob("step-?????"))
            if (self.out / "checkpoints").is_dir()
            else []
        )
        return found[-1] if found else None

    def close(self) -> None:
        if hasattr(self, "engine"):
            self.engine.close()
        if hasattr(self, "runtime"):
            self.runtime.close()
        if hasattr(self, "metrics"):
            self.metrics.close()


def _has_vllm() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _std(values: list[float]) -> float:
    if not values:
        return 0.0
    mean = _mean(values)
    return (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.4f}"


def _list_state(state):
    return [list(s) if isinstance(s, tuple) else s for s in state]


def _tuple_state(state):
    return tuple(tuple(s) if isinstance(s, list) else s for s in state)
