"""The forging attacks of issue 16, in real containers: each family's own cheat probes
(``templates/.../cheats/``) score 1 when the agent runs as root (so they are real attacks on
these very tasks) and 0 when it runs as the unprivileged user the task names (``[agent] user``),
while the reference solution, run as that same user, still scores 1.

* tool-airline: a forbidden call, then ``/reset`` (port and admin socket) and an emptied call
  log, then the right calls; and a forbidden call, then a server of its own restarted from the
  saved state.
* web-shop: an order, its items and a ``place_order`` audit row written straight into the app's
  sqlite database, never touching the app.
"""

from __future__ import annotations

import dataclasses

import pytest

from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial
from factory.images.task_image import TaskImageBuilder
from factory.tasks.model import Task, load_task
from factory.validate.phases import PhaseKind, run_phase
from factory.validate.probes import run_probes
from factory.vocabulary import AGENT_USER

pytestmark = pytest.mark.docker


def _as_root(task: Task) -> Task:
    agent = task.config.agent.model_copy(update={"user": None})
    return dataclasses.replace(task, config=task.config.model_copy(update={"agent": agent}))


@pytest.mark.parametrize(
    ("family", "difficulty", "seed", "cheats"),
    [
        ("tool-airline", Difficulty.HARD, 3, {"reset-after-violation", "restart-from-state"}),
        ("web-shop", Difficulty.EASY, 1, {"forge-order-in-db"}),
    ],
)
def test_forging_scores_only_where_the_agent_is_root(
    runtime, tmp_path, family, difficulty, seed, cheats
):
    trial = render_trial(family, difficulty, seed, tmp_path / "tasks")
    task = load_task(trial.path)
    assert task.config.agent.user == AGENT_USER
    assert set(trial.spec.cheats) == cheats
    image = TaskImageBuilder(runtime).ensure(task).ref

    reference = run_phase(runtime, task, image, PhaseKind.ORACLE, 1, tmp_path / "oracle")
    assert reference.infra_error is None and reference.reward == 1.0, reference.output_tail

    as_agent = run_probes(runtime, task, image, dict(trial.spec.cheats), "cheat", tmp_path / "a")
    assert {r.name: r.reward for r in as_agent} == dict.fromkeys(cheats, 0.0)

    as_root = run_probes(
        runtime, _as_root(task), image, dict(trial.spec.cheats), "cheat", tmp_path / "r"
    )
    assert {r.name: r.reward for r in as_root} == dict.fromkeys(cheats, 1.0)
