"""The new tool modes in real containers (issue 16): a ``policy: agent`` task and a ``user: dual``
task certify (their near misses, the forbidden call that the tools now execute, the customer
never asked, rejected), and container episodes with the live scripted customer on the host
score what the agent told the customer and what the customer did on their side."""

from __future__ import annotations

import pytest

from factory.agent.harness import HarnessConfig, ScriptedPolicy, run_episode
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import certify_trial, render_trial
from factory.images.task_image import TaskImageBuilder
from factory.tasks.model import load_task
from factory.tasks.user_profile import load_user_profile
from factory.validate.validator import Validator

pytestmark = [pytest.mark.docker]


def _certified(runtime, tmp_path, family, difficulty, params):
    trial = render_trial(family, difficulty, 1, tmp_path / "tasks", params)
    done = certify_trial(trial, Validator(runtime, tmp_path / "validation", repeats=1))
    assert done.certificate.valid, done.certificate.reason
    return done, {p.name: p for p in done.certificate.probes}


def test_a_policy_in_the_agent_task_certifies_and_fails_the_executed_forbidden_call(
    runtime, tmp_path
):
    done, probes = _certified(
        runtime, tmp_path, "tool-banking", Difficulty.HARD, {"policy": "agent", "shape": "task"}
    )
    broke = [p for name, p in probes.items() if name.startswith("breaks-policy-")]
    assert broke and all(p.rejected and p.reward == 0.0 for p in broke)


def test_a_dual_control_task_certifies_with_its_in_container_customer(runtime, tmp_path):
    done, probes = _certified(
        runtime, tmp_path, "tool-banking", Difficulty.MEDIUM, {"user": "dual", "shape": "task"}
    )
    for name in ("never-asks-the-customer", "acts-for-the-customer"):
        assert probes[name].rejected and probes[name].reward == 0.0, name


def _steps(path) -> list[str]:
    lines = (path / "solution" / "solve.sh").read_text().splitlines()
    return [line for line in lines if line.startswith(("tool call ", "say "))]


def _episode(runtime, tmp_path, family, difficulty, params, commands):
    trial = render_trial(family, difficulty, 1, tmp_path / "tasks", params)
    task = load_task(trial.path)
    image = TaskImageBuilder(runtime).ensure(task).ref
    policy = ScriptedPolicy(["\n".join(commands)])
    return task, run_episode(runtime, task, image, policy, HarnessConfig(), tmp_path / "ep")


def test_a_container_episode_talks_to_the_scripted_customer_and_scores_what_it_told(
    runtime, tmp_path
):
    simulated = {"user": "simulated", "shape": "task"}
    trial = render_trial("tool-airline", Difficulty.MEDIUM, 1, tmp_path / "plan", simulated)
    profile = load_user_profile(trial.path / "tests")
    (fact,) = profile.communicate
    user_id = profile.facts["user id"]
    calls = [line for line in _steps(trial.path) if line.startswith("tool call ")]
    told = f"say Done: your new reservation code is {fact.any_of[0]}."
    asks = ["say Hello, what do you need today?", "say What is your user id?"]
    task, result = _episode(
        runtime,
        tmp_path / "told",
        "tool-airline",
        Difficulty.MEDIUM,
        simulated,
        [*asks, *calls, told],
    )
    assert result.infra_error is None and result.reward == 1.0, result.verifier
    assert result.checks == {"communicate": "the customer was told every required fact"}
    said = [u["content"] for u in result.conversation if u["role"] == "user"]
    assert said[1] == profile.goal and user_id in said[2]  # answered on the host
    _task, untold = _episode(
        runtime, tmp_path / "untold", "tool-airline", Difficulty.MEDIUM, simulated, [*asks, *calls]
    )
    assert untold.infra_error is None and untold.reward == 0.0
    assert "never told" in untold.checks["communicate"]


def test_a_container_episode_with_dual_control_needs_the_customer_to_act(runtime, tmp_path):
    dual = {"user": "dual", "shape": "task"}
    trial = render_trial("tool-banking", Difficulty.EASY, 1, tmp_path / "plan", dual)
    steps = _steps(trial.path)
    _task, result = _episode(
        runtime, tmp_path / "asks", "tool-banking", Difficulty.EASY, dual, steps
    )
    assert result.infra_error is None and result.reward == 1.0, result.verifier
    acted = [u for u in result.conversation if u.get("actions")]
    assert [u["actions"] for u in acted] == [["approve_sign_in"]]
    silent = [s for s in steps if not s.startswith("say ")]
    _task, lost = _episode(
        runtime, tmp_path / "silent", "tool-banking", Difficulty.EASY, dual, silent
    )
    assert lost.infra_error is None and lost.reward == 0.0


def test_a_container_episode_keeps_the_agent_off_the_in_container_customer(runtime, tmp_path):
    # The same steps, but each message goes to the task's own scripted customer on the tool
    # port (the container's `say` program, run as a command), not the harness's line: the
    # harness hung that customer up, so nobody approves and the episode scores 0.
    dual = {"user": "dual", "shape": "task"}
    trial = render_trial("tool-banking", Difficulty.EASY, 1, tmp_path / "plan", dual)
    steps = [f"true; {s}" if s.startswith("say ") else s for s in _steps(trial.path)]
    _task, result = _episode(
        runtime, tmp_path / "around", "tool-banking", Difficulty.EASY, dual, steps
    )
    assert result.infra_error is None and result.reward == 0.0, result.verifier
    assert not [u for u in result.conversation if u.get("actions")]
