"""The LLM backend: a model writes candidates for a leaf.

Two modes:

* **free-form** — the model returns a whole task as JSON (instruction, Dockerfile + files,
  solve.sh, pytest tests, outputs), validated against :class:`LlmTask`; factory adds the
  test.sh that runs the tests and writes the reward, and the task.toml.
* **constrained** (``params: {mode: hidden-flag}``, as in unix-ctf) — the model writes only
  the parts the skeleton leaves open (the hiding and the finding step of a CTF); image,
  layout, flag and grader stay fixed (``templates/llm/hidden-flag``).
* **web-app** / **tool-domain** (the default for leaves of the ``web`` / ``tool`` domains) —
  the model writes an app on the shared webkit, or a tool domain on the toolenv core, plus
  the task; the skeleton around it is fixed (see :mod:`factory.generate.llm_envs`).

Output that does not parse goes back to the model with the parse error (``parse_repairs``
times); if it still does not parse, it is a rejected candidate carrying the error, never a
crash. A candidate that fails certification goes back to the model with the verdict, the reason and
the end of the log, up to ``repair_rounds`` times (the pipeline drives that loop).
"""

from __future__ import annotations

import json
import posixpath
import random
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from factory.generate.certify import Certificate
from factory.generate.conversation import ConversingBackend, cut_note, prompt_message
from factory.generate.llm_envs import (
    MODE_TOOL_DOMAIN,
    MODE_WEB_APP,
    TOOL_DOMAIN_PROMPT,
    WEB_APP_PROMPT,
    LlmToolDomain,
    LlmWebApp,
    tool_domain_spec,
    web_app_spec,
)
from factory.generate.llm_verifier import (
    MAX_READS,
    MAX_SNAPSHOTS,
    PRESENT,
    SNAPSHOT_NAME,
    artifact_paths,
    conftest,
    presence_hook,
    read_problem,
    reads_problems,
    repair_reads,
    snapshot_hook,
    snapshot_path,
)
from factory.generate.pipeline import GenerationError, persona_and_scenario
from factory.generate.render import Origin, provenance
from factory.generate.results import LlmUsage, QualityOutcome
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty, Leaf
from factory.llm import LlmClient
from factory.resources import templates_dir
from factory.tasks.config import (
    AgentConfig,
    EnvironmentConfig,
    NetworkMode,
    TaskConfig,
    TaskSection,
    VerifierConfig,
    VerifierEnvironmentMode,
)
from factory.tasks.new_config import new_task_config
from factory.templating import render

TASK_PROMPT = "task_v1"
REPAIR_PROMPT = "repair_v1"
HIDDEN_FLAG_PROMPT = "hidden_flag_v1"
SYSTEM_PROMPT = "system_v1"
MODE_FREE = "free"
MODE_HIDDEN_FLAG = "hidden-flag"
HIDDEN_FLAG_OUTPUT = "/app/flag.txt"
"""Where a hidden-flag task's agent writes the flag (its tests read nothing else)."""


class LlmFile(BaseModel):
    path: str = Field(min_length=1)
    content: str

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        norm = posixpath.normpath(value.strip())
        if norm.startswith(("/", "..")) or norm in (".", "Dockerfile"):
            raise ValueError(f"environment file path {value!r} must be relative, inside the folder")
        return norm


class LlmSnapshot(BaseModel):
    """State no file carries, snapshotted for the separate verifier: ``command`` runs as root
    in the agent's container once the agent is done; its stdout is the snapshot."""

    name: str
    command: str = Field(min_length=1, max_length=2000)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not SNAPSHOT_NAME.match(value) or value.startswith("factory"):
            raise ValueError(
                "a snapshot name is 1-40 characters of a-z, 0-9, '.', '_', '-' "
                "(not starting with 'factory')"
            )
        return value


