"""The cheating corpus: every tampering attack of factory/validate/attacks must score 0 — as a
probe in validation and certification, and as a policy in an episode — while the honest
reference solutions still score 1 with the verifier isolated."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from factory.agent.harness import HarnessConfig, ScriptedPolicy, run_episode
from factory.images.task_image import TaskImageBuilder
from factory.tasks.model import load_task
from factory.validate.outcome import Outcome
from factory.validate.probes import attack_scripts, cheat_scripts, run_probes
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
# Three verifier styles: outputs on disk, live service state, the agent's Python imported by
# the tests (run out of process).
TASKS = ["access-log-report", "fix-status-service-config", "fix-interval-merge-bug"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from factory.runtime import DockerRuntime, new_run_id

    runtime = DockerRuntime(new_run_id("pytest-cheats"))
    images = TaskImageBuilder(runtime)
    tasks = {}
    for name in TASKS:
        task = load_task(EXAMPLES / name)
        tasks[name] = (task, images.ensure(task).ref)
    yield runtime, tasks
    runtime.close()


@pytest.mark.parametrize("name", TASKS)
def test_every_attack_scores_zero_and_the_oracle_still_passes(built, name, tmp_path):
    runtime, tasks = built
    task, image = tasks[name]
    results = run_probes(runtime, task, image, cheat_scripts((), attacks="each"), "cheat", tmp_path)
    scored = {r.name: (r.reward, r.detail) for r in results if not r.rejected}
    assert {r.name for r in results} >= set(attack_scripts())
    assert scored == {}, f"{name}: attacks that scored: {scored}"
    # The probes really attacked: the isolation log of each says what it undid.
    logs = {r.name: Path(r.log_dir) / "isolation.log" for r in results}
    assert "froze" in logs["reward-loop"].read_text()
    assert "froze" in logs["kill-verifier"].read_text()
    assert "restored" in logs["python-true"].read_text()
    assert "restored" in logs["shell-swap"].read_text()
    assert "removed" in logs["root-conftest"].read_text()
    assert "removed" in logs["pth-hook"].read_text()
    oracle = run_probes(
        runtime, task, image, {"oracle": task.paths.solve_script.read_text()}, "oracle", tmp_path
    )
    assert oracle[0].reward == 1.0, oracle[0].detail


def test_validate_probes_reports_each_attack(built, tmp_path):
    runtime, _ = built
    copy = tmp_path / "task"
    shutil.copytree(EXAMPLES / "access-log-report", copy)
    validator = Validator(runtime, tmp_path / "out", repeats=1, probes=True)
    verdict = validator.validate(copy)
    assert verdict.outcome is Outcome.VALID, verdict.reason
    assert {p.name for p in verdict.probes} >= set(attack_scripts()) | {"exit-0", "fake-reward"}
    assert all(p.rejected for p in verdict.probes)


def test_a_task_that_trusts_the_agents_code_is_caught(built, tmp_path):
    """A verifier that imports the agent's module in-process can be ended "successfully" by
    that module: --probes names the attack instead of certifying the task."""
    runtime, _ = built
    copy = tmp_path / "naive"
    shutil.copytree(EXAMPLES / "fix-interval-merge-bug", copy)
    naive = (
        "import sys\nsys.path.insert(0, '/app')\nfrom schedkit import merge\n\n\n"
        "def test_merge():\n    assert merge([(5, 8), (1, 3), (2, 4)]) == [(1, 4), (5, 8)]\n"
        "    assert merge([(1, 2), (2, 3)]) == [(1, 3)]\n"
    )
    (copy / "tests" / "test_outputs.py").write_text(naive)
    validator = Validator(runtime, tmp_path / "out", repeats=1, probes=True)
    verdict = validator.validate(copy)
    assert verdict.outcome is Outcome.CHEAT_PASSED, verdict.reason
    assert "exit-on-import" in verdict.reason


@pytest.mark.parametrize("attack", ["reward-loop", "kill-verifier", "shell-swap", "pth-hook"])
def test_attacks_as_a_policy_earn_nothing_in_an_episode(built, attack, tmp_path):
    runtime, tasks = built
    task, image = tasks["access-log-report"]
    script = attack_scripts()[attack]
    policy = ScriptedPolicy([script])
    result = run_episode(runtime, task, image, policy, HarnessConfig(max_turns=2), tmp_path)
    assert result.infra_error is None
    assert result.reward == 0.0
    assert result.verifier is not None and result.verifier.isolation


def test_generation_certifies_with_the_combined_attack_probe(built, tmp_path):
    from factory.generate.taxonomy import Difficulty
    from factory.generate.trial import certify_trial, render_trial

    runtime, _ = built
    trial = render_trial("log-report", Difficulty.EASY, 1, tmp_path / "tasks")
    done = certify_trial(trial, Validator(runtime, tmp_path / "validation", repeats=1))
    assert done.certificate.valid, done.certificate.reason
    probes = {p.name: p for p in done.certificate.probes}
    assert probes["tamper"].rejected and probes["tamper"].reward == 0.0
