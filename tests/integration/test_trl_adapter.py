"""A suite as TRL's GRPOTrainer sees it: prompts, and a reward from the real verifier."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("datasets")

from factory_train.trl_adapter import SuiteReward, suite_dataset  # noqa: E402

from factory.agent.harness import HarnessConfig  # noqa: E402

pytestmark = pytest.mark.docker
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "broken" / "fails-with-solution"


def test_reward_function_runs_completions_in_the_task(tmp_path):
    task = tmp_path / "suite" / "tasks" / "answer"
    shutil.copytree(EXAMPLE, task)
    reward = SuiteReward(
        tmp_path / "suite", harness=HarnessConfig(max_turns=1), reply_prefix="```bash\n"
    )
    try:
        dataset = suite_dataset(reward, repeat=2)
        assert len(dataset) == 2
        row = dataset[0]
        assert row["prompt"][-1] == {
            "role": "assistant",
            "content": "```bash\n",
        }  # TRL continues it
        task_id = row["task_id"]
        completions = [
            [{"role": "assistant", "content": "echo 42 > /app/answer.txt\n```"}],
            [{"role": "assistant", "content": "echo 7 > /app/answer.txt\n```"}],
            [{"role": "assistant", "content": "I am not sure."}],
        ]
        rewards = reward([row["prompt"]] * 3, completions, task_id=[task_id] * 3)
        assert rewards == [1.0, 0.0, 0.0]
        assert reward.infra_failures == 0
    finally:
        reward.close()
