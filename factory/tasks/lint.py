"""`factory lint`: what other harnesses would say about a task before anything runs.

Three sources of findings, each naming the task, the file and the field or line:

* **harbor** — the rules of Harbor's own linter (``harbor task lint``, default rule set of
  Harbor 0.26) that a task directory without a docker-compose file can break: invalid or
  unknown ``task.toml`` fields, missing files, a verifier that shares the agent's sandbox,
  artifacts whose copies land on each other, a separate verifier's artifact under the log
  folders Harbor mounts (``/logs/agent``, ``/logs/verifier``),
  unpinned Python installs, a separate verifier that installs pytest or downloads from the
  internet at trial time, grading files copied into the agent's image.
* **fidelity** — what makes a task behave differently elsewhere than here: a verifier that
  installs packages while its network is off, an outdated ``schema_version``, keywords or tags
  listed twice, the legacy MCP transport name ``"http"``.
* **harness** — what a given harness refuses before it runs anything: Harbor's Docker
  environment rejects ``network_mode = "no-network"`` (and allowlists) with a ValueError when
  it cannot start its egress control (a kernel without nftables fib support, or its probe and
  sidecar images out of reach).

Docker-free and fast: it reads files only.
"""

from __future__ import annotations

import copy
import gzip
import re
import shlex
from enum import Enum
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ValidationError

from factory.compat import tomllib
from factory.errors import TaskFormatError
from factory.tasks.config import (
    NetworkMode,
    TaskConfig,
    VerifierEnvironmentMode,
    artifact_collisions,
    artifact_entries,
    effective_artifacts,
)
from factory.tasks.harbor_schema import (
    CURRENT_SCHEMA_VERSION,
    TASK_NAME_PATTERN,
    unknown_keys,
)
from factory.tasks.model import discover_task_dirs
from factory.tasks.offline import undeclared_network_fetches
from factory.tasks.paths import CONTAINER_AGENT_LOGS_DIR, CONTAINER_VERIFIER_LOGS_DIR, TaskPaths
from factory.tasks.pip_installs import installed_packages, is_unpinned, package_name
from factory.tasks.shell_commands import command_chain, downloads, shell_commands, shell_lines


class LintSource(str, Enum):
    HARBOR = "harbor"
    """A rule of Harbor's linter (default rule set)."""
    FIDELITY = "fidelity"
    """factory's own: the task would behave differently in another harness."""
    HARNESS = "harness"
    """A harness would refuse the task before running it."""


class LintRule(str, Enum):
    # Harbor's rule names, so a finding reads the same as `harbor task lint`'s.
    INVALID_TASK_CONFIG = "invalid-task-config"
    UNKNOWN_CONFIG_FIELD = "unknown-config-field"
    INVALID_TASK_FILES = "invalid-task-files"
    SHARED_VERIFIER = "shared-verifier"
    OVERLAPPING_ARTIFACTS = "overlapping-artifacts"
    ARTIFACT_LOG_OVERLAP = "artifact-log-overlap"
    UNPINNED_PYTHON_DEPENDENCY = "unpinned-python-dependency"
    VERIFIER_RUNTIME_INSTALL = "verifier-runtime-install"
    VERIFIER_NETWORK_DOWNLOAD = "verifier-network-download"
    AGENT_IMAGE_TEST_LEAK = "agent-image-test-leak"
    # factory's
    OFFLINE_VERIFIER_INSTALL = "offline-verifier-install"
    UNDECLARED_NETWORK_INSTALL = "undeclared-network-install"
    OLD_SCHEMA_VERSION = "old-schema-version"
    DUPLICATE_KEYWORD = "duplicate-keyword"
    LEGACY_MCP_TRANSPORT = "legacy-mcp-transport"
    # harnesses
    HARBOR_DOCKER_NETWORK = "harbor-docker-network-policy"


