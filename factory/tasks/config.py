"""``task.toml``: Harbor's task configuration, as pydantic models.

Every section accepts unknown keys and keeps them, so a file written by another tool survives a
load/dump round trip. Fields are only written back when they were present in the input (or set
explicitly), so round-tripping never injects defaults into someone else's file.

Our own provenance lives under ``[metadata.factory]`` (see :class:`FactoryProvenance`).
"""

from __future__ import annotations

from enum import Enum
from pathlib import PurePosixPath
from typing import Any

import tomli_w
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from factory.compat import tomllib
from factory.tasks.config_limits import (
    DEFAULT_AGENT_TIMEOUT_SEC,
    DEFAULT_BUILD_TIMEOUT_SEC,
    DEFAULT_CPUS,
    DEFAULT_MEMORY_MB,
    DEFAULT_VERIFIER_TIMEOUT_SEC,
    MAX_CPUS,
    MAX_GPUS,
    MAX_HEALTHCHECK_RETRIES,
    MAX_MEMORY_MB,
    MAX_PIDS,
    MAX_STORAGE_MB,
    MAX_TIMEOUT_SEC,
    parse_size_mb,
)


def unique(values: list[str]) -> list[str]:
    """``values`` without repeats, in first-seen order (keywords and tags are sets)."""
    return list(dict.fromkeys(values))


class NetworkMode(str, Enum):
    """Harbor's network modes."""

    PUBLIC = "public"
    NO_NETWORK = "no-network"
    ALLOWLIST = "allowlist"


class _Section(BaseModel):
    """A TOML table: unknown keys are kept (``extra='allow'``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_assignment=True)


def _coerce_env(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}
    return value


class Author(_Section):
    name: str | None = None
    """Author's name."""
    email: str | None = None
    """Author's e-mail address."""


class TaskSection(_Section):
    """``[task]``: identity of the task (Harbor schema >= 1.2)."""

    name: str | None = None
    """Task name, conventionally ``org/name``; used as the task id when present."""
    description: str | None = None
    """One-line description."""
    authors: list[Author] = Field(default_factory=list)
    """Who wrote the task."""
    keywords: list[str] = Field(default_factory=list)
    """Search keywords."""


class VerifierEnvironmentMode(str, Enum):
    """Where the verifier runs (Harbor's ``verifier.environment_mode``)."""

    SHARED = "shared"
    """In the agent's container, after the agent (factory isolates it from what the agent left:
    :mod:`factory.validate.isolation`)."""
    SEPARATE = "separate"
    """In a fresh container from the same image, given only the declared ``artifacts``
    (:mod:`factory.validate.separate`)."""


MAIN_SERVICE = "main"
"""The agent's container, as Harbor's compose services name it."""


class VerifierCollectConfig(_Section):
    """One ``[[verifier.collect]]`` entry: a command run in the agent's container after the
    agent finished and before the artifacts are copied out, to snapshot runtime state (owners
    and modes, a process list, a database) into files an artifact then carries to a separate
    verifier."""

    command: str
    """Shell command (run with ``sh -c``)."""
    service: str = MAIN_SERVICE
    """Compose service to run it in; factory runs single-container tasks, so only ``main``."""
    timeout_sec: float = Field(default=60.0, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False)
    """Limit for the command; a hook that fails or times out is logged, never fatal (Harbor's
    hooks are best effort too)."""
    user: str | None = None
    """OS user the command runs as (default: the image's user)."""

    @field_validator("user", mode="before")
    @classmethod
    def _user_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("service")
    @classmethod
    def _only_main(cls, value: str) -> str:
        if value != MAIN_SERVICE:
            raise ValueError(
                f"service {value!r}: factory runs single-container tasks; a collect hook "
                f"runs in {MAIN_SERVICE!r}"
            )
        return value


