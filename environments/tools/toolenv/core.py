"""Tools, domains and the environment that executes calls against a JSON state.

A domain module defines a :class:`Domain`: its tools (plain functions decorated with
:meth:`Domain.tool`, each with a JSON schema for its arguments), a policy document for the
agent, and policy rules. A rule looks at a call before it runs and returns a message when
the call breaks the policy; the call is still refused (error to the agent) and the violation is
logged, so a verifier can fail a task whose agent tried a forbidden action.

A domain may also name the reasons for which a request goes to a human colleague
(``handovers``): it then serves ``transfer_to_human(reason, summary)``, which records the reason
in the state (``state["handovers"]``), and its policy lists the reasons.

Everything here is deterministic: no clocks, no randomness. "Today" is part of the state.
"""

from __future__ import annotations

import copy
import datetime
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


class ToolError(Exception):
    """A call the domain refuses (bad arguments, missing record, business rule). The message
    goes back to the agent as the call's error."""


@dataclass
class Tool:
    name: str
    description: str
    parameters: JSON
    """JSON schema (type: object) of the arguments, as the domain wrote it: optional arguments
    are left out of ``required``, a map is an object with an ``additionalProperties`` schema."""
    fn: Callable[..., Any]
    mutates: bool
    """Whether the tool changes the state (read-only tools never do)."""

    def published_parameters(self) -> tuple[JSON, bool]:
        """(schema, strict): the schema offered to agents, in OpenAI's strict form when the
        domain's schema has one (see :func:`strict_schema`), else as written."""
        try:
            return strict_schema(self.parameters), True
        except NotStrictError:
            return self.parameters, False

    def openai(self) -> JSON:
        """The tool in OpenAI's tool-calling format (``strict`` when the schema allows it)."""
        parameters, strict = self.published_parameters()
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
                "strict": strict,
            },
        }

    def mcp(self) -> JSON:
        """The tool as an MCP ``tools/list`` entry (the same schema as :meth:`openai`)."""
        parameters, _strict = self.published_parameters()
        return {"name": self.name, "description": self.description, "inputSchema": parameters}


Rule = Callable[[JSON, str, JSON], "str | None"]
"""(state, tool name, arguments) -> a violation message, or None when the call is allowed."""


HANDOVER_TOOL = "transfer_to_human"


