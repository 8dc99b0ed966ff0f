"""TRL's GRPOTrainer over a factory suite: the path for GPUs at scale (vLLM colocated the way
TRL runs it, many processes through accelerate), with factory's episodes as the environment.

TRL's multi-turn API (``environment_factory``, experimental in TRL) builds one environment
object per rollout, calls its ``reset(**row)``, offers its public methods to the model as
tools, and asks ``get_reward()`` when the rollout ends. :class:`SuiteEnvironment` is that object
over a suite: ``reset(task_id=...)`` starts an episode of the task (its own container, or the
in-process tool domain), ``bash(command)`` runs one command there, ``get_reward()`` runs the
task's verifier. The prompts are the harness's (system prompt + instruction, tool-call format).

    from trl import GRPOTrainer
    from factory_train.trl_env import SuiteSource, grpo_config

    source = SuiteSource("suites/tools", config)            # config: a TrainConfig
    trainer = GRPOTrainer(
        model=str(model_path), args=grpo_config(config, "runs/trl"),
        train_dataset=source.dataset(), processing_class=source.tokenizer(model_path),
        environment_factory=source.environment, callbacks=[source.callback()],
    )
    trainer.train(); source.close()

TRL cannot leave an episode out of its update, so an infrastructure failure scores 0 there;
``source.infra_failures`` counts them (and ``policy_failures`` the episodes whose own command
stopped their environment), and a batch in which every episode is an infrastructure failure
raises :class:`factory.errors.TrainingError`.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

from factory.agent.actions import ActionFormat
from factory.agent.backends import EpisodeBackend, make_backend
from factory.agent.harness import Episode, HarnessConfig
from factory.errors import FactoryError, TrainingError
from factory_train.config import TrainConfig
from factory_train.trainer import split_tasks

TESTED_TRL = (">=1.16.0", "<1.17")
"""The TRL versions this module is tested with (pyproject's `trl` extra pins the same)."""


def check_trl_version() -> str:
    """The installed TRL version; FactoryError outside the tested range."""
    from packaging.version import Version

    try:
        import trl
    except ImportError:
        raise FactoryError("TRL is not installed: pip install -e '.[trl]'") from None
    version = Version(trl.__version__)
    low, high = (Version(bound.lstrip("<>=")) for bound in TESTED_TRL)
    if not low <= version < high:
        raise FactoryError(
            f"factory_train's TRL integration is tested with trl {TESTED_TRL[0]},{TESTED_TRL[1]}; "
            f"trl {version} is installed (its completion and environment formats differ): "
            "pip install -e '.[trl]'"
        )
    return str(version)


class SuiteSource:
    """The tasks of a suite's training split, where their episodes run, and the counters that
    the environments share. One per training run."""

    def __init__(
        self,
        suite: Path | str,
        config: TrainConfig,
        *,
        backend: EpisodeBackend | None = None,
        split: str = "train",
    ) -> None:
        check_trl_version()
        self.config = config
        train, test = split_tasks(Path(suite), config)
        self.tasks = {
            e.task.id: e for e in {"train": train, "test": test, "all": train + test}[split]
        }
        if not self.tasks:
            raise FactoryError(f"{suite}: the {split} split has no tasks")
        self.harness = HarnessConfig(
            max_turns=config.max_turns,
            command_timeout_sec=config.command_timeout_sec,
            max_observation_chars=config.max_observation_chars,
            action_format=ActionFormat.TOOLS,
        )
        self.backend = backend or make_backend(
            config.environment, run_prefix="trl", concurrency=config.concurrency
        )
        self.backend.prepare(list(self.tasks.values()))
        self.episodes = 0
        self.infra_failures = 0
        self.policy_failures = 0
        self._batch_infra: list[bool] = []
        self._lock = threading.Lock()

    def episode(self, task_id: str) -> Episode:
        try:
            entry = self.tasks[task_id]
        except KeyError:
            raise FactoryError(f"task {task_id!r} is not in this suite's split") from None
        return self.backend.episode(entry, self.harness)

    def dataset(self, task_ids: list[str] | None = None, repeat: int = 1):
        """A `datasets.Dataset`: the conversation before the first turn (``prompt``) and the
        ``task_id`` that ``reset`` receives."""
        from datasets import Dataset

        ids = task_ids or sorted(self.tasks)
        rows = [{"prompt": self.episode(i).opening(), "task_id": i} for i in ids] * repeat
        return Dataset.from_list(rows)

    def environment(self) -> SuiteEnvironment:
        """TRL's ``environment_factory``."""
        return SuiteEnvironment(self)

    def tokenizer(self, model_path: Path | str):
        """The model's tokenizer, with a chat template that can render tool calls."""
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(model_path))
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        return with_tool_template(tokenizer)

    def record(self, result) -> None:
        with self._lock:
            self.episodes += 1
            self.infra_failures += int(result.reward is None)
            self.policy_failures += int(bool(result.policy_error))
            self._batch_infra.append(result.reward is None)

    def end_batch(self) -> None:
        """A batch lost entirely to infrastructure stops the run (TrainingError)."""
        with self._lock:
            lost, self._batch_infra = self._batch_infra, []
        if lost and all(lost):
            raise TrainingError(
                f"every one of the {len(lost)} episodes of a batch failed for infrastructure "
                "reasons; check the environment (Docker engine, images)"
            )

    def callback(self):
        """A TrainerCallback that calls :meth:`end_batch` after every optimizer step."""
        from transformers import TrainerCallback

        source = self

        class EndBatch(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                source.end_batch()

        return EndBatch()

    def close(self) -> None:
        self.backend.close()


class SuiteEnvironment:
    """One rollout's environment (see the module docstring). Its only public methods are
    TRL's hooks and the ``bash`` tool."""

    def __init__(self, source: SuiteSource) -> None:
        self._source = source
        self._episode: Episode | None = None
        self._finished = True

    def reset(self, task_id: str, **_row) -> None:
        self._close()
        self._episode = self._source.episode(task_id)
        self._episode.start()
        self._finished = False
        return None  # the dataset's prompt already holds the instruction

    def bash(self, command: str) -> str:
        """Run a bash command in the task's environment and return its output.

        Args:
            command: The command to run (in a fresh bash shell, in the working directory).
        """
        episode = self._episode
        if episode is None or self._finished:
            return "error: no episode is running"
        if episode.done:
            return "error: the episode is over (turn limit reached); reply without a tool call"
        call = {
            "id": f"call-{len(episode.turns)}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": str(command)})},
        }
        observation = episode.observe("", [call])
        return observation if observation is not None else "(the episode ended)"

    def get_reward(self) -> float | None:
        """The verifier's reward (None: the episode failed for infrastructure reasons)."""
        if self._episode is None or self._finished:
            return None
        result = self._episode.finish()
        self._finished = True
        self._source.record(result)
        return result.reward

    def _close(self) -> None:
        if self._episode is not None and not self._finished:
            self._episode.finish()
            self._finished = True


