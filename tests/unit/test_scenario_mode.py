"""Hybrid generation (``params: {mode: scenario}``): bounded slot schemas, the scenario
backend against a scripted OpenAI-compatible endpoint, the taxonomy check and provenance."""

from __future__ import annotations

import json
import random

import pytest
from fixtures.llm_stub import Stub, reply
from pydantic import BaseModel, ValidationError

from factory.errors import TaskFormatError
from factory.families import registry
from factory.families.slots import (
    Slots,
    UnboundedSchemaError,
    max_json_chars,
    not_sql_keyword,
    text,
)
from factory.generate.backends import BackendChoice, LlmOptions, backend_factory
from factory.generate.pipeline import GenerationError
from factory.generate.procedural import ProceduralBackend
from factory.generate.results import QualityOutcome
from factory.generate.scenario import ScenarioBackend, reply_budget
from factory.generate.taxonomy import Difficulty, parse_taxonomy
from factory.llm import LlmClient, LlmSettings


def taxonomy(generator: str = "log-report", **params):
    return parse_taxonomy(
        {
            "suite": "s",
            "seed": 1,
            "domains": [
                {
                    "name": "terminal",
                    "categories": [
                        {
                            "name": "logs",
                            "skills": [
                                {
                                    "name": "access",
                                    "generator": generator,
                                    "params": {"mode": "scenario", **params},
                                }
                            ],
                        }
                    ],
                }
            ],
        }
    )


LEAF = next(taxonomy().leaves())
CONTENT = {
    "scenario": "The night shift saw the proxy slow down after the release",
    "persona": "a site reliability engineer",
    "app": "harbour-gate",
    "services": ["tides", "cranes", "berths", "customs", "pilots", "ferries"],
}


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


def backend(stub: Stub, parse_repairs: int = 1) -> ScenarioBackend:
    client = LlmClient(LlmSettings(base_url=stub.url, model="tiny", max_retries=0))
    return ScenarioBackend(client, "s", parse_repairs=parse_repairs)


# --- slots --------------------------------------------------------------------------------


def test_every_open_family_has_a_bounded_schema():
    open_ = [family for family in registry.all() if family.slots is not None]
    assert open_, "no family opens slots"
    for family in open_:
        schema = family.slots.bounded_schema()
        assert schema["additionalProperties"] is False
        assert {"scenario", "persona"} <= set(schema["properties"])
        assert 0 < max_json_chars(schema) < 2000, family.name


def test_a_reply_is_never_longer_than_the_bound():
    slots = registry.get("log-report").slots
    longest = {
        "scenario": "A" + " abcdefghijkl" * 16,
        "persona": " ".join(["abcdefghijkl"] * 5),
        "app": "a" * 16,
        "services": [f"{c}" * 16 for c in "abcdefgh"],
    }
    slots.model_validate(longest)  # the longest content the schema admits
    assert len(json.dumps(longest)) <= max_json_chars(slots.bounded_schema())


@pytest.mark.parametrize(
    ("pattern", "message"),
    [(r"^[a-z]+$", "no bounded longest match"), (r"[a-z]{3}", "must start with")],
)
def test_unbounded_or_unanchored_patterns_are_refused(pattern, message):
    with pytest.raises(ValueError, match=message):
        text(pattern)


def test_a_free_list_or_string_is_unbounded():
    class Free(BaseModel):
        names: list[str]

    with pytest.raises(UnboundedSchemaError, match="maxItems"):
        max_json_chars(Free.model_json_schema())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"services": ["a1b", "tides", " tides", "x12", "y12", "z12"]}, "appears twice"),
        ({"services": ["tides"]}, "at least 6"),
        ({"app": "Harbour Gate"}, "pattern"),
        ({"scenario": "There were 42 errors on the proxy"}, "pattern"),
        ({"extra": "x"}, "Extra inputs"),
    ],
)
def test_content_is_validated(change, message):
    slots = registry.get("log-report").slots
    with pytest.raises(ValidationError, match=message):
        slots.model_validate({**CONTENT, **change})