@dataclass
class Domain:
    name: str
    title: str
    policy: str
    """The policy document the agent must follow (markdown); with ``handovers``, it ends with
    a section that lists them."""
    tools: dict[str, Tool] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    handovers: dict[str, str] = field(default_factory=dict)
    """Reasons to hand a request over to a human: code -> when it applies (policy words)."""

    def __post_init__(self) -> None:
        if self.handovers:
            self.policy = self.policy.rstrip() + "\n\n" + handover_section(self.handovers)
            self._add_handover_tool()

    def _add_handover_tool(self) -> None:
        reasons = sorted(self.handovers)

        @self.tool(
            "Hand the request over to a human colleague, for one of the reasons the policy "
            "lists; a summary of what the customer needs goes with it.",
            {
                "reason": {"type": "string", "enum": reasons},
                "summary": {"type": "string", "description": "what the colleague should know"},
            },
            mutates=True,
        )
        def transfer_to_human(state: JSON, reason: str, summary: str) -> JSON:
            require(bool(summary.strip()), "give the colleague a summary of the request")
            state.setdefault("handovers", []).append({"reason": reason})
            return {"transferred": True, "reason": reason, "ticket": len(state["handovers"])}

    def tool(
        self,
        description: str,
        properties: JSON | None = None,
        *,
        required: list[str] | None = None,
        mutates: bool = False,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register ``fn(state, **arguments)`` as a tool. ``properties`` is the JSON schema
        of each argument; all are required unless ``required`` says otherwise."""

        def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(fn.__name__, description, fn, properties, required, mutates)
            return fn

        return wrap

    def add_tool(
        self,
        name: str,
        description: str,
        fn: Callable[..., Any],
        properties: JSON | None = None,
        required: list[str] | None = None,
        mutates: bool = False,
    ) -> None:
        """Register ``fn`` as the tool ``name`` (see :meth:`tool`)."""
        props = properties or {}
        schema = {
            "type": "object",
            "properties": props,
            "required": list(props) if required is None else required,
            "additionalProperties": False,
        }
        self.tools[name] = Tool(name, description, schema, fn, mutates)
        if HANDOVER_TOOL in self.tools:  # listed last: the domain's own tools come first
            self.tools[HANDOVER_TOOL] = self.tools.pop(HANDOVER_TOOL)

    # The read-only tools that every domain has a few of, each one piece of logic: a whole
    # table, one record by its id, the rows of a table that belong to one record.
    def table_tool(self, name: str, description: str, collection: str) -> None:
        """Register ``name()``: all of ``state[collection]``."""

        def read(state: JSON) -> list[JSON]:
            return state[collection]

        self.add_tool(name, description, read)

    def record_tool(
        self, name: str, description: str, key: str, get: Callable[[JSON, str], JSON]
    ) -> None:
        """Register ``name(key)``: the record ``get(state, key)`` finds (a :func:`finder`, which
        refuses an unknown id)."""

        def read(state: JSON, **args: str) -> JSON:
            return get(state, args[key])

        self.add_tool(name, description, read, {key: {"type": "string"}})

    def rows_tool(
        self,
        name: str,
        description: str,
        collection: str,
        key: str,
        owner: Callable[[JSON, str], JSON],
    ) -> None:
        """Register ``name(key)``: the rows of ``state[collection]`` whose ``key`` is the given
        id, once ``owner(state, id)`` (a :func:`finder`) has found the record they belong to."""

        def read(state: JSON, **args: str) -> list[JSON]:
            owner(state, args[key])
            return [row for row in state[collection] if row[key] == args[key]]

        self.add_tool(name, description, read, {key: {"type": "string"}})

    def rule(self, fn: Rule) -> Rule:
        """Register a policy rule."""
        self.rules.append(fn)
        return fn

    def rule_on(self, *tools: str) -> Callable[[Rule], Rule]:
        """Register a policy rule that judges only calls of ``tools`` (any other call passes
        without asking it)."""
        names = frozenset(tools)

        def wrap(fn: Rule) -> Rule:
            def check(state: JSON, tool: str, args: JSON) -> str | None:
                return fn(state, tool, args) if tool in names else None

            self.rules.append(check)
            return fn

        return wrap


def check_arguments(tool: Tool, arguments: Any) -> None:
    """Validate arguments against the tool's schema (the subset our domains use)."""
    if not isinstance(arguments, dict):
        raise ToolError(f"{tool.name}: arguments must be a JSON object")
    props = tool.parameters["properties"]
    for name in tool.parameters["required"]:
        if name not in arguments:
            raise ToolError(f"{tool.name}: missing required argument '{name}'")
    for name, value in arguments.items():
        if name not in props:
            raise ToolError(f"{tool.name}: unknown argument '{name}'")
        _check_type(f"{tool.name}.{name}", props[name], value)


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _check_type(where: str, schema: JSON, value: Any) -> None:
    kind = schema.get("type")
    if kind is None:
        return
    ok = isinstance(value, _TYPES[kind]) and not (
        kind in ("integer", "number") and isinstance(value, bool)
    )
    if not ok:
        raise ToolError(f"{where}: expected {kind}, got {json.dumps(value)}")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"{where}: must be one of {', '.join(map(str, schema['enum']))}")
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            _check_type(f"{where}[{i}]", schema["items"], item)


# --- OpenAI's strict mode -------------------------------------------------------------
# Strict function calling (``"strict": true``) accepts a subset of JSON Schema: every object
# lists all its properties in ``required`` and sets ``additionalProperties: false``; an optional
# argument is a required one whose type also allows null. Domains write their schemas the plain
# way; the strict form is derived here, and a call made in the strict form is mapped back
# before it is checked, so a tool accepts exactly what it accepted before, plus the strict
# spellings of the same calls (null for an omitted optional argument, a map as name/value pairs).

