"""LLM modes for the web and tool domains: constrained generation inside a fixed skeleton.

* **web-app** - the model writes a small app on the shared webkit (``app_py``), its seed data,
  the instruction, a reference solution that drives the app over HTTP and pytest checks on the
  app's database. The image, the webkit, the browser tool, start-up, healthcheck and the test
  runner are fixed (the same as the procedural web families).
* **tool-domain** - the model writes a tool domain (tools, policy rules) on the toolenv core,
  the seeded state, the customer's request, the reference chain of calls and optional policy
  traps. Server, CLI, MCP endpoint and verifier are fixed. The expected final state is
  computed inside the verifier's container by replaying the reference chain on a private copy
  of the domain and state uploaded with the tests, so model-written code never runs on the
  host. Near misses (the chain stopped early, each trap added) are derived from the chain.

Everything is then certified like any candidate (nop 0, oracle 1, probes).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, Field, field_validator

from factory.families.base import SNAPSHOT_DIR as WEB_SNAPSHOT_DIR
from factory.families.tool.scenario import REPLY_PATH, Call, solve_script
from factory.families.tool.toolfamily import KIT_FILES as TOOL_KIT_FILES
from factory.families.tool.toolfamily import RECORD_DIR, SNAPSHOT_DIR, TOOLENV_DIR, snapshot_hook
from factory.families.web.webfamily import APP_DB, SNAPSHOT_DB, WEB_PORT, web_environment_files
from factory.families.web.webfamily import HEALTHCHECK as WEB_HEALTHCHECK
from factory.families.web.webfamily import snapshot_hook as web_snapshot_hook
from factory.generate.llm_verifier import named_paths
from factory.generate.spec import TaskSpec
from factory.tasks.config import (
    TaskConfig,
    VerifierCollectConfig,
    VerifierConfig,
    VerifierEnvironmentMode,
    unique,
)
from factory.tasks.tool_server import HEALTHCHECK as TOOL_HEALTHCHECK
from factory.tasks.tool_server import TOOL_PORT, mcp_servers
from factory.templating import render
from factory.vocabulary import AGENT_USER

MODE_WEB_APP = "web-app"
MODE_TOOL_DOMAIN = "tool-domain"
WEB_APP_PROMPT = "web_app_v2"
TOOL_DOMAIN_PROMPT = "tool_domain_v1"
_NAME = re.compile(r"^[a-z][a-z0-9_]{1,30}$")


def _has_tests(value: str) -> str:
    if not re.search(r"^\s*def test_\w+\(", value, re.MULTILINE):
        raise ValueError("test_py defines no pytest test function (def test_...)")
    return value


def _must_contain(value: str, field: str, *rules: tuple[str, str]) -> str:
    """``value`` when it contains each rule's needle; else ``<field> must <why>`` of the first
    needle it lacks."""
    for needle, why in rules:
        if needle not in value:
            raise ValueError(f"{field} must {why}")
    return value


class LlmWebApp(BaseModel):
    """What the model returns in web-app mode."""

    title: str = Field(min_length=3, max_length=80)
    app_py: str = Field(min_length=200)
    """The app: ``from kit import WebApp``, routes, ``web.main()`` under ``__main__``."""
    seed: dict[str, list[dict[str, Any]]]
    """Rows per table; ``users`` rows carry username, password, display_name, role."""
    instruction: str = Field(min_length=40)
    solve_py: str = Field(min_length=40)
    """Reference solution: Python using ``from client import Client``."""
    test_py: str = Field(min_length=40)
    """pytest checks on /srv/app/data/app.db."""
    near_misses: dict[str, str] = Field(default_factory=dict)
    """Plausible wrong solutions (name -> Python like ``solve_py``) the tests must reject."""

    @field_validator("app_py")
    @classmethod
    def _uses_kit(cls, value: str) -> str:
        return _must_contain(
            value,
            "app_py",
            ("WebApp(", "build the app with kit.WebApp"),
            ("web.main()", "end with `if __name__ == '__main__': web.main()`"),
        )

    @field_validator("seed")
    @classmethod
    def _has_users(cls, value: dict[str, list[dict[str, Any]]]) -> dict:
        users = value.get("users") or []
        if not users or any(not {"username", "password", "display_name"} <= set(u) for u in users):
            raise ValueError("seed.users needs rows with username, password and display_name")
        return value

    @field_validator("solve_py")
    @classmethod
    def _uses_client(cls, value: str) -> str:
        return _must_contain(value, "solve_py", ("Client(", "drive the app with client.Client"))

    @field_validator("test_py")
    @classmethod
    def _reads_the_snapshot(cls, value: str) -> str:
        """The tests run in Harbor's separate verifier, which gets only the copy of the app's
        database a collect hook takes when the agent is done: tests that open the live
        database's path are repaired to open the copy; tests that read nothing of it, or other
        files of the app, are rejected with the reason."""
        value = _has_tests(value).replace(APP_DB, SNAPSHOT_DB)
        if SNAPSHOT_DB not in value:
            raise ValueError(
                f"test_py must check the app's database: open {SNAPSHOT_DB} (read-only URI "
                f"file:{SNAPSHOT_DB}?mode=ro), the copy the tests get of {APP_DB}"
            )
        others = [p for p in named_paths(value) if p != SNAPSHOT_DB and p.startswith("/srv/app")]
        if others:
            raise ValueError(
                f"test_py reads {', '.join(others)}: the tests run in a fresh container that "
                f"gets only the database ({SNAPSHOT_DB})"
            )
        return value


class LlmCall(BaseModel):
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class LlmToolDomain(BaseModel):
    """What the model returns in tool-domain mode."""

    name: str
    """Module name of the domain (lowercase, underscores)."""
    title: str = Field(min_length=3, max_length=80)
    policy: str = Field(min_length=40)
    """The policy document (markdown) the agent must follow; the module sees it as POLICY."""
    domain_py: str = Field(min_length=200)
    """Tools and rules on ``DOMAIN = Domain(NAME, TITLE, POLICY)``."""
    state: dict[str, Any]
    request: str = Field(min_length=20)
    calls: list[LlmCall] = Field(min_length=1)
    traps: list[LlmCall] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _module_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("name must be a lowercase module name (a-z, 0-9, _), 2-31 chars")
        return value

    @field_validator("domain_py")
    @classmethod
    def _defines_domain(cls, value: str) -> str:
        return _must_contain(
            value, "domain_py", ("DOMAIN = Domain(", "define DOMAIN = Domain(NAME, TITLE, POLICY)")
        )


def web_app_spec(task: LlmWebApp, task_id: str, config: TaskConfig) -> TaskSpec:
    """The fixed web skeleton around what the model wrote."""
    files: dict[str, bytes] = {
        rel: content if isinstance(content, bytes) else content.encode()
        for rel, content in web_environment_files(task.seed).items()
    }
    files["environment/app/app.py"] = task.app_py.encode()
    files["environment/Dockerfile"] = render("families/_shared/dockerfile_web.j2").encode()
    conventions = render("families/_shared/web_conventions.md.j2", port=WEB_PORT)
    files["instruction.md"] = (task.instruction.strip() + "\n\n" + conventions).encode()
    files["solution/solve.sh"] = _python_solution(task.solve_py).encode()
    files["tests/test.sh"] = render("families/_shared/pytest_test.sh.j2").encode()
    files["tests/test_outputs.py"] = task.test_py.encode()
    config.environment.healthcheck = dict(WEB_HEALTHCHECK)  # type: ignore[assignment]
    config.environment.memory_mb = 768
    config.agent.user = AGENT_USER  # the app runs as its own user (dockerfile_web.j2)
    config.metadata["tags"] = unique([*config.metadata.get("tags", []), "web"])
    mutations = {
        re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:40] or f"near-miss-{i}": (
            _python_solution(code)
        )
        for i, (name, code) in enumerate(task.near_misses.items())
    }
    # Harbor's separate verifier, as for the web families: a root hook copies the app's
    # database (sqlite's backup API) into a fresh folder; the tests read only that copy.
    config.artifacts = [WEB_SNAPSHOT_DIR]
    config.verifier = VerifierConfig(
        timeout_sec=config.verifier.timeout_sec,
        environment_mode=VerifierEnvironmentMode.SEPARATE,
        collect=[VerifierCollectConfig(command=web_snapshot_hook(), user="root")],
    )
    return TaskSpec(
        id=task_id,
        files=files,
        config=config,
        mutations=mutations,
        outputs=(APP_DB,),
    )


def _python_solution(code: str) -> str:
    """solve.sh running Python that drives the app (client.py is on the path)."""
    return (
        "#!/bin/bash\nset -euo pipefail\nPYTHONPATH=/opt/webkit python3 - <<'PY'\n"
        + code.rstrip()
        + "\nPY\n"
    )


def tool_domain_spec(task: LlmToolDomain, task_id: str, config: TaskConfig) -> TaskSpec:
    """The fixed tool skeleton around what the model wrote."""
    prelude = (
        '"""A tool domain written by a model for factory (LLM tool-domain mode)."""\n\n'
        "from __future__ import annotations\n\n"
        "from ..core import JSON, Domain, ToolError, find, require  # noqa: F401\n\n"
        f"NAME = {task.name!r}\nTITLE = {task.title!r}\nPOLICY = {task.policy!r}\n\n"
    )
    body = "\n".join(
        line
        for line in task.domain_py.splitlines()
        if not line.startswith(("from __future__", "from ..core import", "from toolenv"))
    )
    module = (prelude + body.strip() + "\n").encode()
    kit = {rel: (TOOLENV_DIR / rel).read_bytes() for rel in TOOL_KIT_FILES}
    kit[f"domains/{task.name}.py"] = module
    state = json.dumps(task.state, indent=1, sort_keys=True).encode()
    calls = [Call(c.name, c.arguments) for c in task.calls]
    files: dict[str, bytes] = {f"environment/toolenv/{rel}": data for rel, data in kit.items()}
    files["environment/state.json"] = state
    files["tests/calls.json"] = json.dumps(
        [{"name": c.name, "arguments": c.arguments} for c in calls], indent=1
    ).encode()
    # The verifier replays the chain on the image's own copy of the code and the state, after
    # checking both are byte-identical to what was generated (the agent may not alter them).
    digests = {
        f"/opt/toolenv/toolenv/{rel}": hashlib.sha256(data).hexdigest() for rel, data in kit.items()
    }
    digests["/var/lib/toolenv/initial.json"] = hashlib.sha256(state).hexdigest()
    context = {
        "domain_name": task.name,
        "domain_title": task.title,
        "policy": task.policy.strip(),
        "request": task.request.strip(),
        "calls": calls,
        "port": TOOL_PORT,
        "digests": digests,
        "reply_path": REPLY_PATH,
        "reply": "I have taken care of your request.",
        "customer": None,  # the request is the instruction (no simulated customer)
        "record_dir": RECORD_DIR,
        "snapshot_dir": SNAPSHOT_DIR,
    }
    for rel in (
        "environment/Dockerfile",
        "environment/start-tools.sh",
        "instruction.md",
        "solution/solve.sh",
        "tests/test.sh",
    ):
        files[rel] = render(f"families/_tool/{rel}.j2", **context).encode()
    files["tests/test_outputs.py"] = render(
        f"llm/{MODE_TOOL_DOMAIN}/tests/test_outputs.py.j2", **context
    ).encode()
    mutations = {"stops-early": solve_script(calls[:-1], "near miss: the last call is never made")}
    for i, trap in enumerate(task.traps):
        mutations[f"breaks-policy-{i + 1}"] = solve_script(
            [*calls, Call(trap.name, trap.arguments)], f"near miss: also tries {trap.name}"
        )
    config.environment.healthcheck = dict(TOOL_HEALTHCHECK)  # type: ignore[assignment]
    config.environment.mcp_servers = mcp_servers(task.name)  # type: ignore[assignment]
    config.environment.memory_mb = 512
    config.agent.user = AGENT_USER  # the tool server runs as its own user (start-tools.sh)
    config.metadata["tags"] = unique([*config.metadata.get("tags", []), "tool-use", task.name])
    # Harbor's separate verifier, as for the tool families: a root hook copies the server's
    # record into a fresh folder once the agent is done; the tests read only that copy.
    config.artifacts = [SNAPSHOT_DIR]
    config.verifier = VerifierConfig(
        timeout_sec=config.verifier.timeout_sec,
        environment_mode=VerifierEnvironmentMode.SEPARATE,
        collect=[VerifierCollectConfig(command=snapshot_hook(), user="root")],
    )
    return TaskSpec(id=task_id, files=files, config=config, mutations=mutations)