def test_sql_keywords_are_refused():
    assert not_sql_keyword("orders") == "orders"
    with pytest.raises(ValueError, match="SQL keyword"):
        not_sql_keyword("order")


# --- the scenario backend -----------------------------------------------------------------


def test_content_becomes_a_task_built_by_the_family(stub):
    stub.queue = [reply(json.dumps(CONTENT), completion=60)]
    spec, usage = backend(stub).make(LEAF, Difficulty.MEDIUM, 11, "logs-access-000")
    request = stub.requests[0]
    slots = registry.get("log-report").slots
    assert request["max_tokens"] == reply_budget(slots)
    assert "harbour" not in json.dumps(request["messages"])  # the model chose the names
    log = b"".join(v for k, v in spec.files.items() if k.startswith("environment/"))
    assert b"harbour-gate" in log or b"harbour-gate" in spec.files["instruction.md"]
    assert any(s.encode() in log for s in CONTENT["services"])
    assert not any(s.encode() in log for s in ("billing", "checkout", "inventory"))
    instruction = spec.files["instruction.md"].decode()
    assert instruction.startswith(f"Context: {CONTENT['scenario']}.")
    assert f"This request comes from {CONTENT['persona']}." in instruction
    provenance = spec.config.provenance
    assert (provenance.generator, provenance.mode, provenance.model) == (
        "log-report",
        "scenario",
        "tiny",
    )
    assert provenance.prompt_version == "scenario_v1"
    assert provenance.slots == ["scenario", "persona", "app", "services"]
    assert provenance.content == CONTENT and provenance.seed == 11
    assert usage.calls == 1 and usage.completion_tokens == 60


def test_same_content_and_seed_give_the_same_task(stub):
    stub.queue = [reply(json.dumps(CONTENT)), reply(json.dumps(CONTENT))]
    first, _ = backend(stub).make(LEAF, Difficulty.HARD, 5, "logs-access-000")
    again, _ = backend(stub).make(LEAF, Difficulty.HARD, 5, "logs-access-000")
    assert first.files == again.files


def test_bad_content_goes_back_with_the_reason(stub):
    twice = {**CONTENT, "services": ["tides", "tides", "a12", "b12", "c12", "d12"]}
    stub.queue = [reply(json.dumps(twice)), reply(json.dumps(CONTENT))]
    spec, usage = backend(stub).make(LEAF, Difficulty.EASY, 3, "logs-access-001")
    retry = stub.requests[1]["messages"]
    assert retry[-2]["role"] == "assistant" and "appears twice" in retry[-1]["content"]
    assert usage.calls == 2 and spec.config.provenance.content == CONTENT
    assert spec.config.provenance.notes == []


def test_a_slot_the_model_never_fills_usably_is_the_familys_own(stub):
    """One unusable slot no longer rejects the candidate: after the repair, that slot is
    drafted from the family's vocabulary and the provenance says so."""
    twice = {**CONTENT, "services": ["tides", "tides", "a12", "b12", "c12", "d12"]}
    stub.queue = [reply(json.dumps(twice)), reply(json.dumps(twice))]
    spec, usage = backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-002")
    provenance = spec.config.provenance
    assert usage.calls == 2
    assert provenance.slots == ["scenario", "persona", "app"]
    assert "services" not in provenance.content
    assert len(provenance.notes) == 1 and "services" in provenance.notes[0]
    assert "appears twice" in provenance.notes[0]
    log = b"".join(v for k, v in spec.files.items() if k.startswith("environment/"))
    assert b"harbour-gate" in log or b"harbour-gate" in spec.files["instruction.md"]
    assert not any(s.encode() in log for s in ("a12", "b12", "c12"))  # the family's services
    stub.queue = [reply(json.dumps(twice)), reply(json.dumps(twice))]
    again, _ = backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-002")
    assert again.files == spec.files  # the fallback is drawn from the seed too


def test_a_repeated_item_is_dropped_while_the_list_stays_long_enough(stub):
    seven = {**CONTENT, "services": [*CONTENT["services"], "Tides"]}
    stub.queue = [reply(json.dumps(seven))]
    spec, usage = backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-006")
    assert usage.calls == 1 and spec.config.provenance.content == CONTENT