PAIR_KEYS = ("name", "value")


class NotStrictError(ValueError):
    """A schema with no strict form (e.g. an object whose keys and values are left open)."""


def strict_schema(schema: JSON, where: str = "$") -> JSON:
    """The strict-mode form of a tool's argument schema (raises :class:`NotStrictError`)."""
    out = dict(schema)
    if "items" in schema:
        out["items"] = strict_schema(schema["items"], f"{where}[]")
    if "anyOf" in schema:
        out["anyOf"] = [strict_schema(s, f"{where}|{i}") for i, s in enumerate(schema["anyOf"])]
    if schema.get("type") != "object":
        return out
    if "properties" in schema:
        required = set(schema.get("required", list(schema["properties"])))
        properties = {}
        for name, sub in schema["properties"].items():
            strict = strict_schema(sub, f"{where}.{name}")
            properties[name] = strict if name in required else _nullable(strict)
        out.update(properties=properties, required=list(properties), additionalProperties=False)
        return out
    value = schema.get("additionalProperties")
    if isinstance(value, dict):  # a map: offered as a list of {name, value} pairs
        pair = {
            "type": "object",
            "properties": {"name": {"type": "string"}, "value": strict_schema(value, where)},
            "required": list(PAIR_KEYS),
            "additionalProperties": False,
        }
        text = schema.get("description", "")
        note = "each entry is one key of the map: {name, value}"
        described = {"description": f"{text}; {note}" if text else note}
        return {"type": "array", **described, "items": pair}
    raise NotStrictError(f"{where}: an object needs properties or an additionalProperties schema")


def _nullable(schema: JSON) -> JSON:
    out = dict(schema)
    kind = schema.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    elif "anyOf" in schema:
        out["anyOf"] = [*schema["anyOf"], {"type": "null"}]
    if "enum" in schema and None not in schema["enum"]:
        out["enum"] = [*schema["enum"], None]
    return out


def from_strict_arguments(schema: JSON, value: Any) -> Any:
    """Map a value in the strict form of ``schema`` back to the form the domain wrote: a null
    optional property is dropped, a list of {name, value} pairs for a map becomes the map.
    Anything else is returned unchanged (for :func:`check_arguments` to judge)."""
    if schema.get("type") == "array" and isinstance(value, list) and "items" in schema:
        return [from_strict_arguments(schema["items"], item) for item in value]
    if schema.get("type") != "object":
        return value
    if "properties" in schema and isinstance(value, dict):
        required = set(schema.get("required", list(schema["properties"])))
        out = {}
        for name, item in value.items():
            sub = schema["properties"].get(name)
            if sub is None:
                out[name] = item
            elif not (item is None and name not in required):
                out[name] = from_strict_arguments(sub, item)
        return out
    entry = schema.get("additionalProperties")
    if isinstance(entry, dict) and isinstance(value, list) and all(_is_pair(p) for p in value):
        return {p["name"]: from_strict_arguments(entry, p["value"]) for p in value}
    return value


def _is_pair(item: Any) -> bool:
    return isinstance(item, dict) and set(item) == set(PAIR_KEYS) and isinstance(item["name"], str)


