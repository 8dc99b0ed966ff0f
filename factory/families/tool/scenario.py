"""A tool request as data, and running it on the host: the request's shape (do it, refuse it,
hand part of it over), the tool calls that fulfil it and their parts, and the reference chain
run against the very domain code the container serves (:mod:`factory.toolenv`): the final
state, the call log, what a refusal must name and the reply to the customer, and the solve
script that makes the calls. :mod:`factory.families.tool.toolfamily` builds tasks from these."""

from __future__ import annotations

import json
import random
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from factory.tasks.user_profile import UserProfile
from factory.toolenv.core import HANDOVER_TOOL, JSON, Environment
from factory.toolenv.dual import DualEnvironment, ScriptedCustomer
from factory.vocabulary import Difficulty

REPLY_PATH = "/home/agent/reply.md"
"""Where the agent writes its reply to the customer (the instruction says so)."""


class Shape(str, Enum):
    """What kind of answer a request calls for."""

    TASK = "task"
    """Do what is asked (policy traps among the parts are refused)."""
    REFUSAL = "refusal"
    """Everything asked is forbidden: change nothing, tell the customer what was refused."""
    HANDOVER = "handover"
    """A part only a human may handle: ``transfer_to_human`` with the right reason."""


SHAPE_WEIGHTS = {
    Difficulty.EASY: {Shape.TASK: 8, Shape.REFUSAL: 1, Shape.HANDOVER: 1},
    Difficulty.MEDIUM: {Shape.TASK: 6, Shape.REFUSAL: 2, Shape.HANDOVER: 2},
    Difficulty.HARD: {Shape.TASK: 6, Shape.REFUSAL: 2, Shape.HANDOVER: 2},
}
TRAP_COUNTS = {
    Difficulty.EASY: {0: 1},
    Difficulty.MEDIUM: {0: 2, 1: 1},
    Difficulty.HARD: {0: 1, 1: 3, 2: 2, 3: 1},
}
"""How many policy traps a request of the task shape holds, with weights."""


def draw_shape(
    rng: random.Random,
    difficulty: Difficulty,
    wanted: str = "any",
    offered: tuple[Shape, ...] = tuple(Shape),
) -> Shape:
    """The shape of a request: ``wanted`` (a family parameter) or drawn by difficulty among the
    shapes the family ``offered``."""
    names = ", ".join(s.value for s in offered)
    if wanted != "any":
        if wanted not in {s.value for s in offered}:
            raise ValueError(f"parameter shape must be any, {names}; not {wanted!r}")
        return Shape(wanted)
    weights = {s: w for s, w in SHAPE_WEIGHTS[difficulty].items() if s in offered}
    return rng.choices(list(weights), list(weights.values()))[0]


def draw_trap_count(rng: random.Random, difficulty: Difficulty, available: int) -> int:
    """How many policy traps a task-shaped request holds (0..n, at most ``available``)."""
    weights = TRAP_COUNTS[difficulty]
    return min(available, rng.choices(list(weights), list(weights.values()))[0])


SAY_CALL = "say"
"""A step of a reference chain that talks to the customer (``{"message": ...}``): a ``say``
line in a script (dual control: the customer acts on what they are asked)."""


@dataclass
class Call:
    name: str
    arguments: JSON

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, sort_keys=True)

    @property
    def line(self) -> str:
        """The call as a line of a solve script."""
        if self.name == SAY_CALL:
            return f"say {shlex.quote(self.arguments['message'])}"
        return f"tool call {self.name} {shlex.quote(self.arguments_json)}"

    def but(self, **arguments: Any) -> Call:
        """The same call with some of its ``arguments`` changed (a near miss's wrong call)."""
        return Call(self.name, {**self.arguments, **arguments})


@dataclass
class Scenario:
    """What a sampler decided: the customer's request and the calls that fulfil it."""

    request: str
    """The customer's words (becomes the heart of the instruction)."""
    calls: list[Call]
    """Reference chain, reads included; run in order on the seeded state."""
    traps: list[Call] = field(default_factory=list)
    """Calls the request tempts the agent into but the policy forbids (each must trip a rule)."""
    near_misses: dict[str, list[Call]] = field(default_factory=dict)
    """Plausible wrong chains (name -> calls) the verifier must reject."""
    secrets: list[str] = field(default_factory=list)
    """Answers that must not appear in the instruction (e.g. a record found by lookup)."""
    tags: list[str] = field(default_factory=list)
    shape: Shape = Shape.TASK
    """REFUSAL: every part of the request is a trap; the calls only look things up (or do what
    the policy asks before anything, e.g. verify the customer's identity)."""


@dataclass
class Part:
    """One piece of a request: its words, its calls, and a plausible wrong version of them."""

    text: str
    calls: list[Call]
    near: tuple[str, list[Call]] | None = None
    secrets: list[str] = field(default_factory=list)


def near_swap(
    text: str, head: list[Call], call: Call, key: str, wrong: Any, miss: str, secrets: list[str]
) -> Part:
    """A part whose calls are ``head`` then ``call``, and whose near miss ``miss`` makes the same
    calls with ``call``'s argument ``key`` set to ``wrong`` (a namesake, a sibling record, the
    other role): right in every place but one."""
    return Part(text, [*head, call], (miss, [*head, call.but(**{key: wrong})]), secrets)


def near_twin(
    text: str,
    head: list[Call],
    name: str,
    key: str,
    target: JSON,
    twin: JSON,
    miss: str,
    **args: Any,
) -> Part:
    """A part that calls ``name`` on the record ``target`` (its id ``key``, then ``args``) after
    ``head``, and whose near miss ``miss`` calls it on ``twin`` instead (:func:`near_swap`); the
    target's id is the part's secret."""
    call = Call(name, {key: target[key], **args})
    return near_swap(text, head, call, key, twin[key], miss, [target[key]])