RULE_SOURCE: dict[LintRule, LintSource] = {
    LintRule.INVALID_TASK_CONFIG: LintSource.HARBOR,
    LintRule.UNKNOWN_CONFIG_FIELD: LintSource.HARBOR,
    LintRule.INVALID_TASK_FILES: LintSource.HARBOR,
    LintRule.SHARED_VERIFIER: LintSource.HARBOR,
    LintRule.OVERLAPPING_ARTIFACTS: LintSource.HARBOR,
    LintRule.ARTIFACT_LOG_OVERLAP: LintSource.HARBOR,
    LintRule.UNPINNED_PYTHON_DEPENDENCY: LintSource.HARBOR,
    LintRule.VERIFIER_RUNTIME_INSTALL: LintSource.HARBOR,
    LintRule.VERIFIER_NETWORK_DOWNLOAD: LintSource.HARBOR,
    LintRule.AGENT_IMAGE_TEST_LEAK: LintSource.HARBOR,
    LintRule.OFFLINE_VERIFIER_INSTALL: LintSource.FIDELITY,
    LintRule.UNDECLARED_NETWORK_INSTALL: LintSource.FIDELITY,
    LintRule.OLD_SCHEMA_VERSION: LintSource.FIDELITY,
    LintRule.DUPLICATE_KEYWORD: LintSource.FIDELITY,
    LintRule.LEGACY_MCP_TRANSPORT: LintSource.FIDELITY,
    LintRule.HARBOR_DOCKER_NETWORK: LintSource.HARNESS,
}


class LintFinding(BaseModel):
    """One thing to fix, located as precisely as the file allows."""

    task: str
    """The task directory's name."""
    rule: LintRule
    source: LintSource
    path: str
    """File, relative to the task directory."""
    where: str | None = None
    """A ``task.toml`` field (dotted) or ``line N`` of a script."""
    message: str

    def line(self) -> str:
        where = f":{self.where}" if self.where else ""
        return f"{self.task}: {self.path}{where}: [{self.rule.value}] {self.message}"


class HarnessHost(BaseModel):
    """What the machine that would run Harbor's Docker environment offers."""

    egress_control: bool
    """Harbor can start its nftables egress sidecar (needed for no-network / allowlist)."""
    reason: str = ""
    """Why not, in words (shown in the finding)."""


HARBOR_LOG_DIRS = (CONTAINER_AGENT_LOGS_DIR, CONTAINER_VERIFIER_LOGS_DIR)
"""The log folders Harbor mounts into the agent's and the verifier's containers."""


def overlaps_harbor_logs(source: str) -> bool:
    """Whether an artifact ``source`` lies in one of :data:`HARBOR_LOG_DIRS` or holds one
    (``/logs``, ``/``), as Harbor's ``artifact-log-overlap`` rule reads it: the path as
    written (a relative one never matches), a leading ``//`` read as ``/``."""
    path = PurePosixPath(source)
    if path.anchor == "//":
        path = PurePosixPath("/", *path.parts[1:])
    return any(
        path.is_relative_to(logs) or PurePosixPath(logs).is_relative_to(path)
        for logs in HARBOR_LOG_DIRS
    )


_TEST_TOOLS = {"pytest", "pytest-json-ctrf"}


# --- the linter ------------------------------------------------------------------------


