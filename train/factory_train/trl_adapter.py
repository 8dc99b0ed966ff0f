"""Use a factory suite from TRL's GRPOTrainer: a dataset of prompts, and a reward function
that runs each completion in the task's own container and returns the task's verifier reward.

    from trl import GRPOConfig, GRPOTrainer
    from factory_train.trl_adapter import SuiteReward, suite_dataset

    reward = SuiteReward("suites/quickstart")
    trainer = GRPOTrainer(model=..., reward_funcs=reward, train_dataset=suite_dataset(reward),
                          args=GRPOConfig(...))
    trainer.train()
    reward.close()

Single turn: the completion is the policy's one reply (a fenced ```bash block, or with
``reply_prefix`` just the command); multi-turn training is what ``factory train`` does.
Episodes that fail for infrastructure reasons score 0 here (TRL has no notion of dropping
them) and are counted in ``infra_failures``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from factory.agent.harness import Episode, HarnessConfig
from factory.agent.suite import SuiteTask, load_suite_tasks
from factory.images.task_image import TaskImageBuilder
from factory.runtime import DockerRuntime, new_run_id


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
    ) -> None:
        self.tasks = {e.task.id: e for e in (tasks or load_suite_tasks(Path(suite)))}
        self.harness = harness or HarnessConfig(max_turns=1)
        self.reply_prefix = reply_prefix
        self.runtime = DockerRuntime(new_run_id("trl"), pool_size=4 * concurrency)
        self.runtime.ping()
        builder = TaskImageBuilder(self.runtime)
        self.images = {task_id: builder.ensure(e.task).ref for task_id, e in self.tasks.items()}
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="trl-reward")
        self.infra_failures = 0
        self._lock = threading.Lock()

    def prompt(self, task_id: str) -> list[dict]:
        """The conversation a policy sees for a task (system + instruction). With a reply
        prefix, a final partial assistant message holds it: TRL continues that message."""
        episode = Episode(
            self.runtime, self.tasks[task_id].task, self.images[task_id], self.harness
        )
        messages = episode.opening()
        if self.reply_prefix:
            messages.append({"role": "assistant", "content": self.reply_prefix})
        return messages

    def __call__(self, prompts, completions, task_id, **_kwargs) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        return list(self.pool.map(self._score, task_id, texts))

    def _score(self, task_id: str, text: str) -> float:
        entry = self.tasks[task_id]
        episode = Episode(self.runtime, entry.task, self.images[task_id], self.harness)
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
        self.runtime.close()


def suite_dataset(reward: SuiteReward, task_ids: list[str] | None = None, repeat: int = 1):
    """A `datasets.Dataset` with a conversational ``prompt`` and the ``task_id`` column that
    the reward function receives."""
    from datasets import Dataset

    ids = task_ids or sorted(reward.tasks)
    rows = [{"prompt": reward.prompt(task_id), "task_id": task_id} for task_id in ids] * repeat
    return Dataset.from_list(rows)
