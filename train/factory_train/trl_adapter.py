"""A suite as single-turn rewards for TRL's GRPOTrainer: a dataset of prompts, and a reward
function that runs each completion in the task's environment and returns its verifier reward.
(Multi-turn training with TRL: :mod:`factory_train.trl_env`.)

    from trl import GRPOTrainer
    from factory_train.trl_adapter import SuiteReward, suite_dataset

    reward = SuiteReward("suites/quickstart", reply_prefix="```bash\\n")
    trainer = GRPOTrainer(model=path, reward_funcs=reward,
                          train_dataset=suite_dataset(reward, tokenizer), args=GRPOConfig(...))
    trainer.train()
    reward.close()

The completion is the policy's one reply: a fenced ```bash block, or with ``reply_prefix``
(e.g. "```bash\\n") only what follows the prefix. The prefix must end the prompt the model
continues, and TRL renders conversational prompts with a fresh assistant turn after the last
message; so with a prefix the dataset holds *text* prompts (the chat template applied with
the policy's tokenizer, then the prefix), and the completion TRL hands back is exactly what
the model wrote after it. Episodes that fail for infrastructure reasons score 0 here (TRL has
no notion of dropping them) and are counted in ``infra_failures``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from factory.agent.backends import EnvironmentKind, make_backend
from factory.agent.harness import HarnessConfig
from factory.agent.suite import SuiteTask, load_suite_tasks
from factory.errors import FactoryError
from factory_train.trl_env import check_trl_version


class SuiteReward:
    """A TRL reward function over a suite's verifiers (``reward_funcs=SuiteReward(...)``)."""

    __name__ = "factory_verifier"

    def __init__(
        self,
        suite: Path | str,
        *,
        tasks: list[SuiteTask] | None = None,
        harness: HarnessConfig | None = None,
        reply_prefix: str = "",
        concurrency: int = 8,
        environment: EnvironmentKind = EnvironmentKind.DOCKER,
    ) -> None:
        check_trl_version()
        self.tasks = {e.task.id: e for e in (tasks or load_suite_tasks(Path(suite)))}
        self.harness = harness or HarnessConfig(max_turns=1)
        self.reply_prefix = reply_prefix
        self.backend = make_backend(environment, run_prefix="trl", concurrency=concurrency)
        self.backend.prepare(list(self.tasks.values()))
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="trl-reward")
        self.infra_failures = 0
        self._lock = threading.Lock()

    def messages(self, task_id: str) -> list[dict]:
        """The conversation a policy sees for a task (system prompt + instruction)."""
        return self.backend.episode(self.tasks[task_id], self.harness).opening()

    def __call__(self, prompts, completions, task_id, **_kwargs) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        return list(self.pool.map(self._score, task_id, texts))

    def _score(self, task_id: str, text: str) -> float:
        episode = self.backend.episode(self.tasks[task_id], self.harness)
        episode.start()
        episode.observe(self.reply_prefix + text)
        result = episode.finish()
        if result.reward is None:
            with self._lock:
                self.infra_failures += 1
            return 0.0
        return result.reward

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.backend.close()


def suite_dataset(
    reward: SuiteReward, tokenizer=None, task_ids: list[str] | None = None, repeat: int = 1
):
    """A `datasets.Dataset` with a ``prompt`` and the ``task_id`` the reward function receives:
    conversational prompts, or with a reply prefix text prompts that end with it (``tokenizer``,
    the policy's, renders them)."""
    from datasets import Dataset

    if reward.reply_prefix and tokenizer is None:
        raise FactoryError("a reply prefix needs the policy's tokenizer to render the prompts")
    ids = task_ids or sorted(reward.tasks)
    rows = []
    for task_id in ids:
        prompt = reward.messages(task_id)
        if reward.reply_prefix:
            prompt = (
                tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
                + reward.reply_prefix
            )
        rows.append({"prompt": prompt, "task_id": task_id})
    return Dataset.from_list(rows * repeat)
