"""A simulated customer in tool episodes: the scripted customer's rules, the `say` action (a
fenced line or a tool call) and its observation, the conversation in the transcript, the
communicate check in the reward, and the family's opt-in (``user: simulated``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.airline import SIMULATED, airline_entry

from factory.agent.actions import ActionFormat
from factory.agent.backends import InProcessEpisodes
from factory.agent.communicate import check_communicated
from factory.agent.harness import HarnessConfig
from factory.agent.tool_episode import SAY
from factory.agent.user_sim import STOP, LlmUser, ScriptedUser, UserKind, Utterance
from factory.errors import TaskFormatError
from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial
from factory.tasks.user_profile import (
    USER_FILE,
    RequiredFact,
    ScriptRule,
    UserProfile,
    load_user_profile,
)

FENCE = "```"


def profile(**extra) -> UserProfile:
    return UserProfile(
        opening="Hi, I need help.",
        goal="Book me a flight.",
        facts={"user id": "ana_3"},
        script=[
            ScriptRule(when=r"user[\s_-]?id", reply="My user id is ana_3."),
            ScriptRule(turn=1, reply="Book me a flight."),
        ],
        **extra,
    )


def test_scripted_customer_answers_by_what_was_asked_then_by_turn():
    user = ScriptedUser(profile())
    talk = [Utterance("user", "Hi, I need help.", "opening"), Utterance("agent", "Hello!")]
    first = user.reply(talk)
    assert (first.content, first.source) == ("Book me a flight.", UserKind.SCRIPTED.value)
    talk += [first, Utterance("agent", "What is your user-id?")]
    assert user.reply(talk).content == "My user id is ana_3."
    talk += [Utterance("user", "My user id is ana_3.", "scripted"), Utterance("agent", "Ok.")]
    assert user.reply(talk).content == "Is there anything else you need from me?"


def test_communicate_check_matches_spellings_case_and_spacing():
    required = [
        RequiredFact(fact="reservation code", any_of=["HAT 12X"]),
        RequiredFact(fact="refund", any_of=["$120", "120 dollars"]),
    ]
    assert check_communicated(required, ["your code is hat  12x", "120 DOLLARS back"]).passed
    verdict = check_communicated(required, ["code HAT 12X", "refund is on its way"])
    assert verdict.missing == ["refund"] and "refund" in verdict.explain()
    assert check_communicated(required, []).missing == ["reservation code", "refund"]
    assert check_communicated([], []).passed


def test_llm_customer_sees_its_goal_and_plays_the_assistant_role():
    user = LlmUser(profile(), client=None, title="airline")  # type: ignore[arg-type]
    system = user.system_prompt()
    assert "Book me a flight." in system and "- user id: ana_3" in system and STOP in system
    chat = user.messages(
        [Utterance("user", "Hi, I need help.", "opening"), Utterance("agent", "How can I help?")]
    )
    assert [m["role"] for m in chat] == ["system", "assistant", "user"]
    assert chat[2]["content"] == "How can I help?"


def test_a_bad_profile_is_a_named_error(tmp_path):
    assert load_user_profile(tmp_path) is None
    (tmp_path / USER_FILE).write_text('{"opening": "hi"}')
    with pytest.raises(TaskFormatError, match="goal"):
        load_user_profile(tmp_path)


# --- the airline family with a simulated customer, played in process ----------------------


@pytest.fixture
def airline(tmp_path):
    return airline_entry(tmp_path)


def reference(entry) -> list[str]:
    lines = (entry.task.root / "solution" / "solve.sh").read_text().splitlines()
    return [line for line in lines if line.startswith("tool ")]


def code_of(entry) -> str:
    (fact,) = load_user_profile(entry.task.paths.tests_dir).communicate
    return fact.any_of[0]


def play(entry, replies, action_format=ActionFormat.FENCED, log_dir=None):
    backend = InProcessEpisodes()
    backend.prepare([entry])
    harness = HarnessConfig(max_turns=8, action_format=action_format)
    episode = backend.episode(entry, harness, log_dir)
    episode.start()
    observations = []
    for reply in replies:
        text, calls = reply if isinstance(reply, tuple) else (reply, None)
        observations.append(episode.observe(text, calls))
    return episode, observations, episode.finish()


def test_the_family_opts_in_and_hides_the_request(airline):
    task = airline.task
    user = load_user_profile(task.paths.tests_dir)
    assert user is not None and user.opening in task.instruction
    assert user.goal not in task.instruction and "`say YOUR MESSAGE`" in task.instruction
    assert user.facts["user id"] in user.goal and user.facts["user id"] not in task.instruction
    assert [f.fact for f in user.communicate] == ["new reservation code"]
    assert "simulated-user" in task.config.metadata["tags"]
    solve = (task.root / "solution" / "solve.sh").read_text()
    assert code_of(airline) in solve.split("FACTORY_REPLY")[1]  # the reference tells it


def test_talking_then_solving_and_telling_scores_one(airline, tmp_path):
    code = code_of(airline)
    tools = "\n".join(reference(airline))
    episode, seen, result = play(
        airline,
        [
            f"{FENCE}bash\nsay 'Hello, how can I help you?'\n{FENCE}",
            f"{FENCE}bash\nsay What is your user id?\n{FENCE}",
            f"{FENCE}bash\n{tools}\nsay Done: your new reservation code is {code}.\n{FENCE}",
            "DONE",
        ],
        log_dir=tmp_path / "log",
    )
    user = load_user_profile(airline.task.paths.tests_dir)
    assert seen[0] == f"customer: {user.goal}"
    assert seen[1] == f"customer: My user id is {user.facts['user id']}."
    assert seen[2].endswith("customer: That is everything, thank you.")
    assert result.reward == 1.0, result.checks
    assert result.checks == {"communicate": "the customer was told every required fact"}
    assert [u["role"] for u in result.conversation] == ["user", *["agent", "user"] * 3]
    assert result.conversation[0] == {"role": "user", "content": user.opening, "source": "opening"}
    assert {u.get("source") for u in result.conversation[2::2]} == {"scripted"}
    record = json.loads((tmp_path / "log" / "transcript.jsonl").read_text())
    assert record["conversation"] == result.conversation and record["checks"] == result.checks


def test_the_right_state_without_telling_the_customer_scores_zero(airline):
    tools = "\n".join(reference(airline))
    _, _, result = play(
        airline, [f"{FENCE}bash\n{tools}\nsay All done, have a nice day.\n{FENCE}", "DONE"]
    )
    assert result.reward == 0.0
    assert result.checks["communicate"] == "the customer was never told: new reservation code"


def test_telling_without_doing_scores_zero(airline):
    _, _, result = play(
        airline, [f"{FENCE}bash\nsay Your new reservation code is {code_of(airline)}.\n{FENCE}"]
    )
    assert result.reward == 0.0  # the state is not the expected one


def test_say_as_a_tool_call(airline):
    code = code_of(airline)
    tools = "\n".join(reference(airline))

    def call(name: str, arguments: dict, i: int) -> dict:
        payload = {"name": name, "arguments": json.dumps(arguments)}
        return {"id": f"c{i}", "type": "function", "function": payload}

    episode, seen, result = play(
        airline,
        [
            ("", [call(SAY, {"message": "How can I help?"}, 0)]),
            ("", [call("bash", {"command": tools}, 1), call(SAY, {"message": f"Code {code}"}, 2)]),
            ("", [call(SAY, {"text": "wrong argument"}, 3)]),
            ("Goodbye", None),
        ],
        action_format=ActionFormat.TOOLS,
    )
    assert SAY in {t["function"]["name"] for t in episode.tools}
    assert seen[0].startswith("customer: Hello! My user id is")
    assert seen[2].startswith("error: say takes one argument")
    answers = [m for m in result.transcript if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["c0", "c1", "c2", "c3"]
    assert result.reward == 1.0, result.checks


def test_a_customer_who_left_is_not_answered_and_say_needs_words(airline):
    left = profile(default_reply=f"Bye. {STOP}")
    left.script = []
    backend = InProcessEpisodes()
    backend.prepare([airline])
    episode = backend.episode(airline, HarnessConfig())
    episode.user = ScriptedUser(left)
    episode.start()
    assert (
        episode.say("Anything else?") == "customer: Bye. [the customer has left the conversation]"
    )
    assert episode.say("Hello?") == "error: the customer has left the conversation"
    assert episode.say("  ").startswith("error: say needs a message")


def test_tasks_without_a_customer_are_unchanged(tmp_path):
    entry = airline_entry(tmp_path, None)
    assert not (entry.task.paths.tests_dir / USER_FILE).exists()
    tools = "\n".join(reference(entry))
    episode, seen, result = play(entry, [f"{FENCE}bash\nsay hello\n{tools}\n{FENCE}", "DONE"])
    assert seen[0].startswith("error: only the `tool` command")  # say is no command here
    assert SAY not in {t["function"]["name"] for t in episode.tools}
    assert result.reward == 1.0 and result.conversation == [] and result.checks == {}
    assert "conversation" not in json.dumps(result.transcript)


def test_the_user_parameter_is_checked(tmp_path):
    with pytest.raises(ValueError, match="user must be static or simulated"):
        render_trial("tool-airline", Difficulty.EASY, 1, tmp_path, {"user": "chatty"})


def test_every_tool_family_renders_with_a_simulated_customer(tmp_path):
    for family in ("tool-banking", "tool-crm", "tool-calendar", "tool-files", "tool-inventory"):
        trial = render_trial(family, Difficulty.MEDIUM, 2, tmp_path / family, SIMULATED)
        user = load_user_profile(Path(trial.path) / "tests")
        assert user is not None and user.communicate == []  # airline is the one that checks it