def lasting_mistake(domain: Any, scenario: Scenario, family: str) -> list[Call]:
    """What the cheat probes do wrong before they try to wipe the record: a forbidden call (it
    stays in the call log), else a needless handover (it stays in the state). A near miss will
    not do: the right calls after it may repair it, as an honest agent may."""
    if scenario.traps:
        return scenario.traps[:1]
    if not domain.handovers:
        raise AssertionError(f"{family}: the cheat probes need a trap or a handover reason")
    reason = sorted(domain.handovers)[0]
    return [Call(HANDOVER_TOOL, {"reason": reason, "summary": "passing this one on"})]


def run_chain_logged(
    domain: Any, state: JSON, calls: list[Call], customer: UserProfile | None = None
) -> tuple[JSON, list[JSON]]:
    """The state and call log after ``calls`` on a copy of ``state`` (errors are logged);
    with a dual-control ``customer``, they answer the chain's :data:`SAY_CALL` steps."""
    env = DualEnvironment(domain, state) if customer is not None else Environment(domain, state)
    talk = ScriptedCustomer(customer.model_dump()) if customer is not None else None
    for call in calls:
        if call.name == SAY_CALL and talk is not None:
            _reply, act = talk.answer(call.arguments["message"])
            if act:
                env.customer_call(act)  # type: ignore[attr-defined]
        else:
            env.call(call.name, call.arguments)
    return env.state, env.log


def chain_runner(dual: bool, customer: UserProfile | None) -> Callable[..., JSON]:
    """How a reference chain runs: :func:`run_chain`, or with the customer acting on what the
    chain asks them (dual control; every step, the customer's too, must succeed)."""
    if not dual:
        return lambda domain, state, calls, what: run_chain(domain, state, calls, what=what)

    def run(domain: Any, state: JSON, calls: list[Call], what: str) -> JSON:
        final, log = run_chain_logged(domain, state, calls, customer)
        failed = [entry for entry in log if not entry.get("ok")]
        if failed:
            raise AssertionError(f"{what}: a step failed: {json.dumps(failed[0])[:300]}")
        if not any(entry.get("by") == "customer" for entry in log):
            raise AssertionError(f"{what}: the customer never acted")
        return final

    return run


def refusal_subjects(scenario: Scenario, state: JSON) -> list[str]:
    """What a refusal must name, one per trap when the request names it: an argument of the
    forbidden call quoted in the request (a reservation code), else the name or title of the
    record that argument points at (a deal's name)."""
    request = scenario.request.lower()
    subjects: list[str] = []
    for trap in scenario.traps:
        values = [v for v in _strings(trap.arguments) if len(v) >= 3]
        found = next((v for v in values if v.lower() in request), None)
        if found is None:
            names = [n for v in values for n in _names_of(state, v)]
            found = next((n for n in names if n.lower() in request), None)
        if found is not None and found not in subjects:
            subjects.append(found)
    return subjects


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _names_of(state: Any, key: str) -> list[str]:
    """``name``/``title`` of every record (a dict in a list) that holds ``key`` as a value."""
    out: list[str] = []
    if isinstance(state, dict):
        for value in state.values():
            out += _names_of(value, key)
    elif isinstance(state, list):
        for row in state:
            if isinstance(row, dict) and key in row.values():
                out += [row[f] for f in ("name", "title") if isinstance(row.get(f), str)]
            out += _names_of(row, key)
    return out


def customer_reply(scenario: Scenario, violations: list[str], subjects: list[str]) -> str:
    """What the reference solution tells the customer (``reply.md``)."""
    if scenario.shape is Shape.REFUSAL:
        named = f" ({', '.join(subjects)})" if subjects else ""
        return (
            f"I'm sorry, but I cannot do what you asked{named}: our policy does not allow it "
            f"({'; '.join(violations)}). I have not changed anything."
        )
    lines = ["I have taken care of your request."]
    if any(c.name == HANDOVER_TOOL for c in scenario.calls):
        lines.append("Part of it needs a colleague: I have handed it over to them.")
    if violations:
        lines.append(
            f"I could not do everything: our policy does not allow {'; '.join(violations)}."
        )
    return " ".join(lines)


def run_chain(domain: Any, state: JSON, calls: list[Call], *, what: str) -> JSON:
    """Run calls on a copy of ``state``; every one must succeed. Returns the final state."""
    env = Environment(domain, state)
    for call in calls:
        result = env.call(call.name, call.arguments)
        if not result["ok"]:
            raise AssertionError(f"{what}: {call.name}({call.arguments_json}) failed: {result}")
    return env.state


def script_calls(script: str) -> list[tuple[str, JSON]]:
    """The tool calls a :func:`solve_script` makes (its ``tool call NAME 'ARGS'`` lines)."""
    calls = []
    for line in script.splitlines():
        if line.startswith("tool call "):
            _, _, name, arguments = shlex.split(line)
            calls.append((name, json.loads(arguments)))
    return calls


def solve_script(calls: list[Call], comment: str, reply: str = "") -> str:
    """A solve.sh making ``calls`` in order, then writing ``reply`` to the customer (if any)."""
    lines = ["#!/bin/bash", f"# {comment}", "set -uo pipefail"]
    for call in calls:
        lines.append(call.line)
    if reply:
        lines.append(f"cat > {REPLY_PATH} <<'FACTORY_REPLY'\n{reply}\nFACTORY_REPLY")
    return "\n".join(lines) + "\n"