def test_usable_slots_of_each_reply_are_kept(stub):
    first = {**CONTENT, "services": ["tides", "tides", "a12", "b12", "c12", "d12"]}
    second = {k: v for k, v in CONTENT.items() if k != "app"}
    second["services"] = ["quays", "locks", "buoys", "docks", "ports", "slips"]
    stub.queue = [reply(json.dumps(first)), reply(json.dumps(second))]
    spec, _ = backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-007")
    assert spec.config.provenance.slots == ["scenario", "persona", "app", "services"]
    assert spec.config.provenance.content == {**CONTENT, "services": second["services"]}


def test_too_few_model_slots_is_a_rejection(stub):
    """A candidate counts as hybrid only when the model filled at least half of the family's
    own slots; otherwise it is rejected (bad_content), never passed off as model-written."""
    bare = {"scenario": CONTENT["scenario"], "persona": CONTENT["persona"]}
    stub.queue = [reply(json.dumps(bare)), reply(json.dumps(bare))]
    with pytest.raises(GenerationError, match="after 2 tries: too few usable slots") as info:
        backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-008")
    assert info.value.outcome is QualityOutcome.BAD_CONTENT
    assert info.value.model == "tiny" and info.value.usage.calls == 2
    assert "app: missing" in str(info.value)


def test_a_family_failing_on_the_content_drafts_without_one_slot(stub, monkeypatch):
    """The family fails on the content as a whole (no ContentError naming a slot): after the
    repair rounds, each of the family's own slots is left out in turn."""
    family_class = type(registry.get("log-report"))
    original = family_class.draft

    def draft(self, rng, difficulty, params):
        if self.content and "services" in self.content:
            raise AssertionError("no data exposes every near miss")
        return original(self, rng, difficulty, params)

    monkeypatch.setattr(family_class, "draft", draft)
    stub.queue = [reply(json.dumps(CONTENT)), reply(json.dumps(CONTENT))]
    spec, usage = backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-012")
    assert "could not use it" in stub.requests[1]["messages"][-1]["content"]
    provenance = spec.config.provenance
    assert usage.calls == 2 and provenance.slots == ["scenario", "persona", "app"]
    assert provenance.notes[0].startswith("slot services drafted from the family's own")
    assert "AssertionError" in provenance.notes[0]


def test_a_slot_that_gives_an_answer_away_is_dropped(stub):
    from dataclasses import replace

    from factory.generate.scenario import _leaking_slots

    stub.queue = [reply(json.dumps(CONTENT))]
    spec, _ = backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-009")
    leaking = replace(spec, secrets=("proxy",))  # a word of the scenario only
    assert _leaking_slots(dict(CONTENT), leaking) == ["scenario"]
    leaking = replace(spec, secrets=("engineer",))
    assert _leaking_slots(dict(CONTENT), leaking) == ["persona"]
    leaking = replace(spec, secrets=("tides",))  # not in the instruction: nothing leaks
    assert _leaking_slots(dict(CONTENT), leaking) == []
    leaking = replace(spec, secrets=("harbour-gate",))
    named = "harbour-gate" in spec.instruction
    assert _leaking_slots(dict(CONTENT), leaking) == (["app"] if named else [])


def test_a_reply_that_did_not_parse_is_noted(stub):
    stub.queue = [reply("Sure! The proxy is called edge."), reply(json.dumps(CONTENT))]
    spec, usage = backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-011")
    assert usage.calls == 2 and spec.config.provenance.content == CONTENT
    assert spec.config.provenance.notes == ["replies that were no JSON object: 1"]


def test_a_reply_that_is_no_json_is_unparseable(stub):
    stub.queue = [reply("Sure! The proxy is called edge."), reply("[1, 2]")]
    with pytest.raises(GenerationError) as info:
        backend(stub).make(LEAF, Difficulty.EASY, 4, "logs-access-003")
    assert info.value.outcome is QualityOutcome.UNPARSEABLE
    assert "not a JSON object" in stub.requests[1]["messages"][-1]["content"]


