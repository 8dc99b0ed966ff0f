"""The task taxonomy file: domains -> categories -> skills (the leaves), with quotas.

```yaml
suite: quickstart
seed: 7
defaults:                      # applied to every leaf that does not say otherwise
  quota: 3
  difficulty: {easy: 1, medium: 1, hard: 1}
domains:
  - name: terminal
    categories:
      - name: files
        skills:
          - name: permissions
            generator: file-permissions      # a registered family, or "llm"
            quota: 4
            params: {}
          - name: access-logs
            generator: log-report
            params: {mode: scenario}         # hybrid: a model writes the names, the family the task
```

Errors name the file, the path in the tree and the field, e.g.
``taxonomy.yaml: domains[0].categories[2].skills[1].quota: Input should be greater than or equal to 1``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from factory.errors import TaskFormatError
from factory.inputs import MAX_TAXONOMY_BYTES, load_yaml_file
from factory.vocabulary import Difficulty, Domain  # also imported from here by callers

LLM_GENERATOR = "llm"
MAX_QUOTA = 10_000
"""Tasks wanted per leaf (``quota: 1e12`` used to exhaust memory planning difficulties)."""
MAX_TOTAL_ATTEMPTS = 1_000_000
"""Candidate attempts of the whole taxonomy (sum over leaves of quota x attempts_per_task)."""
MAX_ATTEMPTS_PER_TASK = 100
"""Candidates tried per wanted task (``1e308`` used to grow the attempt plan to gigabytes)."""
MAX_REPEATS = 20
MAX_WEIGHT = 1e6
SCENARIO_MODE = "scenario"
"""``params: {mode: scenario}``: hybrid generation (a model fills the family's slots)."""
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_name(value: str) -> str:
    if not _NAME_RE.match(value):
        raise ValueError("use lowercase letters, digits, '.', '_' and '-' (it becomes a path)")
    return value


class LeafSettings(_Strict):
    """Settings a leaf may set, and `defaults` may set for every leaf."""

    quota: int | None = Field(default=None, ge=1, le=MAX_QUOTA)
    """Number of verified tasks wanted for the leaf (at most 10,000)."""
    difficulty: dict[Difficulty, float] | None = None
    """Weights over easy/medium/hard; the leaf's quota is split by them (largest remainder)."""
    attempts_per_task: float | None = Field(
        default=None, ge=1, le=MAX_ATTEMPTS_PER_TASK, allow_inf_nan=False
    )
    """Attempt budget: candidates tried per wanted task before the leaf gives up (at most
    100)."""
    dedup_threshold: float | None = Field(default=None, gt=0, le=1)
    """Estimated Jaccard similarity (MinHash over instruction + tests) above which a candidate
    is a near-duplicate of an accepted task."""
    min_verifier_strength: float | None = Field(default=None, ge=0, le=1)
    """Fraction of a family's near-miss wrong solutions the tests must reject."""
    repeats: int | None = Field(default=None, ge=1, le=MAX_REPEATS)
    """Validation repeats of the nop and oracle phases (at most 20)."""
    min_fault_combinations: float | None = Field(default=None, ge=0, le=1)
    """Structural diversity target: the share of the leaf's accepted tasks that must have a fault
    combination of their own (0.5: at least 50 distinct per 100). A candidate that repeats a
    combination already accepted is rejected (``same_structure``) when accepting it would bring
    the leaf below the target. Families without a fault grammar are not held to it."""

    @field_validator("difficulty")
    @classmethod
    def _positive_weights(
        cls, value: dict[Difficulty, float] | None
    ) -> dict[Difficulty, float] | None:
        weights = list((value or {1: 1}).values())
        if any(w < 0 for w in weights) or not any(w > 0 for w in weights):
            raise ValueError("weights must be >= 0 with at least one > 0")
        if any(not math.isfinite(w) or w > MAX_WEIGHT for w in weights):
            raise ValueError(f"weights must be finite numbers of at most {MAX_WEIGHT:g}")
        return value


class Defaults(LeafSettings):
    """`defaults:` - every field has a built-in value."""

    quota: int = Field(default=2, ge=1, le=MAX_QUOTA)
    difficulty: dict[Difficulty, float] = Field(
        default_factory=lambda: {Difficulty.EASY: 1.0, Difficulty.MEDIUM: 1.0, Difficulty.HARD: 1.0}
    )
    attempts_per_task: float = Field(
        default=3.0, ge=1, le=MAX_ATTEMPTS_PER_TASK, allow_inf_nan=False
    )
    dedup_threshold: float = Field(default=0.9, gt=0, le=1)
    min_verifier_strength: float = Field(default=1.0, ge=0, le=1)
    repeats: int = Field(default=2, ge=1, le=MAX_REPEATS)
    min_fault_combinations: float = Field(default=0.0, ge=0, le=1)


class Skill(LeafSettings):
    """A leaf of the taxonomy."""

    name: str
    """Leaf name (lowercase, becomes part of task ids)."""
    description: str = ""
    generator: str
    """A registered procedural family name, or 'llm'."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Family parameters (each family documents its own), or LLM-backend settings.
    ``mode`` picks how a model takes part: for ``generator: llm``, ``free`` (the default),
    ``hidden-flag``, ``web-app`` or ``tool-domain``; for a procedural family that opens slots,
    ``scenario`` (hybrid: the model writes the content - scenario, persona, names, vocabularies,
    column names - as a small bounded JSON object, and the family builds the data, the solution
    and the tests from it; the README lists the families that open slots)."""
    personas: list[str] = Field(default_factory=list)
    """Who asks for the task (used in instructions: 'a data engineer needs ...')."""
    scenarios: list[str] = Field(default_factory=list)
    """Situations to set tasks in."""

    _name = field_validator("name")(_check_name)


class Category(_Strict):
    name: str
    description: str = ""
    skills: list[Skill] = Field(min_length=1)

    _name = field_validator("name")(_check_name)


class DomainNode(_Strict):
    name: str
    kind: Domain | None = None
    """terminal | web | tool (default: the domain's name when it is one of those)."""
    description: str = ""
    categories: list[Category] = Field(min_length=1)

    _name = field_validator("name")(_check_name)

    @model_validator(mode="after")
    def _kind(self) -> DomainNode:
        if self.kind is None:
            try:
                self.kind = Domain(self.name)
            except ValueError:
                raise ValueError(
                    f"set kind (terminal, web or tool) for domain '{self.name}'"
                ) from None
        return self


class Taxonomy(_Strict):
    """A whole taxonomy file."""

    suite: str
    """Suite name (becomes the task-name prefix)."""
    description: str = ""
    seed: int = Field(default=0, ge=-(2**63), le=2**63 - 1)
    """Base seed (a 64-bit integer); each candidate's seed derives from it, the leaf path and the attempt number."""
    defaults: Defaults = Field(default_factory=Defaults)
    domains: list[DomainNode] = Field(min_length=1)

    _suite = field_validator("suite")(_check_name)

    @model_validator(mode="after")
    def _bounded_budget(self) -> Taxonomy:
        total = sum(leaf.attempt_budget for leaf in self.leaves())
        if total > MAX_TOTAL_ATTEMPTS:
            raise ValueError(
                f"the taxonomy asks for {total} candidate attempts (quota x attempts_per_task "
                f"over all leaves); the limit is {MAX_TOTAL_ATTEMPTS}: lower the quotas"
            )
        return self

    def leaves(self) -> Iterator[Leaf]:
        for domain in self.domains:
            for category in domain.categories:
                for skill in category.skills:
                    yield Leaf(domain, category, skill, self.defaults)


@dataclass(frozen=True)
class Leaf:
    """A skill with its ancestry and the defaults filled in."""

    domain: DomainNode
    category: Category
    skill: Skill
    defaults: Defaults

    @property
    def path(self) -> str:
        return f"{self.domain.name}/{self.category.name}/{self.skill.name}"

    @property
    def slug(self) -> str:
        return f"{self.category.name}-{self.skill.name}"

    def setting(self, name: str) -> Any:
        value = getattr(self.skill, name)
        return getattr(self.defaults, name) if value is None else value

    @property
    def quota(self) -> int:
        return self.setting("quota")

    @property
    def attempt_budget(self) -> int:
        return max(self.quota, int(round(self.quota * self.setting("attempts_per_task"))))

    def difficulty_plan(self) -> list[Difficulty]:
        """The quota split over difficulties by weight (largest remainder), in a fixed order."""
        weights = {d: w for d, w in self.setting("difficulty").items() if w > 0}
        total = sum(weights.values())
        exact = {d: self.quota * w / total for d, w in weights.items()}
        counts = {d: int(v) for d, v in exact.items()}
        order = sorted(weights, key=lambda d: (-(exact[d] - counts[d]), list(Difficulty).index(d)))
        for d in order[: self.quota - sum(counts.values())]:
            counts[d] += 1
        plan: list[Difficulty] = []
        for d in Difficulty:
            plan += [d] * counts.get(d, 0)
        return plan


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def parse_taxonomy(data: Any, source: Path | str = "taxonomy.yaml") -> Taxonomy:
    if not isinstance(data, dict):
        raise TaskFormatError(source, "must be a mapping with suite, defaults and domains")
    try:
        taxonomy = Taxonomy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(p for p in first.get("loc", ()) if not str(p).startswith("function-"))
        raise TaskFormatError(
            source, first.get("msg", str(exc)), field=_format_loc(loc) or None
        ) from None
    from factory.families import registry  # the registry fills on import of the families

    known = registry.names()
    for index_d, domain in enumerate(taxonomy.domains):
        for index_c, category in enumerate(domain.categories):
            for index_s, skill in enumerate(category.skills):
                where = f"domains[{index_d}].categories[{index_c}].skills[{index_s}]"
                if skill.generator != LLM_GENERATOR and skill.generator not in known:
                    raise TaskFormatError(
                        source,
                        f"unknown generator '{skill.generator}'; registered families: "
                        f"{', '.join(sorted(known))} (or 'llm')",
                        field=f"{where}.generator",
                    )
                if skill.params.get("mode") == SCENARIO_MODE:
                    _check_hybrid(source, skill, f"{where}.params.mode")
    paths = [leaf.path for leaf in taxonomy.leaves()]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise TaskFormatError(source, f"duplicate leaf path(s): {', '.join(duplicates)}")
    return taxonomy


def _check_hybrid(source: Path | str, skill: Skill, field: str) -> None:
    """A hybrid leaf needs a family that opens slots."""
    from factory.families import registry

    if skill.generator != LLM_GENERATOR and registry.get(skill.generator).slots is not None:
        return
    open_ = [family.name for family in registry.all() if family.slots is not None]
    raise TaskFormatError(
        source,
        f"mode '{SCENARIO_MODE}' needs a procedural family that opens slots, not "
        f"'{skill.generator}'; families with slots: {', '.join(open_) or 'none'}",
        field=field,
    )


def load_taxonomy(path: Path) -> Taxonomy:
    """Read and check a taxonomy file: at most 4 MiB of UTF-8 YAML whose aliases expand to at
    most 200,000 values, nested at most 32 deep (see :mod:`factory.inputs`)."""
    if not path.exists():
        raise TaskFormatError(path, "no such taxonomy file")
    return parse_taxonomy(load_yaml_file(path, max_bytes=MAX_TAXONOMY_BYTES), path)
