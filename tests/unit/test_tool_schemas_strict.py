"""Every tool of every domain is offered in a form OpenAI's strict function calling accepts,
and calls written in that form do what the plain calls do.

The checker below is written from OpenAI's documented rules for Structured Outputs /
``strict: true`` function parameters ("Supported schemas"), independently of
``factory.toolenv.core.strict_schema``, which produces the schemas:

* the root is an object (not ``anyOf``);
* every object sets ``additionalProperties: false`` and lists every property in ``required``
  (an optional field is a required one whose type also allows ``null``);
* types are string, number, integer, boolean, object, array and null, or ``anyOf`` of
  schemas that follow the same rules;
* only the supported keywords appear: for strings ``pattern`` and ``format`` (from a fixed
  list), for numbers ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``/
  ``multipleOf``, for arrays ``minItems``/``maxItems``; ``allOf``, ``not``, ``oneOf``,
  conditionals, ``default``, ``patternProperties``, ``uniqueItems``, ... are refused;
* at most 5000 object properties in all and 10 levels of nesting; property names, enum and
  const values at most 120,000 characters in all; at most 1000 enum values in all, and a
  string enum of more than 250 values at most 15,000 characters.
"""

from __future__ import annotations

import pkgutil
import random
from typing import Any

import factory.toolenv.domains as domains_package
import pytest
from factory.toolenv.core import Environment, load_domain, strict_schema

from factory.families import registry
from factory.generate.taxonomy import Difficulty

TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
COMMON = {"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs", "definitions"}
BY_TYPE = {
    "string": {"pattern", "format"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "array": {"items", "minItems", "maxItems"},
    "object": {"properties", "required", "additionalProperties"},
    "boolean": set(),
    "null": set(),
}


class Budget:
    def __init__(self) -> None:
        self.properties = 0
        self.chars = 0
        self.enum_values = 0


def strict_violations(parameters: dict) -> list[str]:
    """Where ``parameters`` breaks OpenAI's strict-mode rules (empty: accepted)."""
    problems: list[str] = []
    if parameters.get("type") != "object" or "anyOf" in parameters:
        problems.append("$: the root must be an object, not anyOf")
    budget = Budget()
    _check(parameters, "$", 1, budget, problems)
    if budget.properties > 5000:
        problems.append(f"{budget.properties} object properties (at most 5000)")
    if budget.chars > 120_000:
        problems.append(f"{budget.chars} characters of names and values (at most 120,000)")
    if budget.enum_values > 1000:
        problems.append(f"{budget.enum_values} enum values (at most 1000)")
    return problems


def _types(schema: dict) -> set[str]:
    kind = schema.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if kind else set()


def _check(schema: Any, where: str, depth: int, budget: Budget, problems: list[str]) -> None:
    if not isinstance(schema, dict):
        problems.append(f"{where}: a schema must be an object")
        return
    if depth > 10:
        problems.append(f"{where}: more than 10 levels of nesting")
    kinds = _types(schema)
    if kinds - TYPES:
        problems.append(f"{where}: unsupported type {sorted(kinds - TYPES)}")
    if not kinds and not {"anyOf", "$ref", "enum", "const"} & set(schema):
        problems.append(f"{where}: no type")
    allowed = set(COMMON)
    for kind in kinds & TYPES:
        allowed |= BY_TYPE[kind]
    for key in sorted(set(schema) - allowed):
        problems.append(f"{where}: keyword {key!r} is not supported here")
    if schema.get("format") is not None and schema["format"] not in FORMATS:
        problems.append(f"{where}: format {schema['format']!r} is not supported")
    for i, option in enumerate(schema.get("anyOf", [])):
        _check(option, f"{where}.anyOf[{i}]", depth, budget, problems)
    if "enum" in schema:
        values = schema["enum"]
        budget.enum_values += len(values)
        texts = [v for v in values if isinstance(v, str)]
        budget.chars += sum(map(len, texts))
        if len(texts) > 250 and sum(map(len, texts)) > 15_000:
            problems.append(f"{where}: a string enum over 250 values longer than 15,000 chars")
        if "null" in kinds and None not in values:
            problems.append(f"{where}: nullable enum without null among its values")
    if "object" in kinds:
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            problems.append(f"{where}: an object needs properties")
            properties = {}
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties must be false")
        missing = sorted(set(properties) - set(schema.get("required", [])))
        if missing:
            problems.append(f"{where}: not required: {missing}")
        extra = sorted(set(schema.get("required", [])) - set(properties))
        if extra:
            problems.append(f"{where}: required but not a property: {extra}")
        budget.properties += len(properties)
        for name, sub in properties.items():
            budget.chars += len(name)
            _check(sub, f"{where}.{name}", depth + 1, budget, problems)
    if "array" in kinds:
        if "items" not in schema:
            problems.append(f"{where}: an array needs items")
        else:
            _check(schema["items"], f"{where}[]", depth + 1, budget, problems)


DOMAINS = sorted(m.name for m in pkgutil.iter_modules(domains_package.__path__))
TOOLS = [(d, name) for d in DOMAINS for name in sorted(load_domain(d).tools)]


def test_the_checker_refuses_what_strict_mode_refuses():
    loose = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "object"},
            "c": {"type": "integer", "default": 3},
            "d": {"type": ["string", "null"], "enum": ["x", "y"]},
        },
        "required": ["a"],
    }
    problems = " | ".join(strict_violations(loose))
    assert "$: additionalProperties must be false" in problems
    assert "not required: ['b', 'c', 'd']" in problems
    assert "$.b: an object needs properties" in problems
    assert "$.c: keyword 'default'" in problems
    assert "$.d: nullable enum without null" in problems
    assert strict_violations({"anyOf": [{"type": "object"}]})