class Environment:
    """A domain bound to a state. ``call`` runs one tool call and logs it."""

    def __init__(self, domain: Domain, state: JSON) -> None:
        self.domain = domain
        self.initial = copy.deepcopy(state)
        self.state = copy.deepcopy(state)
        self.log: list[JSON] = []

    def reset(self) -> None:
        self.state = copy.deepcopy(self.initial)
        self.log = []

    def call(self, name: str, arguments: Any) -> JSON:
        """Run a call. Returns ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ...}``;
        a refused policy violation also carries ``"violation"``. The entry is logged."""
        entry: JSON = {"tool": name, "arguments": arguments}
        tool = self.domain.tools.get(name)
        try:
            if tool is None:
                raise ToolError(
                    f"unknown tool '{name}'; tools: {', '.join(sorted(self.domain.tools))}"
                )
            arguments = from_strict_arguments(tool.parameters, arguments)
            entry["arguments"] = arguments
            check_arguments(tool, arguments)
            for rule in self.domain.rules:
                message = rule(self.state, name, arguments)
                if message:
                    entry["violation"] = message
                    raise ToolError(f"refused by policy: {message}")
            entry.update(ok=True, result=self.run_tool(tool, arguments))
        except ToolError as exc:
            entry.update(ok=False, error=str(exc))
        self.log.append(entry)
        return {k: v for k, v in entry.items() if k in ("ok", "result", "error", "violation")}

    def run_tool(self, tool: Tool, arguments: JSON) -> Any:
        """Run a tool on the state: a mutating one on a copy, which replaces the state only
        when it succeeds, so a tool that fails half-way leaves the state untouched."""
        scratch = copy.deepcopy(self.state) if tool.mutates else self.state
        result = tool.fn(scratch, **arguments)
        if tool.mutates:
            self.state = scratch
        return result

    def violations(self) -> list[JSON]:
        return [e for e in self.log if "violation" in e]


def handover_section(handovers: dict[str, str]) -> str:
    """The policy section that lists the reasons to hand a request over to a human."""
    lines = "\n".join(f"- `{code}`: {text}" for code, text in sorted(handovers.items()))
    return (
        "# Handing over to a human\n\n"
        f"Some requests only a human colleague may handle. When a request, or a part of it, is "
        f"one of these, call `{HANDOVER_TOOL}` once with its reason and a short summary, and do "
        "not handle that part yourself (the rest of the request is still yours):\n\n"
        f"{lines}\n\nNever hand over for any other reason.\n"
    )


def load_domain(name: str) -> Domain:
    """The ``DOMAIN`` of ``toolenv.domains.<name>``."""
    import importlib

    package = __name__.rsplit(".", 1)[0]
    module = importlib.import_module(f"{package}.domains.{name.replace('-', '_')}")
    return module.DOMAIN


def require(condition: bool, message: str) -> None:
    """Raise :class:`ToolError` with ``message`` unless ``condition``."""
    if not condition:
        raise ToolError(message)


def lookup(rows: list[JSON], key: str, value: Any) -> JSON | None:
    """The first row whose ``key`` equals ``value``, or None (for rules, which judge calls whose
    records may not exist: the tool itself then says so)."""
    return next((row for row in rows if row.get(key) == value), None)


def days_between(earlier: str, later: str) -> int | None:
    """Whole days from the ISO date ``earlier`` to ``later``; None when either is no ISO date
    (a rule has nothing to judge then)."""
    try:
        return (datetime.date.fromisoformat(later) - datetime.date.fromisoformat(earlier)).days
    except ValueError:
        return None


def find(rows: list[JSON], key: str, value: Any, what: str) -> JSON:
    """The row whose ``key`` equals ``value``, or a ToolError naming ``what``."""
    for row in rows:
        if row.get(key) == value:
            return row
    raise ToolError(f"no {what} with {key} {json.dumps(value)}")


def finder(collection: str, key: str, what: str) -> Callable[[JSON, Any], JSON]:
    """``get(state, value)``: the row of ``state[collection]`` whose ``key`` equals ``value``, or
    a ToolError naming ``what`` (see :func:`find`); a domain's accessor for one kind of record."""

    def get(state: JSON, value: Any) -> JSON:
        return find(state[collection], key, value, what)

    return get


def days_past(earlier: str, later: str, window: int) -> int | None:
    """The whole days from ``earlier`` to ``later`` when they are more than ``window``; None when
    within it, or when either is no ISO date (see :func:`days_between`)."""
    age = days_between(earlier, later)
    return age if age is not None and age > window else None


def acting_user(state: JSON) -> JSON:
    """The user the agent works for: the row of ``state["users"]`` named by
    ``state["acting_user"]``."""
    return find(state["users"], "user_id", state["acting_user"], "user")
