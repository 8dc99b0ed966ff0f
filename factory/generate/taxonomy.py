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
```

Errors name the file, the path in the tree and the field, e.g.
``taxonomy.yaml: domains[0].categories[2].skills[1].quota: Input should be greater than or equal to 1``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from factory.errors import TaskFormatError
from factory.vocabulary import Difficulty, Domain  # also imported from here by callers

LLM_GENERATOR = "llm"
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_name(value: str) -> str:
    if not _NAME_RE.match(value):
        raise ValueError("use lowercase letters, digits, '.', '_' and '-' (it becomes a path)")
    return value


class LeafSettings(_Strict):
    """Settings a leaf may set, and `defaults` may set for every leaf."""

    quota: int | None = Field(default=None, ge=1)
    """Number of verified tasks wanted for the leaf."""
    difficulty: dict[Difficulty, float] | None = None
    """Weights over easy/medium/hard; the leaf's quota is split by them (largest remainder)."""
    attempts_per_task: float | None = Field(default=None, ge=1)
    """Attempt budget: candidates tried per wanted task before the leaf gives up."""
    dedup_threshold: float | None = Field(default=None, gt=0, le=1)
    """Estimated Jaccard similarity (MinHash over instruction + tests) above which a candidate
    is a near-duplicate of an accepted task."""
    min_verifier_strength: float | None = Field(default=None, ge=0, le=1)
    """Fraction of a family's near-miss wrong solutions the tests must reject."""
    repeats: int | None = Field(default=None, ge=1)
    """Validation repeats of the nop and oracle phases."""

    @field_validator("difficulty")
    @classmethod
    def _positive_weights(
        cls, value: dict[Difficulty, float] | None
    ) -> dict[Difficulty, float] | None:
        weights = list((value or {1: 1}).values())
        if any(w < 0 for w in weights) or not any(w > 0 for w in weights):
            raise ValueError("weights must be >= 0 with at least one > 0")
        return value


class Defaults(LeafSettings):
    """`defaults:` - every field has a built-in value."""

    quota: int = Field(default=2, ge=1)
    difficulty: dict[Difficulty, float] = Field(
        default_factory=lambda: {Difficulty.EASY: 1.0, Difficulty.MEDIUM: 1.0, Difficulty.HARD: 1.0}
    )
    attempts_per_task: float = Field(default=3.0, ge=1)
    dedup_threshold: float = Field(default=0.9, gt=0, le=1)
    min_verifier_strength: float = Field(default=1.0, ge=0, le=1)
    repeats: int = Field(default=2, ge=1)


class Skill(LeafSettings):
    """A leaf of the taxonomy."""

    name: str
    """Leaf name (lowercase, becomes part of task ids)."""
    description: str = ""
    generator: str
    """A registered procedural family name, or 'llm'."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Family parameters (each family documents its own), or LLM-backend settings."""
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
    seed: int = 0
    """Base seed; each candidate's seed derives from it, the leaf path and the attempt number."""
    defaults: Defaults = Field(default_factory=Defaults)
    domains: list[DomainNode] = Field(min_length=1)

    _suite = field_validator("suite")(_check_name)

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
                if skill.generator != LLM_GENERATOR and skill.generator not in known:
                    raise TaskFormatError(
                        source,
                        f"unknown generator '{skill.generator}'; registered families: "
                        f"{', '.join(sorted(known))} (or 'llm')",
                        field=f"domains[{index_d}].categories[{index_c}].skills[{index_s}].generator",
                    )
    paths = [leaf.path for leaf in taxonomy.leaves()]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise TaskFormatError(source, f"duplicate leaf path(s): {', '.join(duplicates)}")
    return taxonomy


def load_taxonomy(path: Path) -> Taxonomy:
    if not path.is_file():
        raise TaskFormatError(path, "no such taxonomy file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise TaskFormatError(
            path, f"invalid YAML{where} ({getattr(exc, 'problem', exc)})"
        ) from None
    return parse_taxonomy(data, path)
