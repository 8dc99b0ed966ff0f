"""Tools, domains and the environment that executes calls against a JSON state.

A domain module defines a :class:`Domain`: its tools (plain functions decorated with
:meth:`Domain.tool`, each with a JSON schema for its arguments), a policy document for the
agent, and policy rules. A rule looks at a call before it runs and returns a message when
the call breaks the policy; the call is still refused (error to the agent) and the violation is
logged, so a verifier can fail a task whose agent tried a forbidden action.

Everything here is deterministic: no clocks, no randomness. "Today" is part of the state.
"""

from __future__ import annotations

import copy
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
    """JSON schema (type: object) of the arguments."""
    fn: Callable[..., Any]
    mutates: bool
    """Whether the tool changes the state (read-only tools never do)."""

    def openai(self) -> JSON:
        """The tool in OpenAI's tool-calling format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def mcp(self) -> JSON:
        """The tool as an MCP ``tools/list`` entry."""
        return {"name": self.name, "description": self.description, "inputSchema": self.parameters}


Rule = Callable[[JSON, str, JSON], "str | None"]
"""(state, tool name, arguments) -> a violation message, or None when the call is allowed."""


@dataclass
class Domain:
    name: str
    title: str
    policy: str
    """The policy document the agent must follow (markdown)."""
    tools: dict[str, Tool] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)

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
            props = properties or {}
            schema = {
                "type": "object",
                "properties": props,
                "required": list(props) if required is None else required,
                "additionalProperties": False,
            }
            self.tools[fn.__name__] = Tool(fn.__name__, description, schema, fn, mutates)
            return fn

        return wrap

    def rule(self, fn: Rule) -> Rule:
        """Register a policy rule."""
        self.rules.append(fn)
        return fn


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
            check_arguments(tool, arguments)
            for rule in self.domain.rules:
                message = rule(self.state, name, arguments)
                if message:
                    entry["violation"] = message
                    raise ToolError(f"refused by policy: {message}")
            # Work on a copy so a tool that fails half-way leaves the state untouched.
            scratch = copy.deepcopy(self.state) if tool.mutates else self.state
            result = tool.fn(scratch, **arguments)
            if tool.mutates:
                self.state = scratch
            entry.update(ok=True, result=result)
        except ToolError as exc:
            entry.update(ok=False, error=str(exc))
        self.log.append(entry)
        return {k: v for k, v in entry.items() if k in ("ok", "result", "error", "violation")}

    def violations(self) -> list[JSON]:
        return [e for e in self.log if "violation" in e]


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


def find(rows: list[JSON], key: str, value: Any, what: str) -> JSON:
    """The row whose ``key`` equals ``value``, or a ToolError naming ``what``."""
    for row in rows:
        if row.get(key) == value:
            return row
    raise ToolError(f"no {what} with {key} {json.dumps(value)}")
