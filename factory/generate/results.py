"""What generation records: one result per candidate (the journal), and the suite manifest."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field

from factory.validate.outcome import Outcome, ProbeRecord


class QualityOutcome(str, Enum):
    """Rejections decided by generation's own checks (validation outcomes come first)."""

    LEAK = "leak"
    """The instruction gives the answer away, or the solution/tests are in the build context."""
    CHEAT_PASSED = "cheat_passed"
    """A trivial agent (exit 0, empty outputs, forged reward) scored."""
    WEAK_VERIFIER = "weak_verifier"
    """The tests accept too many of the family's near-miss wrong solutions."""
    DUPLICATE = "duplicate"
    """Same content as, or a near-duplicate of, a task already in the suite."""
    SAME_STRUCTURE = "same_structure"
    """Repeats the fault combination of an accepted task of its leaf while the leaf is at its
    ``min_fault_combinations`` target."""
    UNPARSEABLE = "unparseable"
    """The model's output could not be turned into a task."""
    BAD_CONTENT = "bad_content"
    """Hybrid mode: the model's reply parsed, but the family's slots or draft refused the
    content (names repeated, a keyword as a column name, the answer in the scenario...)."""
    GENERATION_ERROR = "generation_error"
    """The generator failed (a family bug, the endpoint gave up, the budget ran out)."""


ACCEPTED = "accepted"
REJECTED = "rejected"


class LlmUsage(BaseModel):
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: LlmUsage) -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class CandidateResult(BaseModel):
    """One candidate's fate; stored as results/<id>.json (the journal a rerun resumes from)."""

    id: str
    taxonomy_path: str
    generator: str
    difficulty: str
    seed: int
    attempt: int
    status: str
    """'accepted' or 'rejected'."""
    outcome: str
    """'valid', a validation outcome, or a QualityOutcome."""
    reason: str
    content_hash: str | None = None
    prompt_version: str | None = None
    model: str | None = None
    verifier_strength: float | None = None
    faults: list[str] = Field(default_factory=list)
    """The task's fault combination (names from its family's grammar)."""
    duplicate_of: str | None = None
    probes: list[ProbeRecord] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds: generate, validate, probes, total."""
    llm: LlmUsage = Field(default_factory=LlmUsage)
    repair_rounds: int = 0
    path: str
    """Where the task directory now lives (tasks/<id> or rejected/<id>), relative to the suite."""


class LeafCoverage(BaseModel):
    taxonomy_path: str
    generator: str
    quota: int
    candidates: int = 0
    valid: int = 0
    distinct: int = 0
    """Accepted tasks after exact and near-duplicate removal (= valid: duplicates are rejected)."""
    yield_: float = Field(default=0.0, alias="yield")
    outcomes: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0
    llm: LlmUsage = Field(default_factory=LlmUsage)
    complete: bool = False
    """Quota met."""

    model_config = {"populate_by_name": True}


class SuiteTask(BaseModel):
    id: str
    path: str
    taxonomy_path: str
    family: str
    difficulty: str
    seed: int
    generator: str
    prompt_version: str | None = None
    model: str | None = None
    content_hash: str | None = None
    verifier_strength: float | None = None
    faults: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)

    @classmethod
    def of(cls, result: CandidateResult) -> SuiteTask:
        """The suite's entry of an accepted candidate: its own fields, its generator as family."""
        return cls(
            family=result.generator,
            **result.model_dump(include=set(cls.model_fields) - {"family"}),
        )


class SuiteManifest(BaseModel):
    """suite.json."""

    suite: str
    factory_version: str
    seed: int
    taxonomy: str
    tasks: list[SuiteTask] = Field(default_factory=list)
    coverage: list[LeafCoverage] = Field(default_factory=list)
    totals: dict[str, float] = Field(default_factory=dict)


VALID = Outcome.VALID.value