def test_repair_sends_the_verdict_back(stub):
    from factory.generate.certify import Certificate

    stub.queue = [reply(json.dumps(CONTENT)), reply(json.dumps(CONTENT))]
    b = backend(stub)
    spec, _ = b.make(LEAF, Difficulty.EASY, 7, "logs-access-004")
    repaired, _ = b.repair(LEAF, spec, Certificate("leak", "instruction.md gives away 12"))
    assert "leak" in stub.requests[1]["messages"][-1]["content"]
    assert repaired.config.provenance.prompt_version == "scenario_v1+scenario_repair_v1"


def test_the_family_without_content_is_unchanged():
    family = registry.get("log-report")
    plain = family.draft(random.Random(9), Difficulty.MEDIUM, {})
    again = registry.get("log-report").draft(random.Random(9), Difficulty.MEDIUM, {})
    assert plain.context == again.context
    with pytest.raises(TypeError, match="takes no"):
        family.with_content(Slots(scenario="The team met on a quiet day", persona="a clerk"))


# --- taxonomy and backend choice ----------------------------------------------------------


def test_a_family_without_slots_cannot_take_scenario_mode():
    closed = next(f.name for f in registry.all() if f.slots is None)
    with pytest.raises(TaskFormatError, match="opens slots") as info:
        taxonomy(closed)
    assert "params.mode" in str(info.value)


def test_hybrid_leaves_need_an_endpoint_unless_procedural():
    tax = taxonomy()
    with pytest.raises(Exception, match="FACTORY_LLM_BASE_URL"):
        backend_factory(tax, None, LlmOptions(base_url=None, model=None, api_key=""))
    pick = backend_factory(
        tax, BackendChoice.PROCEDURAL, LlmOptions(base_url=None, model=None, api_key="")
    )
    assert isinstance(pick(LEAF), ProceduralBackend)
    pick = backend_factory(
        tax, None, LlmOptions(base_url="http://127.0.0.1:9/v1", model="m", api_key="none")
    )
    assert isinstance(pick(LEAF), ScenarioBackend)


def example_content(slots: type[Slots]) -> Slots:
    """Each slot's first documented example (the prompt shows them; they must be valid)."""
    return slots.model_validate(
        {name: field.examples[0] for name, field in slots.model_fields.items()}
    )


@pytest.mark.parametrize(
    "name", sorted(family.name for family in registry.all() if family.slots is not None)
)
@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_each_open_family_drafts_from_its_example_content(name, difficulty):
    from factory.generate.render import Origin, render_family

    family = registry.get(name)
    content = example_content(family.slots)
    examples = {slot: field.examples[0] for slot, field in family.slots.model_fields.items()}
    assert family.slots.salvage(examples, family.title).problems == {}
    task = family.with_content(content)
    draft = task.draft(random.Random(3), difficulty, dict(family.default_params))
    origin = Origin(
        suite="s", taxonomy_path="t/c/s", category=family.category, seed=3, generator=name
    )
    spec = render_family(task, draft, task_id="c-s-000", difficulty=difficulty, origin=origin)
    shipped = b"".join(spec.files.values()).decode(errors="replace")
    used = [
        value
        for slot, value in content.model_dump().items()
        if slot not in ("scenario", "persona")
        for value in (value if isinstance(value, list) else [value])
        if value in shipped
    ]
    assert used, f"{name}: none of the model's content reaches the task"
    plain = registry.get(name).draft(random.Random(3), difficulty, dict(family.default_params))
    assert plain.context != draft.context


def test_content_that_echoes_the_prompt_goes_back(stub):
    echo = {**CONTENT, "persona": "who asks for the task"}
    title = registry.get("log-report").title
    titled = {**CONTENT, "scenario": title[0].upper() + title[1:]}
    stub.queue = [reply(json.dumps(echo)), reply(json.dumps(titled)), reply(json.dumps(CONTENT))]
    spec, usage = backend(stub, parse_repairs=2).make(LEAF, Difficulty.EASY, 3, "logs-a-005")
    assert "repeats the field's description" in stub.requests[1]["messages"][-1]["content"]
    assert "repeats the title" in stub.requests[2]["messages"][-1]["content"]
    assert usage.calls == 3 and spec.config.provenance.content == CONTENT


