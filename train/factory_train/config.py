"""Training configuration (`factory train --config train.yaml`), one field per knob."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from factory.agent.backends import EnvironmentKind
from factory.errors import TaskFormatError


class DType(str, Enum):
    AUTO = "auto"
    BF16 = "bf16"
    FP32 = "fp32"


class LoraConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    """Train LoRA adapters (peft) instead of all weights."""
    r: int = Field(default=16, ge=1)
    alpha: int = Field(default=32, ge=1)
    dropout: float = 0.0
    """Must stay 0: the policy-gradient ratio compares the trainer's log-probs with the
    sampler's, and dropout would make them differ on identical weights."""
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"]
    )

    @field_validator("dropout")
    @classmethod
    def _no_dropout(cls, value: float) -> float:
        if value != 0:
            raise ValueError(
                "LoRA dropout must be 0 in RL training: the ratio of the trainer's to the "
                "sampler's log-probs must be 1 on unchanged weights, and dropout breaks that"
            )
        return value


class TrainConfig(BaseModel):
    """RL (GRPO by default) over a suite, with multi-turn rollouts in the tasks' environments."""

    model_config = ConfigDict(extra="forbid")

    model: str = "SmolLM2-135M-Instruct"
    """Local path (HF folder or .gguf) or a known local name; never downloaded."""
    seed: int = 0
    steps: int = Field(default=20, ge=1)
    """Optimizer steps (each one: tasks_per_step x group_size episodes, then an update)."""
    tasks_per_step: int = Field(default=4, ge=1)
    group_size: int = Field(default=4, ge=2)
    """G: episodes per task; advantages are normalised within the group."""
    max_turns: int = Field(default=3, ge=1)
    max_new_tokens: int = Field(default=96, ge=8)
    """Tokens the policy may generate per turn."""
    max_episode_tokens: int = Field(default=2048, ge=64)
    """Prompt + all turns; an episode that reaches it ends."""
    temperature: float = Field(default=1.0, gt=0)
    """Sampling temperature; the trainer scores tokens under the same distribution."""
    top_p: float = Field(default=1.0, gt=0, le=1)
    """Nucleus sampling (1: off); shared by the sampler and the scorer."""
    top_k: int = Field(default=0, ge=0)
    """Sample among the k most likely tokens (0: off); shared by the sampler and the scorer."""
    learning_rate: float = Field(default=1e-5, gt=0)
    weight_decay: float = Field(default=0.0, ge=0)
    lora: LoraConfig = Field(default_factory=LoraConfig)
    algorithm: str = "grpo"
    """How rewards become advantages and what the loss is: grpo or rloo
    (factory_train.algorithms; train/README.md says how to add one)."""
    clip_epsilon: float = Field(default=0.2, gt=0)
    kl_coef: float = Field(default=0.0, ge=0)
    """KL penalty to the initial policy (0 = no reference model)."""
    ppo_epochs: int = Field(default=1, ge=1)
    """Passes over each batch of rollouts (ratio clipping matters from the second on)."""
    micro_batch_size: int = Field(default=4, ge=1)
    """Sequences per forward/backward; gradients accumulate over the batch."""
    grad_clip: float = Field(default=1.0, gt=0)
    scale_rewards: bool = True
    """Divide advantages by the group's reward std (GRPO); False: only subtract the mean."""
    dtype: DType = DType.AUTO
    """auto or bf16: trainable weights and optimizer state in fp32, forward passes in bf16
    (autocast; frozen weights, e.g. a LoRA base or the reference model, in bf16 on GPUs);
    fp32: everything in fp32."""
    environment: EnvironmentKind = EnvironmentKind.DOCKER
    """Where episodes run: docker (each task's own container; any task) or in-process (tool
    tasks only: the task's tool domain called in this process, no Docker, no shell)."""
    action_format: str = "fenced"
    """fenced (```bash blocks) or tools (tool calls: bash and the task's MCP tools, rendered
    through the chat template, or described in the system prompt when the template has no tool
    support; the model calls them in <tool_call> blocks; endpoints get them as tools=)."""
    reply_prefix: str = ""
    """Text each policy turn starts with, given rather than generated: "```bash\n" lets a small
    model that rarely opens a fenced block still act (it only completes the command)."""
    command_timeout_sec: float = Field(default=20.0, gt=0)
    max_observation_chars: int = Field(default=1500, ge=100)
    concurrency: int = Field(default=8, ge=1)
    """Containers started / commands run in parallel."""
    split: str = "family"
    """How to hold out evaluation tasks: 'family' (generalisation) or 'task' (one-family suites)."""
    test_families: list[str] = Field(default_factory=list)
    """Families held out for evaluation (default: test_fraction of them, by a seeded draw)."""
    test_fraction: float = Field(default=0.25, ge=0, lt=1)
    split_seed: int | None = None
    """Seed of the held-out draw (default: ``seed``); fix it to compare training seeds on
    the same held-out tasks."""
    skip_zero_variance: bool = True
    """Dynamic sampling: groups whose rewards are all equal are left out of the update."""
    max_resample: int = Field(default=3, ge=0)
    """Dynamic sampling: extra rounds of tasks when every group had zero reward variance."""
    max_empty_steps: int = Field(default=5, ge=1)
    """Steps in a row that end without an update (no group kept after resampling) before
    the run stops with an error; such steps are not counted and not checkpointed."""
    checkpoint_every: int = Field(default=5, ge=1)
    eval_every: int = Field(default=0, ge=0)
    """Evaluate on held-out tasks every N steps (0: never during training)."""

    @model_validator(mode="before")
    @classmethod
    def _no_vllm_backend(cls, data):
        if isinstance(data, dict) and "backend" in data:
            raise ValueError(
                "backend: the bundled trainer generates with transformers (CPU or one GPU); "
                "for vLLM at scale train with TRL's GRPOTrainer (train/README.md, "
                "factory_train.trl_env); remove the backend setting"
            )
        return data

    @field_validator("algorithm")
    @classmethod
    def _known_algorithm(cls, value: str) -> str:
        from factory_train.algorithms import ALGORITHMS

        if value not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {value!r}; known: {', '.join(sorted(ALGORITHMS))}")
        return value

    @property
    def sampling(self):
        """The sampling distribution, shared by sampler and scorer."""
        from factory_train.sampling import SamplingParams

        return SamplingParams(self.temperature, self.top_p, self.top_k)


def load_train_config(path: Path | None, **overrides: object) -> TrainConfig:
    data: dict = {}
    if path is not None:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise TaskFormatError(path, f"cannot read the training config ({exc})") from None
        if not isinstance(data, dict):
            raise TaskFormatError(path, "must be a mapping of settings")
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise TaskFormatError(
            path or "train config", first.get("msg", ""), field=loc or None
        ) from None
