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

import json
import random
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from factory.families.base import Draft, Family
from factory.generate.taxonomy import Difficulty, Domain
from factory.toolenv.core import JSON, Environment, load_domain

TOOL_PORT = 8000
TOOLENV_DIR = Path(__file__).resolve().parent.parent / "toolenv"
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


class ToolFamily(Family):
    """Base of tool-domain families. Subclasses name their ``toolenv_domain`` and implement
    :meth:`seed_state` and :meth:`sample`."""

    domain = Domain.TOOL
    toolenv_domain: ClassVar[str]
    """Module name under ``factory.toolenv.domains``."""

    @property
    def template_dir(self) -> str:
        return "families/_tool"

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