def with_tool_template(tokenizer):
    """A ChatML model whose own template cannot render tool calls (SmolLM2's) gets TRL's
    ChatML tool-calling template (the Qwen2.5 one: ``<tool_call>{json}</tool_call>``), which
    TRL also knows how to parse; other templates must support tool calls already."""
    from trl.chat_template_utils import qwen2_5_chat_template, supports_tool_calling

    if supports_tool_calling(tokenizer):
        return tokenizer
    if "<|im_start|>" not in (tokenizer.chat_template or ""):
        raise FactoryError(
            "the model's chat template cannot render tool calls, which TRL's environments need; "
            "use a tool-calling model, or set a tool-calling chat template on its tokenizer"
        )
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


def grpo_config(config: TrainConfig, out: Path | str, **overrides):
    """TRL's GRPOConfig with the bundled trainer's settings: same group size, batch, sampling
    (temperature, top-p, top-k), learning rate, clipping, KL, token-level loss, precision."""
    import torch
    from trl import GRPOConfig

    if config.algorithm != "grpo":
        raise FactoryError(
            f"TRL runs GRPO; algorithm {config.algorithm!r} is the bundled trainer's"
        )
    episodes = config.tasks_per_step * config.group_size
    micro = math.gcd(config.micro_batch_size, episodes) or 1
    cuda = torch.cuda.is_available()
    settings = dict(
        output_dir=str(out),
        use_cpu=not cuda,
        bf16=config.dtype.value != "fp32" and (not cuda or torch.cuda.is_bf16_supported()),
        seed=config.seed,
        max_steps=config.steps,
        learning_rate=config.learning_rate,
        lr_scheduler_type="constant",
        weight_decay=config.weight_decay,
        max_grad_norm=config.grad_clip,
        num_generations=config.group_size,
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=episodes // micro,
        max_completion_length=config.max_new_tokens * config.max_turns
        + (config.max_turns - 1) * (config.max_observation_chars // 3),
        max_tool_calling_iterations=config.max_turns,
        temperature=config.temperature,
        top_p=config.top_p,
        top_k=config.top_k,
        repetition_penalty=1.0,
        num_iterations=config.ppo_epochs,
        epsilon=config.clip_epsilon,
        beta=config.kl_coef,
        scale_rewards="group" if config.scale_rewards else "none",
        loss_type="dapo",
        disable_dropout=True,
        gradient_checkpointing=False,  # the bundled trainer keeps activations too
        logging_steps=1,
        save_strategy="no",
        report_to=[],
    )
    if cuda and _has_vllm():
        settings.update(use_vllm=True, vllm_mode="colocate")
    settings.update(overrides)
    return GRPOConfig(**settings)


def _has_vllm() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None