class LlmTask(BaseModel):
    """What the model must return in free-form mode. What the tests read of the agent's end
    state is declared (``verifier_reads``, ``snapshots``) and checked: see
    :mod:`factory.generate.llm_verifier`."""

    instruction: str = Field(min_length=20)
    dockerfile: str = Field(min_length=4)
    environment_files: list[LlmFile] = Field(default_factory=list)
    solution_sh: str = Field(min_length=1)
    test_py: str = Field(min_length=10)
    outputs: list[str] = Field(default_factory=list)
    verifier_reads: list[str] = Field(default_factory=list, max_length=MAX_READS)
    snapshots: list[LlmSnapshot] = Field(default_factory=list, max_length=MAX_SNAPSHOTS)

    @field_validator("verifier_reads")
    @classmethod
    def _reads(cls, value: list[str]) -> list[str]:
        for path in value:
            problem = read_problem(path)
            if problem:
                raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _separate_verifier(self) -> LlmTask:
        names = [s.name for s in self.snapshots]
        if len(set(names)) != len(names):
            raise ValueError("snapshots: two entries have the same name")
        problems = reads_problems(self.test_py, names)
        if problems:
            raise ValueError("; ".join(problems))
        self.verifier_reads = repair_reads(self.verifier_reads, self.outputs, self.test_py)
        if len(self.verifier_reads) > MAX_READS:
            raise ValueError(
                f"verifier_reads: the tests read {len(self.verifier_reads)} paths (with the "
                f"outputs and the paths test_py names); at most {MAX_READS}: name folders"
            )
        return self

    @field_validator("dockerfile")
    @classmethod
    def _starts_with_from(cls, value: str) -> str:
        lines = [
            ln.strip() for ln in value.splitlines() if ln.strip() and not ln.strip().startswith("#")
        ]
        if not lines or not lines[0].upper().startswith(("FROM ", "ARG ")):
            raise ValueError("the Dockerfile must start with FROM")
        return value

    @field_validator("test_py")
    @classmethod
    def _has_tests(cls, value: str) -> str:
        if not re.search(r"^\s*def test_\w+\(", value, re.MULTILINE):
            raise ValueError("test_py defines no pytest test function (def test_...)")
        return value


class LlmHiddenFlag(BaseModel):
    """What the model must return in hidden-flag mode."""

    technique: str = Field(min_length=3)
    hide_sh: str = Field(min_length=5)
    find_sh: str = Field(min_length=5)


_PROMPTS = {
    MODE_HIDDEN_FLAG: HIDDEN_FLAG_PROMPT,
    MODE_WEB_APP: WEB_APP_PROMPT,
    MODE_TOOL_DOMAIN: TOOL_DOMAIN_PROMPT,
}
_REPLY_MODELS: dict[str, type[BaseModel]] = {
    MODE_HIDDEN_FLAG: LlmHiddenFlag,
    MODE_WEB_APP: LlmWebApp,
    MODE_TOOL_DOMAIN: LlmToolDomain,
}


