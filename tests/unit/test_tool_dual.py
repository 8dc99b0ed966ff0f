"""Dual control (banking, ``user: dual``) without Docker: the customer's app is state only the
customer's own tools change, the agent must send a sign-in request and ask the customer to
approve it, and episodes (scripted customer, a model customer) and the task's near misses are
judged on it."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest
from factory.toolenv.core import HANDOVER_TOOL, load_domain
from factory.toolenv.dual import TASK_TAG, DualEnvironment, ScriptedCustomer, dual_domain

from factory.agent.backends import InProcessEpisodes
from factory.agent.harness import HarnessConfig
from factory.agent.suite import load_suite_tasks
from factory.agent.user_sim import LlmUser, ScriptedUser, Utterance
from factory.families.base import registry
from factory.families.tool.scenario import SAY_CALL
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial
from factory.quality.leaks import find_leaks
from factory.tasks.user_profile import load_user_profile

DUAL = {"user": "dual", "shape": "task"}
FENCE = "```"


def banking_state(seed: int = 1) -> tuple[dict, str]:
    fam = registry.get("tool-banking")
    state = fam.seed_state(random.Random(seed), Difficulty.EASY)
    customer = state["customers"][0]
    state["app"] = {"customer_id": customer["customer_id"], "sign_in": "none"}
    return state, customer["customer_id"]


def identity(state: dict, customer_id: str) -> dict:
    customer = next(c for c in state["customers"] if c["customer_id"] == customer_id)
    return {
        "customer_id": customer_id,
        "date_of_birth": customer["dob"],
        "postcode": customer["postcode"],
    }


def test_only_the_customer_can_approve_and_identity_waits_for_it():
    state, me = banking_state()
    env = DualEnvironment(load_domain("banking"), state)
    early = env.call("verify_identity", identity(state, me))
    assert early["ok"] is False and "approved a sign-in" in early["error"]
    assert "violation" not in early  # not a policy breach: a step the customer must take
    assert env.call("approve_sign_in", {})["ok"] is False  # not the agent's tool
    assert env.customer_call("approve_sign_in")["ok"] is False  # nothing to approve yet
    assert env.call("send_app_sign_in", {"customer_id": me})["ok"]
    assert env.customer_call("verify_identity", {})["ok"] is False  # not the customer's tool
    assert env.customer_call("approve_sign_in")["ok"]
    assert env.call("verify_identity", identity(state, me))["ok"]
    assert env.state["app"]["sign_in"] == "approved"
    assert [e.get("by") for e in env.log if e["tool"] == "approve_sign_in"] == [
        None,
        "customer",
        "customer",
    ]
    assert env.violations() == []


def test_the_dual_domain_adds_its_tools_and_policy_once():
    base = load_domain("banking")
    dual = dual_domain(base)
    assert "send_app_sign_in" in dual.tools and "approve_sign_in" not in dual.tools
    assert list(dual.tools)[-1] == HANDOVER_TOOL
    assert dual.policy.count("# Handing over to a human") == 1
    assert "Signing in through the banking app" in dual.policy
    assert "send_app_sign_in" not in base.tools and "banking app" not in base.policy
    with pytest.raises(ValueError, match="no dual-control variant"):
        dual_domain(load_domain("airline"))


@pytest.fixture
def dual_trial(tmp_path):
    return render_trial("tool-banking", Difficulty.MEDIUM, 1, tmp_path / "tasks", DUAL)


def test_the_task_ships_the_customer_and_says_so(dual_trial, tmp_path):
    (entry,) = load_suite_tasks(tmp_path)
    root = entry.task.root
    assert TASK_TAG in entry.task.config.metadata["tags"]
    assert (root / "environment" / "toolenv" / "dual.py").is_file()
    inside = json.loads((root / "environment" / "customer.json").read_text())
    profile = load_user_profile(entry.task.paths.tests_dir)
    assert inside == profile.model_dump(include={"script", "default_reply"})
    assert "communicate" not in inside  # the tests' expectations stay out of the image
    assert not find_leaks(root)
    assert profile.actions == {"approve_sign_in": "approve the sign-in request shown in your app"}
    assert "/usr/local/bin/say" in (root / "environment" / "Dockerfile").read_text()
    assert "-m toolenv.dual " in (root / "environment" / "start-tools.sh").read_text()
    assert "app on their phone" in entry.task.instruction
    assert "Signing in through the banking app" in entry.task.instruction
    assert profile.goal not in entry.task.instruction
    solve = (root / "solution" / "solve.sh").read_text()
    assert "\nsay 'I have sent a sign-in request" in solve
    assert solve.index("send_app_sign_in") < solve.index("\nsay ") < solve.index("verify_identity")
    expected = json.loads((root / "tests" / "expected_state.json").read_text())
    assert expected["app"]["sign_in"] == "approved"
    initial = json.loads((root / "environment" / "state.json").read_text())
    assert initial["app"]["sign_in"] == "none"
    assert {"never-asks-the-customer", "acts-for-the-customer"} <= set(dual_trial.spec.mutations)


def test_dual_is_refused_where_it_does_not_exist():
    with pytest.raises(ValueError, match="no dual-control variant"):
        registry.get("tool-airline").draft(random.Random(1), Difficulty.EASY, DUAL)
    with pytest.raises(ValueError, match="do not combine"):
        registry.get("tool-banking").draft(
            random.Random(1), Difficulty.EASY, {**DUAL, "policy": "agent"}
        )


def fenced(script: str) -> str:
    """A solve script's tool and say lines as one fenced reply."""
    lines = [line for line in script.splitlines() if line.startswith(("tool ", "say "))]
    return f"{FENCE}bash\n" + "\n".join(lines) + f"\n{FENCE}"