class ArtifactConfig(_Section):
    """One entry of the top-level ``artifacts`` list in its table form (a plain string is
    the same with only ``source``): a path of the agent's container copied out after the agent
    (and the collect hooks) finished; a separate verifier finds it again at ``source``."""

    source: str
    """Container path (relative paths are taken from ``/``, as ``docker cp`` does)."""
    destination: str | None = None
    """Where Harbor keeps the copy under the trial's ``artifacts/`` folder (relative); the
    verifier still sees it at ``source``."""
    exclude: list[str] = Field(default_factory=list)
    """Glob patterns left out of a directory artifact (``tar --exclude``)."""
    service: str | None = None
    """Compose service to copy from; ``None`` or ``main`` is the agent's container."""

    @field_validator("source")
    @classmethod
    def _no_parent_parts(cls, value: str) -> str:
        if not value.strip() or any(part == ".." for part in PurePosixPath(value).parts):
            raise ValueError(f"artifact source must be a path without '..' parts, not {value!r}")
        return value

    @field_validator("destination")
    @classmethod
    def _relative_destination(cls, value: str | None) -> str | None:
        if not value:
            return None
        path = PurePosixPath(value)
        if "\\" in value or path.is_absolute() or ".." in path.parts:
            raise ValueError(
                f"artifact destination must be a relative path with '/' and no '..', not {value!r}"
            )
        if value.rstrip("/") == "manifest.json":
            raise ValueError("artifact destination 'manifest.json' is reserved by Harbor")
        return value

    @field_validator("service")
    @classmethod
    def _only_main(cls, value: str | None) -> str | None:
        if value not in (None, MAIN_SERVICE):
            raise ValueError(
                f"service {value!r}: factory runs single-container tasks; artifacts come "
                f"from {MAIN_SERVICE!r}"
            )
        return value

    @property
    def container_path(self) -> str:
        """``source`` as an absolute, normalised container path."""
        return "/" + "/".join(p for p in PurePosixPath(self.source).parts if p not in ("/", "."))


def artifact_entries(entries: list[str | ArtifactConfig]) -> list[ArtifactConfig]:
    """The ``artifacts`` list with plain strings read as ``{source = ...}``."""
    return [ArtifactConfig(source=e) if isinstance(e, str) else e for e in entries]


ARTIFACTS_CONVENTION_DIR = "/logs/artifacts"
"""The agent's publish folder: Harbor always collects it (and puts it back) as an artifact."""


def effective_artifacts(entries: list[str | ArtifactConfig]) -> list[ArtifactConfig]:
    """The artifacts a collection pass copies: the task's, with ``/logs/artifacts`` first
    unless the task lists it itself (Harbor's ``with_convention_entry``)."""
    found = artifact_entries(entries)
    if not any(a.container_path == ARTIFACTS_CONVENTION_DIR for a in found):
        found.insert(0, ArtifactConfig(source=ARTIFACTS_CONVENTION_DIR))
    return found


def _output(artifact: ArtifactConfig) -> PurePosixPath:
    """Where Harbor keeps ``artifact``'s copy, relative to the trial's artifacts folder."""
    parts = PurePosixPath(artifact.destination or artifact.source).parts
    return PurePosixPath(*[p for p in parts if p not in ("", "/", "..")] or ["."])


def _covers(prior: ArtifactConfig, later: ArtifactConfig) -> bool:
    """Whether ``prior``'s copy already holds ``later``'s, at the same place."""
    source, prior_source = PurePosixPath(later.source), PurePosixPath(prior.source)
    if not source.is_relative_to(prior_source):
        return False
    if source == prior_source and _output(later) == _output(prior):
        return prior.exclude == later.exclude
    return not prior.exclude and _output(later) == _output(prior) / source.relative_to(prior_source)