def extract_json(text: str) -> Any:
    """The first JSON object in a model reply (bare, fenced, wrapped in prose, or followed by
    trailing text)."""
    decoder = json.JSONDecoder()
    error: Exception | None = None
    fenced = re.findall(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    for candidate in [text, *fenced]:
        start = candidate.find("{")
        while start != -1:
            try:
                value, _end = decoder.raw_decode(candidate, start)
                if isinstance(value, dict):
                    return value
            except ValueError as exc:
                error = error or exc
            start = candidate.find("{", start + 1)
    raise ValueError(f"no JSON object in the reply ({error or 'no opening brace'})")


def _shell(script: str) -> str:
    script = script.replace("\r\n", "\n")
    return script if script.startswith("#!") else "#!/bin/bash\n" + script


# What the prompt promises a free-form task's image has besides the public base image: the
# verifier's pytest (pinned) and these Debian tools. factory adds them right after the final
# FROM, so the task builds the same way in every harness and its tests need no network.
FREE_FORM_PACKAGES = ("git", "sqlite3", "jq", "curl", "procps", "zip", "unzip")
_FROM_LINE = re.compile(r"^\s*FROM\s", re.IGNORECASE)


def with_verifier_setup(dockerfile: str) -> str:
    """The model's Dockerfile with factory's set-up lines after its last FROM line."""
    lines = dockerfile.splitlines()
    last_from = max((i for i, line in enumerate(lines) if _FROM_LINE.match(line)), default=-1)
    setup = render("families/_shared/dockerfile_setup.j2", packages=list(FREE_FORM_PACKAGES))
    lines[last_from + 1 : last_from + 1] = setup.strip("\n").splitlines()
    return "\n".join(lines) + "\n"


class LlmBackend(ConversingBackend):
    """Makes (and repairs) candidates with a model behind an OpenAI-compatible endpoint."""

    def __init__(
        self,
        client: LlmClient,
        suite: str,
        *,
        mode: str | None = None,
        temperature: float = 0.7,
        max_tokens: int = 3000,
        parse_repairs: int = 1,
    ) -> None:
        super().__init__(client, suite, temperature=temperature, parse_repairs=parse_repairs)
        self.forced_mode = mode
        self.max_tokens = max_tokens

    # --- Backend protocol ------------------------------------------------------------
    def make(
        self, leaf: Leaf, difficulty: Difficulty, seed: int, task_id: str
    ) -> tuple[TaskSpec, LlmUsage]:
        messages, prompt = self.task_messages(leaf, difficulty, seed)
        origin = self.origin(leaf, seed, prompt)
        return self._ask(task_id, messages, self._mode(leaf), difficulty, origin, seed)

    def task_messages(
        self, leaf: Leaf, difficulty: Difficulty, seed: int
    ) -> tuple[list[dict[str, str]], str]:
        """(messages, prompt name): the first request for a task of ``leaf``."""
        persona, scenario = persona_and_scenario(leaf, seed)
        context = {
            "difficulty": difficulty.value,
            "domain": leaf.domain.name,
            "category": leaf.category.name,
            "category_description": leaf.category.description,
            "skill": leaf.skill.name,
            "skill_description": leaf.skill.description,
            "topic": leaf.skill.params.get("topic", ""),
            "persona": persona,
            "scenario": scenario,
            "seed": seed,
        }
        prompt = _PROMPTS.get(self._mode(leaf), TASK_PROMPT)
        messages = [
            prompt_message("system", SYSTEM_PROMPT),
            prompt_message("user", prompt, **context),
        ]
        return messages, prompt

    def origin(self, leaf: Leaf, seed: int, prompt_version: str) -> Origin:
        """Where a task of ``leaf`` asked with ``prompt_version`` comes from."""
        persona, scenario = persona_and_scenario(leaf, seed)
        return Origin(
            suite=self.suite,
            taxonomy_path=leaf.path,
            category=leaf.category.name,
            seed=seed,
            generator="llm",
            prompt_version=prompt_version,
            model=self.client.settings.model,
            persona=persona,
            scenario=scenario,
        )

    def repair(
        self, leaf: Leaf, spec: TaskSpec, certificate: Certificate
    ) -> tuple[TaskSpec, LlmUsage]:
        messages = [
            *self.history(spec.id),
            prompt_message(
                "user",
                REPAIR_PROMPT,
                outcome=certificate.outcome,
                reason=certificate.reason,
                log_tail=certificate.log_tail[-1500:],
            ),
        ]
        p = spec.config.provenance
        origin = Origin(
            suite=self.suite,
            taxonomy_path=leaf.path,
            category=leaf.category.name,
            seed=p.seed or 0,
            generator="llm",
            prompt_version=f"{p.prompt_version}+{REPAIR_PROMPT}",
            model=self.client.settings.model,
        )
        difficulty = Difficulty(spec.config.metadata.get("difficulty", "medium"))
        return self._ask(
            spec.id, messages, self._mode(leaf), difficulty, origin, (p.seed or 0) + len(messages)
        )

    # --- internals ----------------------------------------------------------------------
    def _mode(self, leaf: Leaf) -> str:
        if self.forced_mode:
            return self.forced_mode
        if (
            leaf.skill.params.get("mode") == MODE_HIDDEN_FLAG
            or leaf.skill.generator == "ctf-hidden-flag"
        ):
            return MODE_HIDDEN_FLAG
        mode = leaf.skill.params.get("mode")
        if mode in (MODE_WEB_APP, MODE_TOOL_DOMAIN, MODE_FREE):
            return mode
        return {"web": MODE_WEB_APP, "tool": MODE_TOOL_DOMAIN}.get(leaf.domain.name, MODE_FREE)

    def _ask(
        self,
        task_id: str,
        messages: list[dict[str, str]],
        mode: str,
        difficulty: Difficulty,
        origin: Origin,
        seed: int,
    ) -> tuple[TaskSpec, LlmUsage]:
        """Ask; a reply that does not parse goes back with the parse error (``parse_repairs``
        times) before the candidate is rejected as unparseable."""
        model_cls = _REPLY_MODELS.get(mode, LlmTask)
        known = {"prompt_version": origin.prompt_version, "model": origin.model}
        usage = LlmUsage()
        for attempt in range(self.parse_repairs + 1):
            completion, messages = self.turn(
                task_id,
                messages,
                usage,
                known,
                schema=model_cls.model_json_schema(),
                max_tokens=self.max_tokens,
                seed=seed + attempt,
            )
            try:
                parsed = model_cls.model_validate(extract_json(completion.text))
                break
            except (ValueError, ValidationError) as exc:
                error = _first_error(exc) + cut_note(completion)
                messages = [
                    *messages,
                    prompt_message(
                        "user",
                        REPAIR_PROMPT,
                        outcome="unparseable",
                        reason=f"the reply is not the requested JSON object: {error}",
                        log_tail="",
                    ),
                ]
        else:
            raise GenerationError(
                f"unparseable reply after {self.parse_repairs + 1} tries: {error}",
                QualityOutcome.UNPARSEABLE,
                usage,
                **known,
            )
        if isinstance(parsed, LlmHiddenFlag):
            return self._hidden_flag_spec(parsed, task_id, difficulty, origin, seed), usage
        if isinstance(parsed, LlmWebApp):
            config = self._config(task_id, difficulty, origin, parsed.title)
            return web_app_spec(parsed, task_id, config), usage
        if isinstance(parsed, LlmToolDomain):
            config = self._config(task_id, difficulty, origin, parsed.title)
            return tool_domain_spec(parsed, task_id, config), usage
        return self._free_spec(parsed, task_id, difficulty, origin), usage

    def _config(
        self, task_id: str, difficulty: Difficulty, origin: Origin, description: str
    ) -> TaskConfig:
        return new_task_config(
            provenance(origin),
            task=TaskSection(name=f"{self.suite}/{task_id}", description=description[:200]),
            metadata={
                "difficulty": difficulty.value,
                "category": origin.category,
                "tags": ["llm-generated"],
            },
            verifier=VerifierConfig(timeout_sec=120.0),
            agent=AgentConfig(timeout_sec=600.0),
            environment=EnvironmentConfig(
                network_mode=NetworkMode.NO_NETWORK, cpus=1, memory_mb=1024
            ),
        )

    def _free_spec(
        self, task: LlmTask, task_id: str, difficulty: Difficulty, origin: Origin
    ) -> TaskSpec:
        runner = render("families/_shared/pytest_test.sh.j2")
        files: dict[str, bytes] = {
            "instruction.md": task.instruction.encode(),
            "environment/Dockerfile": with_verifier_setup(task.dockerfile).encode(),
            "solution/solve.sh": _shell(task.solution_sh).encode(),
            "tests/test.sh": runner.encode(),
            "tests/test_outputs.py": task.test_py.encode(),
        }
        for item in task.environment_files:
            files[f"environment/{item.path}"] = item.content.encode()
        first_line = task.instruction.strip().splitlines()[0]
        config = self._config(task_id, difficulty, origin, first_line)
        # Harbor's separate verifier: the declared reads travel, snapshots carry the rest,
        # and a read absent in the agent's container is removed before the tests run.
        reads = list(task.verifier_reads)
        snapshots = [snapshot_path(s.name) for s in task.snapshots]
        config.artifacts = [*artifact_paths(reads), PRESENT, *snapshots]
        config.verifier = VerifierConfig(
            timeout_sec=config.verifier.timeout_sec,
            environment_mode=VerifierEnvironmentMode.SEPARATE,
            collect=[presence_hook(reads)]
            + [snapshot_hook(s.name, s.command) for s in task.snapshots],
        )
        files["tests/conftest.py"] = conftest(reads).encode()
        return TaskSpec(
            id=task_id,
            files=files,
            config=config,
            outputs=tuple(p for p in task.outputs if p.startswith("/")),
        )

    def _hidden_flag_spec(
        self, task: LlmHiddenFlag, task_id: str, difficulty: Difficulty, origin: Origin, seed: int
    ) -> TaskSpec:
        rng = random.Random(seed)
        flag = "FLAG{" + "".join(rng.choice("abcdef0123456789") for _ in range(24)) + "}"
        skeleton = templates_dir() / "llm" / MODE_HIDDEN_FLAG
        context = {"flag": flag, "difficulty": difficulty.value}
        files: dict[str, bytes] = {}
        for path in sorted(p for p in skeleton.rglob("*.j2")):
            rel = path.relative_to(skeleton).as_posix()[: -len(".j2")]
            files[rel] = render(
                f"llm/{MODE_HIDDEN_FLAG}/{Path(rel).as_posix()}.j2", **context
            ).encode()
        files["environment/hide.sh"] = _shell(task.hide_sh).encode()
        files["solution/solve.sh"] = _shell(task.find_sh).encode()
        config = self._config(task_id, difficulty, origin, "Find a hidden flag")
        config.metadata["technique"] = task.technique[:300]
        # The tests read only the flag file: Harbor's separate verifier gets it alone.
        config.artifacts = [HIDDEN_FLAG_OUTPUT]
        config.verifier = VerifierConfig(
            timeout_sec=config.verifier.timeout_sec,
            environment_mode=VerifierEnvironmentMode.SEPARATE,
        )
        return TaskSpec(
            id=task_id,
            files=files,
            config=config,
            secrets=(flag,),
            outputs=(HIDDEN_FLAG_OUTPUT,),
            forbidden_strings=(flag,),
        )


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        return f"{loc}: {first.get('msg')}"
    return str(exc)[:300]