class _Linter:
    def __init__(self, root: Path, host: HarnessHost | None) -> None:
        self.root = root
        self.paths = TaskPaths(root)
        self.host = host
        self.findings: list[LintFinding] = []

    def add(self, rule: LintRule, path: Path | str, message: str, where: str | None = None):
        rel = Path(path).relative_to(self.root).as_posix() if Path(path).is_absolute() else path
        self.findings.append(
            LintFinding(
                task=self.root.name,
                rule=rule,
                source=RULE_SOURCE[rule],
                path=str(rel),
                where=where,
                message=message,
            )
        )

    def run(self) -> list[LintFinding]:
        raw, config = self._config()
        self._layout(config)
        if config is not None and raw is not None:
            self._fields(raw, config)
            self._scripts(config)
        if self.paths.dockerfile.is_file():
            self._dockerfile()
        return sorted(self.findings, key=_order)

    def _config(self) -> tuple[dict | None, TaskConfig | None]:
        path = self.paths.config
        if not path.is_file():
            self.add(LintRule.INVALID_TASK_FILES, path, "missing task configuration; add task.toml")
            return None, None
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            self.add(LintRule.INVALID_TASK_CONFIG, path, f"malformed TOML ({exc})")
            return None, None
        try:
            return raw, TaskConfig.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                self.add(LintRule.INVALID_TASK_CONFIG, path, error["msg"], _where(error["loc"]))
            return raw, _without_invalid(raw, exc)

    def _layout(self, config: TaskConfig | None) -> None:
        paths = self.paths
        if not paths.instruction.is_file():
            self.add(LintRule.INVALID_TASK_FILES, paths.instruction, "missing instruction.md")
        elif not paths.instruction.read_text(encoding="utf-8", errors="replace").strip():
            self.add(LintRule.INVALID_TASK_FILES, paths.instruction, "the instruction is empty")
        if not paths.test_script.is_file():
            self.add(LintRule.INVALID_TASK_FILES, paths.test_script, "missing tests/test.sh")
        image = config.environment.docker_image if config else None
        if not image and not paths.environment_dir.is_dir():
            self.add(
                LintRule.INVALID_TASK_FILES,
                paths.environment_dir,
                "missing environment/; add it or set environment.docker_image",
            )

    def _fields(self, raw: dict, config: TaskConfig) -> None:
        path = self.paths.config
        for key in unknown_keys(raw):
            self.add(LintRule.UNKNOWN_CONFIG_FIELD, path, "Harbor's schema has no such field", key)
        task = raw.get("task")
        name = str(task.get("name", "")) if isinstance(task, dict) else None
        if name is not None and (not re.match(TASK_NAME_PATTERN, name) or ".." in name):
            self.add(
                LintRule.INVALID_TASK_CONFIG,
                path,
                "must be 'org/name' (letters, digits, '.', '_', '-')",
                "task.name",
            )
        verifier = raw.get("verifier") if isinstance(raw.get("verifier"), dict) else {}
        if verifier.get("environment_mode") != "separate" and "environment" not in verifier:
            self.add(
                LintRule.SHARED_VERIFIER,
                path,
                "the verifier shares the agent's sandbox; Harbor wants "
                'verifier.environment_mode = "separate"',
                "verifier.environment_mode",
            )
        for first, later in artifact_collisions(effective_artifacts(config.artifacts)):
            self.add(
                LintRule.OVERLAPPING_ARTIFACTS,
                path,
                f"{later.source} lands on {first.source}'s copy (one inside the other); "
                "Harbor keeps the entry listed first and skips this one: list the folder "
                "alone",
                "artifacts",
            )
        if config.verifier.mode is VerifierEnvironmentMode.SEPARATE:
            for index, artifact in enumerate(artifact_entries(config.artifacts)):
                if overlaps_harbor_logs(artifact.source):
                    self.add(
                        LintRule.ARTIFACT_LOG_OVERLAP,
                        path,
                        f"{artifact.source} overlaps the log folders Harbor mounts "
                        f"({', '.join(HARBOR_LOG_DIRS)}), which it forbids as a separate "
                        "verifier's artifact: copy what the tests need elsewhere in a "
                        "collect hook",
                        f"artifacts[{index}]",
                    )
        # The model reads "http" as "streamable-http"; what the file says is in the raw TOML.
        servers = (raw.get("environment") or {}).get("mcp_servers") or []
        for index, server in enumerate(servers if isinstance(servers, list) else []):
            where = f"environment.mcp_servers[{index}].transport"
            if isinstance(server, dict) and server.get("transport") == "http":
                self.add(
                    LintRule.LEGACY_MCP_TRANSPORT,
                    path,
                    '"http" is a legacy name; write "streamable-http" (older Harbor releases '
                    "and TRL's Harbor environment reject it)",
                    where,
                )
            # any other unknown transport fails the model's enum (an invalid-task-config finding)
        version = config.schema_version or config.version
        if version is None or _version_key(version) < _version_key(CURRENT_SCHEMA_VERSION):
            self.add(
                LintRule.OLD_SCHEMA_VERSION,
                path,
                f"schema_version {version or '(unset)'} lags Harbor's current "
                f"{CURRENT_SCHEMA_VERSION}",
                "schema_version",
            )
        keywords = config.task.keywords if config.task else []
        tags = config.metadata.get("tags")
        for where, values in (("task.keywords", keywords), ("metadata.tags", tags)):
            if isinstance(values, list):
                repeated = sorted({v for v in values if values.count(v) > 1}, key=str)
                if repeated:
                    self.add(
                        LintRule.DUPLICATE_KEYWORD,
                        path,
                        f"listed more than once: {', '.join(map(str, repeated))}",
                        where,
                    )
        self._network(config)

    def _network(self, config: TaskConfig) -> None:
        mode = _declared_network(config)
        restricted = mode in (NetworkMode.NO_NETWORK, NetworkMode.ALLOWLIST)
        if restricted and self.host is not None and not self.host.egress_control:
            self.add(
                LintRule.HARBOR_DOCKER_NETWORK,
                self.paths.config,
                f'Harbor\'s Docker environment refuses network_mode = "{mode.value}" on this '
                f"host (ValueError before the trial starts): {self.host.reason}",
                "environment.network_mode",
            )

    def _undeclared_network(self, config: TaskConfig) -> None:
        """Tests that fetch at test time in a task that declares no network: Harbor gives it
        the internet, factory runs it offline, so the two verdicts differ."""
        script = self.paths.test_script
        scan = undeclared_network_fetches(config.environment, script)
        if scan is None:
            return
        fetched = [*scan.apt_packages, *scan.system_packages, *scan.venv_packages]
        what = ", ".join(fetched) if fetched else "uv"
        self.add(
            LintRule.UNDECLARED_NETWORK_INSTALL,
            script,
            f"fetches {what} at test time and the task declares no network: Harbor gives it "
            "the internet, factory runs it offline (its reference solution fails here); "
            "`factory import` moves the installs to the image build, or declare "
            "environment.network_mode",
            "environment.network_mode",
        )

    def _scripts(self, config: TaskConfig) -> None:
        self._undeclared_network(config)
        offline = _declared_network(config) is NetworkMode.NO_NETWORK
        separate = config.verifier.mode is VerifierEnvironmentMode.SEPARATE
        for script, verifier in ((self.paths.test_script, True), (self.paths.solve_script, False)):
            if not script.is_file():
                continue
            text = script.read_text(encoding="utf-8", errors="replace")
            for number, line in shell_lines(text):
                chain = command_chain(line)
                for index, (words, operator) in enumerate(chain):
                    piped_into = chain[index + 1][0] if operator == "|" else None
                    if verifier and separate and downloads(words, piped_into):
                        self.add(
                            LintRule.VERIFIER_NETWORK_DOWNLOAD,
                            script,
                            "downloads from the internet at trial time; do it in the "
                            "verifier's image build",
                            f"line {number}",
                        )
                    specs, constrained = installed_packages(words)
                    self._pins(specs, constrained, script, number)
                    if not (verifier and specs):
                        continue
                    names = {package_name(s) for s in specs}
                    cached = {"--offline", "--no-index"} & set(words)
                    if separate and names & _TEST_TOOLS and not cached:
                        self.add(
                            LintRule.VERIFIER_RUNTIME_INSTALL,
                            script,
                            "installs pytest at trial time; bake it into the verifier image",
                            f"line {number}",
                        )
                    if offline and not cached:
                        self.add(
                            LintRule.OFFLINE_VERIFIER_INSTALL,
                            script,
                            f"installs {', '.join(specs)} while the task's network is off; "
                            "install it in environment/Dockerfile",
                            f"line {number}",
                        )

    def _pins(self, specs: list[str], constrained: bool, path: Path, number: int) -> None:
        if not constrained and any(is_unpinned(spec) for spec in specs):
            loose = [spec for spec in specs if is_unpinned(spec)]
            self.add(
                LintRule.UNPINNED_PYTHON_DEPENDENCY,
                path,
                f"pin {', '.join(loose)} to an exact version (==) or use a constraints file",
                f"line {number}",
            )

    def _dockerfile(self) -> None:
        path = self.paths.dockerfile
        for number, line in shell_lines(path.read_text(encoding="utf-8", errors="replace")):
            instruction, _, value = line.strip().partition(" ")
            value = re.sub(r"^(?:--\S+\s+)+", "", value.strip())
            keyword = instruction.upper()
            if keyword == "RUN":
                for words in shell_commands(value):
                    self._pins(*installed_packages(words), path, number)
            elif keyword in ("COPY", "ADD"):
                try:
                    sources = shlex.split(value)[:-1]
                except ValueError:
                    continue
                if any(
                    re.search(
                        r"(?:^|/)(?:solution/solve\.sh|tests/(?:test\.sh|test_[^/]+\.py))$", s
                    )
                    for s in sources
                ):
                    self.add(
                        LintRule.AGENT_IMAGE_TEST_LEAK,
                        path,
                        f"{keyword} copies a grading or solution file into the agent's image",
                        f"line {number}",
                    )


