"""Tool environments as procedural families: one family per tool domain.

A tool family seeds a domain's database, samples a request whose reference solution is a chain
of tool calls that follows the tools' dependency graph (one call's output is the next one's
input), runs that chain on the host against the very code the container will serve
(:mod:`factory.toolenv`), and writes the resulting state as the verifier's expectation.

Difficulty is chain length, distractor tools (every domain serves all its tools, most of them
irrelevant to a given request) and policy traps: hard requests include a part the policy
forbids, and the task fails when the agent tries it (the tool server logs the violation).

Every tool family shares the templates in ``templates/families/_tool``.
"""

from __future__ import annotations

import datetime
import json
import random
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from factory.families.base import Draft, Family
from factory.resources import templates_dir, toolenv_dir
from factory.toolenv.core import JSON, Environment, load_domain
from factory.vocabulary import Difficulty, Domain

TOOL_PORT = 8000
TOOLENV_DIR = toolenv_dir()
KIT_FILES = ("__init__.py", "core.py", "server.py", "cli.py", "domains/__init__.py")


@dataclass
class Call:
    name: str
    arguments: JSON

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, sort_keys=True)


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


@dataclass
class Part:
    """One piece of a request: its words, its calls, and a plausible wrong version of them."""

    text: str
    calls: list[Call]
    near: tuple[str, list[Call]] | None = None
    secrets: list[str] = field(default_factory=list)


def compose(
    rng: random.Random,
    parts: list[Part],
    traps: list[tuple[str, Call]],
    *,
    greetings: Callable[[], list[str]],
    byes: list[str],
    tags: list[str],
) -> Scenario:
    """The scenario of a request made of ``parts`` with the words of ``traps`` slipped in, between
    a greeting (drawn from ``greetings()``, called after the traps are placed) and a goodbye. A
    part's near miss replaces that part's calls in the otherwise right chain."""
    calls = [c for p in parts for c in p.calls]
    near = {}
    for i, part in enumerate(parts):
        if part.near:
            name, wrong = part.near
            near[name] = (
                [c for p in parts[:i] for c in p.calls]
                + wrong
                + [c for p in parts[i + 1 :] for c in p.calls]
            )
    words = [p.text for p in parts]
    for text, _ in traps:
        words.insert(rng.randint(1, len(words)), text)
    hello = rng.choice(greetings())
    bye = rng.choice(byes)
    return Scenario(
        request=" ".join(w for w in [hello, *words, bye] if w),
        calls=calls,
        traps=[t for _, t in traps],
        near_misses=near,
        secrets=[s for p in parts for s in p.secrets],
        tags=tags,
    )


class Plan:
    """Builds one scenario piece by piece: each piece plants what it needs in the state and adds
    calls, words, near misses and traps. Subclasses add the pieces of their domain."""

    def __init__(self, rng: random.Random, state: JSON, me: JSON) -> None:
        self.rng, self.state, self.me = rng, state, me
        self.calls: list[Call] = []
        self.parts: list[str] = []
        self.traps: list[Call] = []
        self.near: dict[str, list[Call]] = {}
        self.secrets: list[str] = []
        self.tags: list[str] = []

    def say(self, tag: str, options: list[str]) -> None:
        """Add one of ``options`` to the request's words, and ``tag`` to the task's tags."""
        self.parts.append(self.rng.choice(options))
        self.tags.append(tag)

    def scenario(self, domain: Any, request: str, tag: str) -> Scenario:
        """The scenario of the pieces added so far; a read made once is not repeated."""
        mutating = {name for name, tool in domain.tools.items() if tool.mutates}
        calls, seen = [], set()
        for call in self.calls:
            key = (call.name, call.arguments_json)
            if call.name in mutating or key not in seen:
                calls.append(call)
            seen.add(key)
        return Scenario(
            request=request,
            calls=calls,
            traps=self.traps,
            near_misses=self.near,
            secrets=sorted(set(self.secrets)),
            tags=[tag, *self.tags],
        )


def draw_today(rng: random.Random) -> datetime.date:
    """The day a seeded state lives in: 5 January 2026 plus up to 300 days."""
    return datetime.date(2026, 1, 5) + datetime.timedelta(days=rng.randrange(300))


