"""Procedural task families: the contract every family fulfils, and the registry.

A family is a folder, ``factory/families/<domain>/<family>/``: ``family.py`` holds a small class
(registered with ``@register``), ``templates/`` the Jinja2 templates of its tasks, laid out like
a task directory, and any data modules the family needs::

    family.py
    templates/instruction.md.j2
    templates/environment/Dockerfile.j2   (+ any other files; ``.j2`` ones are rendered)
    templates/solution/solve.sh.j2
    templates/tests/test.sh.j2            (+ test files)
    templates/mutations/<name>.sh.j2      near-miss wrong solutions the tests must reject
    templates/cheats/<name>.sh.j2         cheats (forging, resetting) that must score 0

``draft(rng, difficulty, params)`` draws everything random from ``rng`` (names, data, sizes,
structure) and returns a :class:`Draft`: the template context, extra generated files, the
answers that must never appear in the instruction, and the paths the agent is expected to
produce (used by the cheat probes). Same seed -> same task, byte for byte.

A family may open **slots** (``slots``, a :class:`factory.families.slots.Slots` model): content
a language model writes in hybrid mode (``params: {mode: scenario}`` on a taxonomy leaf), such
as names, themes, record vocabularies and column names. The draft reads each slot with
``self.filled(name, default)``: the model's content when the backend set it
(:meth:`Family.with_content`), the family's own vocabulary otherwise, so a procedural task
stays byte for byte what it was.
"""

from __future__ import annotations

import inspect
import random
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import jinja2

from factory.families.slots import Slots
from factory.tasks.config import VerifierCollectConfig
from factory.templating import folder_environment
from factory.vocabulary import Difficulty, Domain, Trap

SNAPSHOT_DIR = "/var/lib/verifier-snapshot"
"""Where a web or tool family's collect hook writes what its tests read (root's; the agent
cannot write ``/var/lib``, and the hook replaces whatever is there anyway)."""


def fresh_folder_hook(folder: str, fill: str) -> str:
    """A collect hook that builds ``folder`` anew: ``fill`` (a shell command; ``{tmp}`` in it
    stands for the quoted path of the folder being built) writes it beside ``folder``, then it
    is renamed into place, so a failure leaves no folder and whatever was there is gone."""
    out, tmp = shlex.quote(folder), shlex.quote(f"{folder}.tmp")
    body = fill.replace("{tmp}", tmp)
    return f"rm -rf {out} {tmp} && mkdir -m 0700 {tmp} && {body} && mv {tmp} {out}"


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
    faults: list[str] = field(default_factory=list)
    """What the solver must do, as names from the family's grammar: the faults planted or the
    sub-problems composed (e.g. ``['bind', 'env-override', 'stale-pid']``). The structural
    diversity metric (:mod:`factory.quality.structure`) counts distinct combinations."""
    traps: list[Trap] = field(default_factory=list)
    """The task's unannounced traps (see :class:`Trap`)."""
    cheats: dict[str, str] = field(default_factory=dict)
    """Extra cheat probes (name -> solve.sh text), besides the templates' ``cheats/`` and the
    generic ones: solutions that try to make the tests pass without doing the task (forge the
    environment's record, reset it). Certification fails the task when one scores."""
    agent_user: str | None = None
    """The OS user the agent runs as (task.toml ``[agent] user``); None: the image's user."""
    separate_verifier: bool = False
    """Run the tests in a fresh container (Harbor's ``verifier.environment_mode =
    "separate"``) that gets only the artifacts: the ``outputs``, the ``kept`` inputs and
    ``artifacts``. Only for tasks whose tests read nothing else of the agent's container."""
    kept: list[str] = field(default_factory=list)
    """Separate verifier: input files the tests check are unchanged (by content). They travel
    as artifacts too, and a collect hook turns a deleted one (or one replaced by a link) into
    an empty file first, so a deletion still fails the check instead of leaving the image's
    copy in place."""
    artifacts: list[str] = field(default_factory=list)
    """Separate verifier: more paths to carry over (snapshots the ``collect`` hooks write)."""
    collect: list[str | VerifierCollectConfig] = field(default_factory=list)
    """Separate verifier: ``[[verifier.collect]]`` hooks (a command, or the whole entry), run
    after the agent in its container (after the ``kept`` hook) to snapshot state the tests
    need into files (:mod:`factory.families.terminal.state_snapshot`)."""
    collect_user: str | None = None
    """Separate verifier: the OS user the ``collect`` hooks given as commands run as (None:
    the image's user). Families whose state belongs to a service user the agent cannot read
    (web apps, tool servers) name ``root``, so no harness runs the hooks as the agent's user."""


class Family:
    """Base class of procedural task families. Subclasses set the class attributes and
    implement :meth:`draft`; they are registered with :func:`register`."""

    name: ClassVar[str]
    """Registry name (the name taxonomies use in ``generator:``)."""
    title: ClassVar[str]
    """One line: what the tasks are about."""
    category: ClassVar[str]
    """Broad category, written to task.toml metadata."""
    domain: ClassVar[Domain] = Domain.TERMINAL
    default_params: ClassVar[Mapping[str, Any]] = {}
    """Parameters a taxonomy leaf may override (documented per family)."""
    slots: ClassVar[type[Slots] | None] = None
    """The content a model may write for this family in hybrid mode (None: no slots open)."""
    content: Mapping[str, Any] | None = None
    """This instance's model-written content, slot name -> value (set by
    :meth:`with_content`; only the slots the model filled), or None."""

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        raise NotImplementedError

    def params_with(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The family's :attr:`default_params` with ``given`` over them. A single value given
        for a parameter whose default is a list is that list of one (``projects: sqlparse``, or
        ``-p projects=sqlparse``, means ``[sqlparse]``, not its letters; an empty one, none)."""
        out = {**self.default_params, **given}
        for key, default in self.default_params.items():
            if isinstance(default, list) and out[key] in ("", None):
                out[key] = []  # ``-p projects=``: none named
            elif isinstance(default, list) and isinstance(out[key], str | int | float | bool):
                out[key] = [out[key]]
        return out

    def with_content(self, content: Slots | Mapping[str, Any]) -> Family:
        """This family drafting from ``content``: an instance of its ``slots``, or the checked
        values of some of them (:meth:`Slots.salvage`; the others keep the family's own
        vocabulary)."""
        if self.slots is None:
            raise TypeError(f"family {self.name} takes no {type(content).__name__} content")
        if isinstance(content, Slots):
            if not isinstance(content, self.slots):
                raise TypeError(f"family {self.name} takes no {type(content).__name__} content")
            content = {name: getattr(content, name) for name in self.slots.model_fields}
        unknown = set(content) - set(self.slots.model_fields)
        if unknown:
            raise TypeError(f"family {self.name} opens no slot {sorted(unknown)[0]!r}")
        self.content = dict(content)
        return self

    def filled(self, slot: str, default: Any) -> Any:
        """The content of ``slot`` when a model filled it, else ``default`` (the family's own
        vocabulary: the draft is then unchanged)."""
        if self.content is None or slot not in self.content:
            return default
        return self.content[slot]

    @classmethod
    def folder(cls) -> Path:
        """The family's folder: where the module defining it (``family.py``) lives."""
        return Path(inspect.getfile(cls)).resolve().parent

    @property
    def templates(self) -> Path:
        """The folder of the family's task templates."""
        return self.folder() / "templates"

    def template(self, name: str) -> jinja2.Template:
        """One of the family's templates, by its path under :attr:`templates`."""
        return folder_environment(self.templates).get_template(name)


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