def _where(loc: tuple) -> str | None:
    """A pydantic error location as a task.toml path: ``environment.mcp_servers[1].transport``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or None


def _without_invalid(raw: dict, error: ValidationError, rounds: int = 5) -> TaskConfig | None:
    """The configuration with the invalid values dropped (so the other rules still run), or
    None when it cannot be made valid that way."""
    data = copy.deepcopy(raw)
    for _ in range(rounds):
        for item in error.errors():
            parent, key = data, None
            for part in item["loc"][:-1]:
                parent = parent[part] if isinstance(parent, (dict, list)) else None
                if parent is None:
                    break
            key = item["loc"][-1] if item["loc"] else None
            if isinstance(parent, dict):
                parent.pop(key, None)
            elif isinstance(parent, list) and isinstance(key, int) and key < len(parent):
                parent[key] = None
        _drop_nones(data)
        try:
            return TaskConfig.model_validate(data)
        except ValidationError as again:
            error = again
    return None


def _drop_nones(data: dict | list) -> None:
    if isinstance(data, dict):
        for value in data.values():
            _drop_nones(value)
    elif isinstance(data, list):
        data[:] = [v for v in data if v is not None]
        for value in data:
            _drop_nones(value)


def _order(finding: LintFinding) -> tuple:
    line = re.match(r"line (\d+)$", finding.where or "")
    return (finding.path, int(line.group(1)) if line else 0, finding.rule.value)


def _declared_network(config: TaskConfig) -> NetworkMode:
    """The network policy other harnesses apply: Harbor's default is public."""
    env = config.environment
    if env.network_mode is not None:
        return env.network_mode
    return NetworkMode.NO_NETWORK if env.allow_internet is False else NetworkMode.PUBLIC


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)) or (0,)