def artifact_collisions(
    entries: list[ArtifactConfig],
) -> list[tuple[ArtifactConfig, ArtifactConfig]]:
    """Pairs (first, later) of ``entries`` whose copies land on each other, as Harbor finds
    them (``harbor.models.task.artifacts.validate_artifact_entries``): the same place, or one
    inside the other, unless the first already covers the later where it goes. Harbor keeps
    the first claim and skips the later entry when it collects: a folder listed after a file
    inside it is not copied at all."""
    found = []
    for i, first in enumerate(entries):
        for later in entries[i + 1 :]:
            if _covers(first, later):
                continue
            a, b = _output(first), _output(later)
            if a == b or a in b.parents or b in a.parents:
                found.append((first, later))
    return found


class VerifierConfig(_Section):
    """``[verifier]``: how ``tests/test.sh`` runs."""

    timeout_sec: float = Field(
        default=DEFAULT_VERIFIER_TIMEOUT_SEC, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False
    )
    """Wall-clock limit for ``tests/test.sh``; it is killed at this limit (at most one day)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for the verifier."""
    user: str | None = None
    """OS user the verifier runs as (default: the image's user)."""

    environment_mode: VerifierEnvironmentMode | None = None
    """``shared`` (the agent's container) or ``separate`` (a fresh container that gets only
    the ``artifacts``). Unset: ``separate`` when ``[verifier.environment]`` is given, else
    ``shared`` (Harbor's rule)."""
    environment: EnvironmentConfig | None = None
    """The separate verifier's own environment (Harbor's ``[verifier.environment]``). factory
    runs the separate verifier from the task's image with the task's limits; a table that
    names another image or other limits is refused by the validator (see
    :mod:`factory.validate.separate`)."""
    collect: list[VerifierCollectConfig] = Field(default_factory=list)
    """``[[verifier.collect]]``: commands run in the agent's container before the artifacts
    are copied out (separate mode)."""

    _env = field_validator("env", mode="before")(_coerce_env)

    @model_validator(mode="after")
    def _mode_matches_environment(self) -> VerifierConfig:
        if self.environment_mode is VerifierEnvironmentMode.SHARED and self.environment:
            raise ValueError(
                "environment_mode 'shared' cannot have a [verifier.environment]; drop the "
                'table or set environment_mode = "separate"'
            )
        return self

    @property
    def mode(self) -> VerifierEnvironmentMode:
        """The effective mode (Harbor's resolution: explicit mode, else an environment table
        means separate, else shared)."""
        if self.environment_mode is not None:
            return self.environment_mode
        if self.environment is not None:
            return VerifierEnvironmentMode.SEPARATE
        return VerifierEnvironmentMode.SHARED


class AgentConfig(_Section):
    """``[agent]``: limits for the agent (and for the oracle solution, which stands in for it)."""

    timeout_sec: float = Field(
        default=DEFAULT_AGENT_TIMEOUT_SEC, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False
    )
    """Wall-clock limit for the agent / ``solution/solve.sh`` (at most one day)."""
    user: str | None = None
    """OS user the agent runs as (default: the image's user)."""


class SolutionConfig(_Section):
    """``[solution]``: how the reference solution runs."""

    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for ``solution/solve.sh``."""

    _env = field_validator("env", mode="before")(_coerce_env)


class HealthcheckConfig(_Section):
    """``[environment.healthcheck]``: a command that succeeds once the environment's services
    (a web app, a tool server) are up. Phases and episodes start only after it passes."""

    command: str
    """Shell command run inside the container; exit 0 means healthy."""
    interval_sec: float = Field(default=1.0, gt=0, le=3600, allow_inf_nan=False)
    """Pause between attempts while the check still fails (at most an hour)."""
    timeout_sec: float = Field(default=10.0, gt=0, le=3600, allow_inf_nan=False)
    """Limit for one attempt (at most an hour)."""
    retries: int = Field(default=30, ge=1, le=MAX_HEALTHCHECK_RETRIES)
    """Failed attempts (after the start period) before the environment counts as broken. The
    wait is also bounded in time: start period + retries x (interval + timeout), and never
    longer than the harness maximum (``FACTORY_MAX_READY_SEC``, default 600 s)."""
    start_period_sec: float = Field(default=0.0, ge=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False)
    """Grace period: failures during it do not count as retries."""
    start_interval_sec: float | None = Field(default=None, gt=0, le=3600, allow_inf_nan=False)
    """Pause between attempts during the start period (default: 0.2 s, factory polls fast)."""


class McpTransport(str, Enum):
    """The MCP transports Harbor's task format names."""

    STREAMABLE_HTTP = "streamable-http"
    SSE = "sse"
    """The HTTP+SSE transport of MCP 2024-11-05 (deprecated by MCP)."""
    STDIO = "stdio"


