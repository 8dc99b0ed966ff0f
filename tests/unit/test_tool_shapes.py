"""Request shapes of the tool families (issue 16), without Docker: whole-request refusals (nothing
changes, the reply must say what was refused), handovers to a human (``transfer_to_human`` with
the reason the policy gives), and the shape parameter's checks."""

from __future__ import annotations

import json
import random

import pytest
from factory.toolenv.core import HANDOVER_TOOL, Domain, Environment, load_domain

from factory.families import registry
from factory.families.tool.scenario import Shape, script_calls
from factory.vocabulary import AGENT_USER, Difficulty

SHAPED = ["tool-airline", "tool-banking", "tool-inventory"]
REPLY_ONLY = {"silent-refusal", "vague-refusal"}
"""Near misses that differ from the reference only in what they tell the customer."""


def _play(domain, state: dict, calls: list[tuple[str, dict]]) -> tuple[dict, bool]:
    env = Environment(domain, state)
    results = [env.call(name, arguments) for name, arguments in calls]
    return env.state, any(r.get("violation") for r in results)


def _draft(family: str, difficulty: Difficulty, seed: int, shape: str):
    return registry.get(family).draft(random.Random(seed), difficulty, {"shape": shape})


@pytest.mark.parametrize("family", SHAPED)
@pytest.mark.parametrize("difficulty", list(Difficulty))
@pytest.mark.parametrize("seed", [1, 2])
def test_a_refusal_changes_nothing_and_must_say_what_it_refuses(family, difficulty, seed):
    d = _draft(family, difficulty, seed, "refusal")
    domain = load_domain(registry.get(family).toolenv_domain)
    initial = json.loads(d.files["environment/state.json"])
    # no copy of the initial state among the tests (a leak): they read the image's own
    expected = json.loads(d.files.get("tests/expected_state.json", "null")) or initial
    assert d.context["unchanged"] == ("tests/expected_state.json" not in d.files)
    calls = [(c.name, c.arguments) for c in d.context["calls"]]
    final, broke = _play(domain, initial, calls)
    assert final == expected and not broke
    assert not any(c.name == HANDOVER_TOOL for c in d.context["calls"])
    assert "refusal" in d.tags and "policy-trap" in d.tags
    subjects = d.context["refusal"]["subjects"]
    for subject in subjects:
        assert subject.lower() in d.context["request"].lower()
        assert subject in d.context["reply"]
    assert "cannot" in d.context["reply"]
    assert "silent-refusal" in d.mutations and "FACTORY_REPLY" not in d.mutations["silent-refusal"]
    if subjects:
        assert not any(s in d.mutations["vague-refusal"] for s in subjects)
    for name, script in d.mutations.items():
        if name not in REPLY_ONLY:
            got, broke = _play(domain, initial, script_calls(script))
            assert got != expected or broke, name


@pytest.mark.parametrize("family", SHAPED)
@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_a_handover_names_the_policys_reason_and_the_wrong_reason_fails(family, difficulty):
    d = _draft(family, difficulty, 3, "handover")
    domain = load_domain(registry.get(family).toolenv_domain)
    handovers = [c for c in d.context["calls"] if c.name == HANDOVER_TOOL]
    assert len(handovers) == 1 and handovers[0].arguments["reason"] in domain.handovers
    assert "handover" in d.tags
    initial = json.loads(d.files["environment/state.json"])
    expected = json.loads(d.files["tests/expected_state.json"])
    assert [h["reason"] for h in expected["handovers"]] == [handovers[0].arguments["reason"]]
    got, broke = _play(domain, initial, script_calls(d.mutations["wrong-handover-reason"]))
    assert got != expected and not broke


@pytest.mark.parametrize("family", SHAPED)
def test_every_shape_is_drawn_and_the_agent_is_unprivileged(family):
    shapes = set()
    for seed in range(1, 25):
        d = _draft(family, Difficulty.MEDIUM, seed, "any")
        assert d.agent_user == AGENT_USER and d.outputs == ["/home/agent/reply.md"]
        shapes.add(
            Shape.REFUSAL
            if d.context["refusal"]
            else Shape.HANDOVER
            if "handover" in d.tags
            else Shape.TASK
        )
    assert shapes == set(Shape)


def test_the_shape_parameter_is_checked():
    with pytest.raises(ValueError, match="shape must be any, task, refusal, handover; not 'x'"):
        _draft("tool-airline", Difficulty.EASY, 1, "x")
    with pytest.raises(ValueError, match="shape must be any, task; not 'refusal'"):
        _draft("tool-calendar", Difficulty.EASY, 1, "refusal")
    d = _draft("tool-calendar", Difficulty.HARD, 1, "any")
    assert d.context["refusal"] is None and "handover" not in d.tags


def test_a_domain_with_handovers_serves_transfer_to_human():
    domain = Domain("desk", "Help Desk", "Be kind.", handovers={"legal": "a lawsuit is mentioned"})
    assert HANDOVER_TOOL in domain.tools and "`legal`: a lawsuit is mentioned" in domain.policy
    env = Environment(domain, {})
    wrong = env.call(HANDOVER_TOOL, {"reason": "bored", "summary": "x"})
    assert not wrong["ok"] and "must be one of legal" in wrong["error"]
    empty = env.call(HANDOVER_TOOL, {"reason": "legal", "summary": " "})
    assert not empty["ok"] and "summary" in empty["error"]
    assert env.state == {}
    done = env.call(HANDOVER_TOOL, {"reason": "legal", "summary": "they will sue"})
    assert done["ok"] and env.state == {"handovers": [{"reason": "legal"}]}
    assert HANDOVER_TOOL not in Domain("plain", "Plain", "p").tools
    assert list(load_domain("airline").tools)[-1] == HANDOVER_TOOL  # after the domain's own