def test_an_echoed_persona_leaves_the_request_without_one(stub):
    echo = {**CONTENT, "persona": "who asks for the task"}
    stub.queue = [reply(json.dumps(echo)), reply(json.dumps(echo))]
    spec, _ = backend(stub).make(LEAF, Difficulty.EASY, 3, "logs-a-010")
    instruction = spec.files["instruction.md"].decode()
    assert instruction.startswith(f"Context: {CONTENT['scenario']}.")
    assert "This request comes from" not in instruction
    assert spec.config.provenance.slots == ["scenario", "app", "services"]
    assert "repeats the field's description" in spec.config.provenance.notes[0]


def test_an_echo_of_another_fields_description_or_an_echoed_item_is_left_out():
    slots = registry.get("tool-calendar").slots
    salvage = slots.salvage(
        {
            "scenario": "The tea importer moved its tasting room upstairs",
            "persona": "one plain sentence without digits",  # the scenario's description
            "rooms": ["Assam", "Darjeeling", "Oolong", "Sencha", "Matcha", "Pekoe"],
            "topics": [
                "tasting notes",
                "meeting rooms",
                "import quotas",
                "shipping dates",
                "blends",
            ],
        }
    )
    assert "repeats the prompt" in salvage.problems["persona"]
    assert salvage.values["topics"] == [
        "tasting notes",
        "import quotas",
        "shipping dates",
        "blends",
    ]
    short = slots.salvage(
        {**salvage.values, "topics": ["tasting notes", "meeting rooms", "import quotas", "blends"]}
    )
    assert "topics" in short.problems and "repeats" in short.problems["topics"]


def test_salvage_checks_each_slot_alone():
    slots = registry.get("file-search").slots
    salvage = slots.salvage(
        {
            "scenario": "The harbour office keeps its files on one share",
            "persona": "the harbour master",
            "share": "Harbour Docs",
            "users": ["root", "marta", "oskar"],
            "file_words": ["chart", "chart", "permit", "roster", "manifest", "invoice", "tide"],
        }
    )
    assert set(salvage.values) == {"scenario", "persona", "file_words"}
    assert salvage.values["file_words"] == [
        "chart",
        "permit",
        "roster",
        "manifest",
        "invoice",
        "tide",
    ]
    assert "pattern" in salvage.problems["share"]
    assert "already has" in salvage.problems["users"]
    assert slots.salvage("not a dict").problems["scenario"] == "scenario: missing"


def test_file_search_never_needs_a_file_as_a_folder():
    """Found by a SmolLM2 run: with few file words, the near miss ``<word>.<ext>/...`` (a
    folder named like a match) landed where a matching file of that name already was, and the
    image build failed. The folder now moves aside, so the seed tree always unpacks."""
    import io
    import tarfile

    family = registry.get("file-search")
    content = family.slots.model_validate(
        {
            "scenario": "School districts in the city",
            "persona": "the school district itself",
            "share": "letters-of-my-fk",
            "users": ["iathrwjhgijm", "abzwvjc1t0y39578", "ncc2o6s4djmzjlw5"],
            "file_words": [
                "school",
                "itrends",
                "myfk",
                "thisisaarntu",
                "iathrwjhgijm",
                "abzwvjc",
                "theiathrwjhg",
                "nccbjxythlsw",
            ],
        }
    )
    draft = family.with_content(content).draft(random.Random(270318532125234), Difficulty.EASY, {})
    with tarfile.open(fileobj=io.BytesIO(draft.files["environment/seed.tar.gz"])) as tar:
        regular = {m.name for m in tar.getmembers() if m.isfile()}
    assert regular
    assert not [f for f in regular if any(g.startswith(f + "/") for g in regular)]