def lint_task(root: Path, *, host: HarnessHost | None = None) -> list[LintFinding]:
    """Findings for one task directory (``host``: also what Harbor's Docker environment on
    that host would refuse)."""
    if not root.is_dir():
        raise TaskFormatError(root, "not a task directory (no such folder)")
    return _Linter(root.resolve(), host).run()


def lint_paths(paths: list[Path], *, host: HarnessHost | None = None) -> list[LintFinding]:
    """Findings for every task directory at or below ``paths``."""
    return [finding for root in discover_task_dirs(paths) for finding in lint_task(root, host=host)]


PROBE_IMAGE = "alpine@sha256:5b10f432ef3da1b8d4c7eb6c487f2f5a8f096bc91145e68878dd4a5019afde11"
"""The image Harbor 0.26's Docker environment runs to probe the kernel (pulled by digest)."""


def local_harbor_docker_host(
    kernel_config: Path = Path("/proc/config.gz"), *, image_present: bool
) -> HarnessHost:
    """Whether Harbor's Docker environment could enforce no-network on this machine's engine:
    its kernel probe must run (``image_present``: the engine has or can pull the probe image)
    and pass (nftables fib support; a kernel without /proc/config.gz passes)."""
    if not image_present:
        return HarnessHost(
            egress_control=False,
            reason="the engine cannot get the image of Harbor's kernel probe (alpine:3.23.4 "
            "by digest) or of its egress sidecar (gogost/gost)",
        )
    if kernel_config.is_file():
        try:
            text = gzip.decompress(kernel_config.read_bytes()).decode(errors="replace")
        except OSError:
            text = ""
        if not re.search(r"^CONFIG_NFT_FIB_INET=[ym]", text, re.MULTILINE):
            return HarnessHost(
                egress_control=False,
                reason="the kernel lacks nftables fib support (CONFIG_NFT_FIB_INET)",
            )
    return HarnessHost(egress_control=True)
