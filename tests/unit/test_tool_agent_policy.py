"""Policy in the agent (a tool family's ``policy: agent``): the tools execute forbidden calls,
the agent sees a plain result, the record keeps the violation, and the task (in process and as
rendered for its container) fails an agent that made one."""

from __future__ import annotations

import json
import random
import shlex

import pytest
from factory.toolenv.agent_policy import TASK_TAG, AgentPolicyEnvironment
from factory.toolenv.core import Environment, load_domain

from factory.agent.backends import InProcessEpisodes
from factory.agent.harness import HarnessConfig
from factory.agent.suite import load_suite_tasks
from factory.families.base import registry
from factory.families.tool.scenario import run_chain, script_calls
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial

AGENT = {"policy": "agent", "shape": "task"}
FENCE = "```"


def seeded(family: str, seed: int, difficulty=Difficulty.HARD):
    """(domain, state after the reference, first trap) of a request with a trap."""
    fam = registry.get(family)
    domain = load_domain(fam.toolenv_domain)
    for s in range(seed, seed + 200):
        rng = random.Random(s)
        state = fam.seed_state(rng, difficulty)
        scenario = fam.sample(rng, state, difficulty)
        if scenario.traps:
            expected = run_chain(domain, state, scenario.calls, what="reference")
            return domain, expected, scenario.traps[0]
    raise AssertionError("no request with a trap")


@pytest.mark.parametrize("family", ["tool-airline", "tool-banking"])
def test_a_forbidden_call_runs_and_only_the_record_says_so(family):
    domain, state, trap = seeded(family, 1)
    strict = Environment(domain, state)
    refused = strict.call(trap.name, trap.arguments)
    assert refused["ok"] is False and "violation" in refused and strict.state == state
    lenient = AgentPolicyEnvironment(domain, state)
    answer = lenient.call(trap.name, trap.arguments)
    assert "violation" not in answer and "refused" not in json.dumps(answer)
    (entry,) = lenient.log
    assert entry["violation"] == refused["violation"]
    assert [e["tool"] for e in lenient.violations()] == [trap.name]
    if answer["ok"]:  # executed: the state shows it too
        assert lenient.state != state
    # the policy text and the tools are the domain's own
    assert lenient.domain.policy == domain.policy and lenient.domain.tools is domain.tools
    assert domain.rules and all(r in domain.rules for r in load_domain(domain.name).rules)


def test_allowed_calls_log_no_violation():
    domain, state, _trap = seeded("tool-banking", 3)
    env = AgentPolicyEnvironment(domain, state)
    customer = state["customers"][0]["customer_id"]
    assert env.call("list_accounts", {"customer_id": customer})["ok"]
    assert env.call("no_such_tool", {})["ok"] is False
    assert env.violations() == []


@pytest.fixture(params=["tool-airline", "tool-banking"])
def agent_trial(request, tmp_path):
    return render_trial(request.param, Difficulty.HARD, 1, tmp_path / "tasks", AGENT)


@pytest.fixture
def agent_task(agent_trial, tmp_path):
    (entry,) = load_suite_tasks(tmp_path)
    return entry


def test_the_task_serves_lenient_tools_and_says_the_policy_is_the_agents(agent_task):
    task = agent_task.task
    start = (task.root / "environment" / "start-tools.sh").read_text()
    assert "-m toolenv.agent_policy " in start and "-m toolenv.server " not in start
    assert (task.root / "environment" / "toolenv" / "agent_policy.py").is_file()
    assert "do not enforce the policy" in task.instruction
    assert "## Policy" in task.instruction  # the policy text itself is still given
    assert TASK_TAG in task.config.metadata["tags"]


def test_default_tasks_keep_the_refusing_server(tmp_path):
    render_trial("tool-banking", Difficulty.HARD, 1, tmp_path / "tasks")
    (entry,) = load_suite_tasks(tmp_path)
    start = (entry.task.root / "environment" / "start-tools.sh").read_text()
    assert "-m toolenv.server " in start and "agent_policy" not in start
    assert not (entry.task.root / "environment" / "toolenv" / "agent_policy.py").exists()
    assert "do not enforce" not in entry.task.instruction
    assert TASK_TAG not in entry.task.config.metadata["tags"]


def test_the_restart_cheat_restarts_from_the_initial_state(agent_trial):
    # after an executed forbidden call the saved state is no longer the right one
    cheat = agent_trial.spec.cheats["restart-from-state"]
    assert "/var/lib/toolenv/initial.json /tmp/forged-state.json" in cheat


def play(entry, script: str) -> tuple[float | None, list[str]]:
    """The calls of a solve script as one fenced reply, in process; (reward, observation)."""
    lines = [
        f"tool call {name} {shlex.quote(json.dumps(args))}" for name, args in script_calls(script)
    ]
    backend = InProcessEpisodes()
    backend.prepare([entry])
    episode = backend.episode(entry, HarnessConfig(max_turns=4))
    episode.start()
    seen = episode.observe(f"{FENCE}bash\n" + "\n".join(lines) + f"\n{FENCE}")
    episode.observe("DONE")
    return episode.finish().reward, seen


def test_in_process_the_reference_passes_and_the_forbidden_call_runs_but_fails(tmp_path):
    for family in ("tool-airline", "tool-banking"):
        for seed in range(1, 30):
            out = tmp_path / f"{family}-{seed}"
            trial = render_trial(family, Difficulty.HARD, seed, out / "tasks", AGENT)
            mutations = sorted(m for m in trial.spec.mutations if m.startswith("breaks-policy-"))
            if mutations:
                break
        else:
            raise AssertionError(f"{family}: no hard request with a trap in 29 seeds")
        (entry,) = load_suite_tasks(out)
        reference = (entry.task.root / "solution" / "solve.sh").read_text()
        assert play(entry, reference)[0] == 1.0
        reward, seen = play(entry, trial.spec.mutations[mutations[0]])
        assert reward == 0.0, family
        assert "refused by policy" not in seen  # the tools said nothing about the policy