@pytest.mark.parametrize(("domain", "tool"), TOOLS)
def test_every_tool_schema_is_strict(domain, tool):
    spec = load_domain(domain).tools[tool].openai()["function"]
    assert spec["strict"] is True
    assert strict_violations(spec["parameters"]) == []


def test_all_domains_are_covered():
    assert len(DOMAINS) >= 6 and len(TOOLS) >= 90


def test_mcp_offers_the_same_schema():
    for domain in DOMAINS:
        for tool in load_domain(domain).tools.values():
            assert tool.mcp()["inputSchema"] == tool.openai()["function"]["parameters"]


def test_a_free_form_object_is_published_as_written():
    from factory.toolenv.core import Domain, NotStrictError

    demo = Domain("demo", "Demo", "policy")

    @demo.tool("Anything goes.", {"blob": {"type": "object"}})
    def anything(state, blob):
        return blob

    spec = demo.tools["anything"].openai()["function"]
    assert spec["strict"] is False and spec["parameters"]["properties"]["blob"] == {
        "type": "object"
    }
    with pytest.raises(NotStrictError, match=r"\$\.blob"):
        strict_schema(demo.tools["anything"].parameters)


# --- calls in the strict form behave like the plain ones ---------------------------------


def _state(family: str) -> dict:
    return registry.get(family).seed_state(random.Random(5), Difficulty.EASY)


def test_null_for_an_optional_argument_means_omitted():
    state = _state("tool-crm")
    plain = Environment(load_domain("crm"), state)
    strict = Environment(load_domain("crm"), state)
    owner = state["acting_user"]
    a = plain.call("list_deals", {"owner": owner})
    b = strict.call("list_deals", {"owner": owner, "stage": None, "company_id": None})
    assert a == b and a["ok"]
    assert strict.log[-1]["arguments"] == {"owner": owner}
    refused = strict.call("list_deals", {"owner": None, "stage": 3})
    assert not refused["ok"] and "expected string" in refused["error"]


def test_a_required_argument_may_not_be_null():
    env = Environment(load_domain("crm"), _state("tool-crm"))
    result = env.call("update_deal", {"deal_id": None})
    assert not result["ok"] and "expected string" in result["error"]


def test_a_map_as_name_value_pairs_is_the_map():
    state = _state("tool-crm")
    template = next(t for t in state["templates"] if t["fields"])
    contact = next(c for c in state["contacts"] if not c.get("unsubscribed"))
    values = {name: f"text for {name}" for name in template["fields"]}
    base = {"contact_id": contact["contact_id"], "template_id": template["template_id"]}
    as_map = Environment(load_domain("crm"), state).call("send_email", {**base, "fields": values})
    pairs = [{"name": k, "value": v} for k, v in values.items()]
    as_pairs = Environment(load_domain("crm"), state).call("send_email", {**base, "fields": pairs})
    assert as_map == as_pairs
    broken = Environment(load_domain("crm"), state).call(
        "send_email", {**base, "fields": [{"key": "x", "value": "y"}]}
    )
    assert not broken["ok"] and "expected object" in broken["error"]
