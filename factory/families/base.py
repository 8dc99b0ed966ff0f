"""Procedural task families: the contract every family fulfils, and the registry.

A family is a small class plus a folder of Jinja2 templates, ``templates/families/<name>/``,
laid out like a task directory::

    instruction.md.j2
    environment/Dockerfile.j2        (+ any other files; ``.j2`` ones are rendered)
    solution/solve.sh.j2
    tests/test.sh.j2                 (+ test files)
    mutations/<name>.sh.j2           near-miss wrong solutions the tests must reject

``draft(rng, difficulty, params)`` draws everything random from ``rng`` (names, data, sizes,
structure) and returns a :class:`Draft`: the template context, extra generated files, the
answers that must never appear in the instruction, and the paths the agent is expected to
produce (used by the cheat probes). Same seed -> same task, byte for byte.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from factory.vocabulary import Difficulty, Domain


@dataclass
class Draft:
    """What a family decided for one task."""

    context: dict[str, Any]
    """Template variables."""
    files: dict[str, str | bytes] = field(default_factory=dict)
    """Generated files, by path relative to the task root (e.g. 'environment/data/app.log')."""
    secrets: list[str] = field(default_factory=list)
    """Answers (strings) that must not appear in instruction.md."""
    outputs: list[str] = field(default_factory=list)
    """Absolute container paths the agent is expected to create or change."""
    forbidden_strings: list[str] = field(default_factory=list)
    """Strings that must not appear anywhere in a fresh container's filesystem (e.g. a CTF flag
    that the image may only hold in hidden form); checked by scanning the built image."""
    allow_internet: bool = False
    """Whether the task needs the network (almost never)."""
    agent_timeout_sec: float = 300.0
    verifier_timeout_sec: float = 120.0
    memory_mb: int = 1024
    tags: list[str] = field(default_factory=list)
    healthcheck: dict[str, Any] | None = None
    """``[environment.healthcheck]`` for tasks whose environment runs a service."""
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)
    """``[[environment.mcp_servers]]`` entries (tool environments)."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables of the task container."""
    mutations: dict[str, str] = field(default_factory=dict)
    """Extra near-miss wrong solutions (name -> solve.sh text), besides the templates' own."""


class Family:
    """Base class of procedural task families. Subclasses set the class attributes and
    implement :meth:`draft`; they are registered with :func:`register`."""

    name: ClassVar[str]
    """Registry name (also the templates folder name)."""
    title: ClassVar[str]
    """One line: what the tasks are about."""
    category: ClassVar[str]
    """Broad category, written to task.toml metadata."""
    domain: ClassVar[Domain] = Domain.TERMINAL
    default_params: ClassVar[Mapping[str, Any]] = {}
    """Parameters a taxonomy leaf may override (documented per family)."""

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        raise NotImplementedError

    @property
    def template_dir(self) -> str:
        return f"families/{self.name}"


class Registry:
    def __init__(self) -> None:
        self._families: dict[str, type[Family]] = {}
        self.broken: dict[str, str] = {}
        """Family modules that failed to import: module name -> error."""

    def add(self, cls: type[Family]) -> type[Family]:
        if cls.name in self._families and self._families[cls.name] is not cls:
            raise ValueError(f"family name '{cls.name}' registered twice")
        self._families[cls.name] = cls
        return cls

    def get(self, name: str) -> Family:
        try:
            return self._families[name]()
        except KeyError:
            broken = (
                f" (modules that failed to import: {', '.join(self.broken)})" if self.broken else ""
            )
            raise KeyError(
                f"unknown family '{name}'; registered: {', '.join(sorted(self._families))}{broken}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._families)

    def all(self) -> list[Family]:
        return [self._families[n]() for n in self.names()]


registry = Registry()


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: add a family to the registry."""
    return registry.add(cls)