def shift_date(date: str, days: int) -> str:
    """An ISO date ``days`` later (earlier when negative)."""
    return (datetime.date.fromisoformat(date) + datetime.timedelta(days=days)).isoformat()


class ToolFamily(Family):
    """Base of tool-domain families. Subclasses name their ``toolenv_domain`` and implement
    :meth:`seed_state` and :meth:`sample`."""

    domain = Domain.TOOL
    category = "tool-use"
    toolenv_domain: ClassVar[str]
    """Module name under ``factory.toolenv.domains``."""

    @property
    def templates(self) -> Path:
        return templates_dir() / "families" / "_tool"

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        raise NotImplementedError

    def sample(self, rng: random.Random, state: JSON, difficulty: Difficulty) -> Scenario:
        raise NotImplementedError

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        domain = load_domain(self.toolenv_domain)
        state = self.seed_state(rng, difficulty)
        scenario = self.sample(rng, state, difficulty)
        expected = run_chain(domain, state, scenario.calls, what=f"{self.name} reference")
        if expected == state:
            raise AssertionError(f"{self.name}: the reference chain changes nothing")
        for trap in scenario.traps:
            env = Environment(domain, expected)
            if not env.call(trap.name, trap.arguments).get("violation"):
                raise AssertionError(f"{self.name}: trap {trap.name} trips no policy rule")
        mutations = {
            name: solve_script(calls, f"near miss: {name}")
            for name, calls in scenario.near_misses.items()
        }
        mutating = [c for c in scenario.calls if domain.tools[c.name].mutates]
        if mutating:
            mutations["stops-early"] = solve_script(
                scenario.calls[: scenario.calls.index(mutating[-1])],
                "near miss: the last change is never made",
            )
        for i, trap in enumerate(scenario.traps):
            mutations[f"breaks-policy-{i + 1}"] = solve_script(
                [*scenario.calls, trap], f"near miss: also tries the forbidden {trap.name}"
            )
        files: dict[str, str | bytes] = {
            f"environment/toolenv/{rel}": (TOOLENV_DIR / rel).read_bytes() for rel in KIT_FILES
        }
        module = f"domains/{self.toolenv_domain}.py"
        files[f"environment/toolenv/{module}"] = (TOOLENV_DIR / module).read_bytes()
        files["environment/state.json"] = json.dumps(state, indent=1, sort_keys=True) + "\n"
        files["tests/expected_state.json"] = json.dumps(expected, indent=1, sort_keys=True) + "\n"
        health = (
            'python3 -c "import urllib.request; '
            f"urllib.request.urlopen('http://127.0.0.1:{TOOL_PORT}/health', timeout=2)\""
        )
        return Draft(
            context={
                "domain_name": self.toolenv_domain,
                "domain_title": domain.title,
                "policy": domain.policy.strip(),
                "request": scenario.request.strip(),
                "calls": scenario.calls,
                "port": TOOL_PORT,
            },
            files=files,
            secrets=scenario.secrets,
            mutations=mutations,
            healthcheck={
                "command": health,
                "interval_sec": 0.5,
                "timeout_sec": 30.0,  # one attempt; Harbor fails the trial when it runs out
                "retries": 20,
                "start_period_sec": 10.0,
            },
            mcp_servers=[
                {
                    "name": self.toolenv_domain,
                    "transport": "streamable-http",
                    "url": f"http://127.0.0.1:{TOOL_PORT}/mcp",
                }
            ],
            memory_mb=512,
            verifier_timeout_sec=60.0,
            tags=["tool-use", self.toolenv_domain, *scenario.tags]
            + (["policy-trap"] if scenario.traps else []),
        )


def run_chain(domain: Any, state: JSON, calls: list[Call], *, what: str) -> JSON:
    """Run calls on a copy of ``state``; every one must succeed. Returns the final state."""
    env = Environment(domain, state)
    for call in calls:
        result = env.call(call.name, call.arguments)
        if not result["ok"]:
            raise AssertionError(f"{what}: {call.name}({call.arguments_json}) failed: {result}")
    return env.state


def solve_script(calls: list[Call], comment: str) -> str:
    lines = ["#!/bin/bash", f"# {comment}", "set -uo pipefail"]
    for call in calls:
        lines.append(f"tool call {call.name} {shlex.quote(call.arguments_json)}")
    return "\n".join(lines) + "\n"