class McpServerConfig(_Section):
    """One ``[[environment.mcp_servers]]`` entry: an MCP server the agent may use."""

    name: str
    """Server identifier (agents prefix tool names with it)."""
    transport: McpTransport = McpTransport.STREAMABLE_HTTP
    """``streamable-http``, ``sse`` or ``stdio`` (Harbor knows no other; a file that says
    ``http`` is read as ``streamable-http``, and written back that way)."""
    url: str | None = None
    """Endpoint for the HTTP transports, as seen from inside the task container."""
    command: str | None = None
    """Command for the stdio transport."""
    args: list[str] = Field(default_factory=list)
    """Arguments of ``command``."""

    @field_validator("transport", mode="before")
    @classmethod
    def _http_means_streamable(cls, value: Any) -> Any:
        return McpTransport.STREAMABLE_HTTP if value == "http" else value

    @model_validator(mode="after")
    def _check_endpoint(self) -> McpServerConfig:
        if self.transport is McpTransport.STDIO:
            if not self.command:
                raise ValueError(f"MCP server {self.name!r}: transport stdio needs a command")
        elif not self.url:
            raise ValueError(
                f"MCP server {self.name!r}: transport {self.transport.value} needs a url"
            )
        return self


class EnvironmentConfig(_Section):
    """``[environment]``: the container the agent works in."""

    build_timeout_sec: float = Field(
        default=DEFAULT_BUILD_TIMEOUT_SEC, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False
    )
    """Limit for building ``environment/Dockerfile`` (at most one day); the build is cancelled
    at this limit."""
    docker_image: str | None = None
    """A prebuilt image to use instead of building ``environment/Dockerfile``."""
    cpus: float | None = Field(default=None, gt=0, le=MAX_CPUS, allow_inf_nan=False)
    """CPU cores (default 1, at most 512); also the limit of the image build. A whole number
    is written as an integer (Harbor's field is one)."""
    memory_mb: int | None = Field(default=None, gt=0, le=MAX_MEMORY_MB)
    """Memory limit in MB (default 2048, at most 1 TiB), swap included; also the limit of the
    image build."""
    memory: str | None = None
    """Deprecated spelling of ``memory_mb`` ('2G', '512M')."""
    storage_mb: int | None = Field(default=None, gt=0, le=MAX_STORAGE_MB)
    """Disk limit in MB (at most 16 TiB). Enforced as a quota where the Docker storage driver
    supports one; elsewhere each file a task writes is capped at this size and the verdict
    notes say the total is not enforced."""
    storage: str | None = None
    """Deprecated spelling of ``storage_mb``."""
    gpus: int = Field(default=0, ge=0, le=MAX_GPUS)
    """GPUs the task needs."""
    gpu_types: list[str] | None = None
    """Acceptable GPU types (informational here)."""
    allow_internet: bool | None = None
    """Deprecated switch for network access; ``network_mode`` wins when both are set."""
    network_mode: NetworkMode | None = None
    """``public``, ``no-network`` or ``allowlist``. When neither this nor ``allow_internet`` is
    set, factory runs the task with the network off (Harbor's own default is on)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables of the container."""
    workdir: str | None = None
    """Working directory for the agent, solution and tests (default: the image's WORKDIR)."""
    pids_limit: int | None = Field(default=None, gt=0, le=MAX_PIDS)
    """factory extension: cap on processes in the container (default 1024); also the cap of
    the image build where the engine lets factory set one."""
    healthcheck: HealthcheckConfig | None = None
    """Readiness check for services the environment starts (see :class:`HealthcheckConfig`)."""
    mcp_servers: list[McpServerConfig] = Field(default_factory=list)
    """MCP servers the environment offers to the agent."""

    _env = field_validator("env", mode="before")(_coerce_env)

    @field_serializer("cpus")
    def _whole_cpus(self, value: float | None) -> float | int | None:
        return int(value) if value is not None and float(value).is_integer() else value

    @field_validator("memory", "storage")
    @classmethod
    def _check_size(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            limit = MAX_MEMORY_MB if info.field_name == "memory" else MAX_STORAGE_MB
            if parse_size_mb(value) > limit:
                raise ValueError(f"'{value}' is more than the limit of {limit} MB")
        return value

    @property
    def effective_cpus(self) -> float:
        return self.cpus if self.cpus is not None else DEFAULT_CPUS

    @property
    def effective_memory_mb(self) -> int:
        if self.memory_mb is not None:
            return self.memory_mb
        if self.memory is not None:
            return parse_size_mb(self.memory)
        return DEFAULT_MEMORY_MB

    @property
    def effective_storage_mb(self) -> int | None:
        if self.storage_mb is not None:
            return self.storage_mb
        return parse_size_mb(self.storage) if self.storage is not None else None

    @property
    def network_policy(self) -> str:
        """The network policy in words, for import notes and reports."""
        if not self.network_enabled:
            return "no network"
        return (
            "network on (factory runs it on its filtered network: the internet is reachable, "
            "the host and private addresses are not)"
        )

    @property
    def network_enabled(self) -> bool:
        """Whether the container gets a network. Off unless the task asks for it."""
        if self.network_mode is not None:
            return self.network_mode is not NetworkMode.NO_NETWORK
        return bool(self.allow_internet)


class FactoryProvenance(_Section):
    """``[metadata.factory]``: where a task came from. Written by factory, read by everyone."""

    source: str | None = None
    """Where the task came from: 'hand-written', 'import:terminal-bench-1', 'generator:<family>'."""
    source_path: str | None = None
    """Original location of an imported task."""
    taxonomy_path: str | None = None
    """Path of the taxonomy leaf that asked for this task."""
    generator: str | None = None
    """Generator (procedural family name or 'llm')."""
    seed: int | None = None
    """Seed the generator used."""
    faults: list[str] = Field(default_factory=list)
    """What the solver must do, as names from the family's fault grammar (the combination the
    structural diversity metric counts); empty for tasks without one."""
    prompt_version: str | None = None
    """Version of the LLM prompt template, for LLM-generated tasks."""
    model: str | None = None
    """Model that wrote the task, for LLM-generated tasks."""
    mode: str | None = None
    """How a model took part: 'scenario' (hybrid: it wrote the content of a procedural
    family's slots; the family built the data, the solution and the tests)."""
    slots: list[str] = Field(default_factory=list)
    """Hybrid mode: the family's slots the model filled."""
    content: dict[str, Any] | None = None
    """Hybrid mode: what the model wrote for those slots (with ``seed``, it reproduces the
    task)."""
    factory_version: str | None = None
    """factory version that wrote this file."""
    notes: list[str] = Field(default_factory=list)
    """What an importer or generator changed, in plain words."""
    verifier_strength: float | None = None
    """Fraction of near-miss wrong solutions the tests reject (generated tasks)."""
    probes: dict[str, bool] = Field(default_factory=dict)
    """Probe name -> whether the tests rejected it (cheat and mutation probes)."""
    pass_rate: float | None = Field(default=None, ge=0, le=1)
    """Share of the calibration policy's episodes the verifier rewarded 1 (`factory
    calibrate`); the suite report reads this key."""
    calibration_k: int | None = Field(default=None, ge=1)
    """Episodes ``pass_rate`` was estimated from (k, less any lost to infrastructure failures)."""
    calibration_model: str | None = None
    """The policy ``pass_rate`` was measured with (a local model name or path, or an endpoint's
    model name)."""
    calibration_verdict: str | None = None
    """Where ``pass_rate`` fell against the band of that calibration: 'in-band', 'too-easy'
    (above: the task is retired) or 'too-hard' (below: kept unless asked otherwise)."""
    flake_rate: float | None = Field(default=None, ge=0, le=1)
    """Share of the nop/oracle phases rerun under perturbation (time zone, hash seed, CPU load)
    whose reward differed from the expected 0 / 1 (`--flake-runs`)."""
    flake_runs: int | None = Field(default=None, ge=1)
    """Perturbed phases ``flake_rate`` was measured over."""


class TaskConfig(_Section):
    """The whole ``task.toml``."""

    version: str | None = None
    """Deprecated schema version (Harbor < 1.2 wrote '1.0')."""
    schema_version: str | None = None
    """Harbor schema version, e.g. '1.3'."""
    task: TaskSection | None = None
    """``[task]`` table."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form metadata: difficulty, category, tags, ... and ``factory`` (provenance)."""
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    artifacts: list[str | ArtifactConfig] = Field(default_factory=list)
    """Paths of the agent's container copied out after the agent: with a separate verifier,
    the only state it gets (at the same paths). ``/logs/artifacts`` always counts as one."""

    @field_validator("artifacts")
    @classmethod
    def _check_artifact_strings(
        cls, value: list[str | ArtifactConfig]
    ) -> list[str | ArtifactConfig]:
        for entry in value:
            if isinstance(entry, str):
                ArtifactConfig(source=entry)  # the same checks as the table form
        return value

    @field_validator("metadata")
    @classmethod
    def _check_factory_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "factory" in value:
            FactoryProvenance.model_validate(value["factory"])
        return value

    # --- convenience -------------------------------------------------------------------
    @property
    def provenance(self) -> FactoryProvenance:
        return FactoryProvenance.model_validate(self.metadata.get("factory", {}))

    def set_provenance(self, provenance: FactoryProvenance) -> None:
        metadata = dict(self.metadata)
        metadata["factory"] = provenance.model_dump(
            mode="json", exclude_none=True, exclude_defaults=True
        )
        self.metadata = metadata

    @property
    def difficulty(self) -> str | None:
        value = self.metadata.get("difficulty")
        return str(value) if value is not None else None

    # --- (de)serialisation ------------------------------------------------------------
    @classmethod
    def from_toml(cls, text: str) -> TaskConfig:
        """Parse TOML text (raises ``tomllib.TOMLDecodeError`` or ``pydantic.ValidationError``;
        :func:`factory.tasks.model.load_task_config` turns both into one-line errors)."""
        return cls.model_validate(tomllib.loads(text))

    def to_toml(self, keep: str | None = None) -> str:
        """The TOML text. With ``keep`` (the file's current text), that text changed only
        where the values differ: its comments, order and number spelling survive."""
        data = self.model_dump(mode="json", exclude_unset=True, exclude_none=True)
        if keep is not None:
            from factory.tasks.toml_merge import merge_toml

            return merge_toml(keep, data)
        # Sections present in the input but emptied are dropped; keep tables after scalars.
        scalars = {k: v for k, v in data.items() if not isinstance(v, dict)}
        tables = {k: v for k, v in data.items() if isinstance(v, dict)}
        return tomli_w.dumps({**scalars, **tables})


VerifierConfig.model_rebuild()  # [verifier.environment] is an EnvironmentConfig (defined later)