def play(entry, script: str, user=None):
    backend = InProcessEpisodes()
    backend.prepare([entry])
    episode = backend.episode(entry, HarnessConfig(max_turns=4))
    if user is not None:
        episode.user = user
    episode.start()
    seen = episode.observe(fenced(script))
    episode.observe("DONE")
    return episode.finish(), seen


def test_in_process_the_customer_approves_when_asked_and_not_otherwise(dual_trial, tmp_path):
    (entry,) = load_suite_tasks(tmp_path)
    reference = (entry.task.root / "solution" / "solve.sh").read_text()
    result, seen = play(entry, reference)
    assert result.reward == 1.0, seen
    assert "customer: OK, I opened the app and tapped Approve" in seen
    said = [u for u in result.conversation if u["role"] == "user" and u.get("actions")]
    assert [u["actions"] for u in said] == [["approve_sign_in"]]
    for name in ("never-asks-the-customer", "acts-for-the-customer"):
        result, seen = play(entry, dual_trial.spec.mutations[name])
        assert result.reward == 0.0, name
    assert "approve_sign_in" in seen and "unknown tool" in seen  # the agent cannot do it


@dataclass
class Completion:
    text: str
    completion_tokens: int = 3


class FakeModel:
    """An endpoint that approves in the app when asked about it, in the model's own words."""

    def __init__(self) -> None:
        self.prompts: list[list[dict]] = []

    def complete(self, messages, **_):
        self.prompts.append(messages)
        if "approve" in messages[-1]["content"].lower():
            return Completion("Sure, done [[approve_sign_in]] - approved it.")
        return Completion("I want what I said. [[delete_everything]]")


def test_a_model_customer_acts_through_its_markers(dual_trial, tmp_path):
    (entry,) = load_suite_tasks(tmp_path)
    profile = load_user_profile(entry.task.paths.tests_dir)
    model = FakeModel()
    user = LlmUser(profile, client=model, title="banking")  # type: ignore[arg-type]
    assert "[[approve_sign_in]]" in user.system_prompt()
    reference = (entry.task.root / "solution" / "solve.sh").read_text()
    result, seen = play(entry, reference, user)
    assert result.reward == 1.0, seen
    assert "[[" not in seen  # the agent reads the words, not the markers
    other = user.reply([Utterance("user", "hi", "opening"), Utterance("agent", "What else?")])
    assert other.actions == ()  # a tool the customer does not have is not theirs to use


def test_the_container_customer_answers_as_the_host_one(dual_trial, tmp_path):
    (entry,) = load_suite_tasks(tmp_path)
    profile = load_user_profile(entry.task.paths.tests_dir)
    host, inside = ScriptedUser(profile), ScriptedCustomer(profile.model_dump())
    talk = [Utterance("user", profile.opening, "opening")]
    for message in ["Hello, how can I help?", "Please approve the sign-in in your app.", "Ok"]:
        talk.append(Utterance("agent", message))
        said = host.reply(talk)
        assert inside.answer(message) == (said.content, said.actions[0] if said.actions else None)
        talk.append(said)


def test_reference_chains_ask_before_every_first_identity_check():
    fam = registry.get("tool-banking")
    for difficulty in Difficulty:
        for seed in range(1, 6):
            d = fam.draft(random.Random(seed), difficulty, {**fam.default_params, "user": "dual"})
            names = [c.name for c in d.context["calls"]]
            at = names.index("verify_identity")
            assert names[at - 2 : at] == ["send_app_sign_in", SAY_CALL]
            script = d.mutations["never-asks-the-customer"]
            assert not any(x.startswith("say ") for x in script.splitlines())
            assert "send_app_sign_in" in script
