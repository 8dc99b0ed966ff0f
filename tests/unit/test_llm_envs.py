"""LLM web-app and tool-domain modes: a recorded reply becomes a task inside the fixed
skeleton; bad replies are rejected with the reason."""

from __future__ import annotations

import json

import pytest
from fixtures.llm_envs import TOOL, TOOL_DOMAIN_REPLY, WEB, WEB_APP_REPLY
from fixtures.llm_stub import Stub, reply

from factory.families.tool.toolfamily import SNAPSHOT_DIR, snapshot_hook
from factory.generate.llm_backend import LlmBackend
from factory.generate.pipeline import GenerationError
from factory.generate.taxonomy import Difficulty
from factory.llm import LlmClient, LlmSettings
from factory.tasks.config import VerifierEnvironmentMode
from factory.tasks.lint import lint_task


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


def backend(stub: Stub) -> LlmBackend:
    return LlmBackend(LlmClient(LlmSettings(base_url=stub.url, model="m")), "s", parse_repairs=0)


def test_web_leaf_gets_the_web_skeleton(stub):
    stub.queue = [reply(json.dumps(WEB_APP_REPLY))]
    spec, _ = backend(stub).make(WEB, Difficulty.MEDIUM, 5, "web-notes-000")
    prompt = stub.requests[0]["messages"][1]["content"]
    assert "from kit import WebApp" in prompt and "solve_py" in prompt
    files = spec.files
    assert files["environment/app/app.py"].decode() == WEB_APP_REPLY["app_py"]
    assert json.loads(files["environment/app/seed.json"])["users"][0]["username"] == "ada"
    assert b"ENTRYPOINT" in files["environment/Dockerfile"]
    assert "environment/webkit/browser.py" in files and "environment/webkit/kit.py" in files
    assert b"client import Client" in files["solution/solve.sh"]
    assert b"browse open" in files["instruction.md"]
    assert spec.config.environment.healthcheck.command == "python3 /opt/webkit/health.py"
    assert spec.config.provenance.prompt_version == "web_app_v2"


def test_tool_leaf_gets_the_tool_skeleton(stub, tmp_path):
    stub.queue = [reply(json.dumps(TOOL_DOMAIN_REPLY))]
    spec, _ = backend(stub).make(TOOL, Difficulty.HARD, 5, "tool-library-000")
    files = spec.files
    module = files["environment/toolenv/domains/library.py"].decode()
    assert module.startswith('"""') and "POLICY = " in module and "def lend(" in module
    assert json.loads(files["tests/calls.json"])[-1]["name"] == "lend"
    assert b"/opt/toolenv/toolenv/domains/library.py" in files["tests/test_outputs.py"]
    assert b"Never lend a book" in files["instruction.md"]
    assert b"tool call give_back" in files["solution/solve.sh"]
    assert set(spec.mutations) == {"stops-early", "breaks-policy-1"}
    assert "m-2" in spec.mutations["breaks-policy-1"]
    assert spec.config.environment.mcp_servers[0].url == "http://127.0.0.1:8000/mcp"
    # Harbor's separate verifier: a root hook copies the server's record; the tests read it
    assert spec.config.verifier.mode is VerifierEnvironmentMode.SEPARATE
    assert spec.config.artifacts == [SNAPSHOT_DIR]
    (hook,) = spec.config.verifier.collect
    assert hook.command == snapshot_hook() and hook.user == "root"
    tests = files["tests/test_outputs.py"].decode()
    assert f"SNAPSHOT = Path({SNAPSHOT_DIR!r})" in tests and '(SNAPSHOT / "calls.jsonl")' in tests
    assert [f.line() for f in lint_task(spec.write(tmp_path / "task"))] == []


@pytest.mark.parametrize(
    ("leaf", "reply_obj", "needle"),
    [
        (0, {**WEB_APP_REPLY, "app_py": "print('no kit') " * 20}, "kit.WebApp"),
        (0, {**WEB_APP_REPLY, "seed": {"users": [{"username": "x"}]}}, "display_name"),
        (
            0,
            {**WEB_APP_REPLY, "solve_py": "import os\nos.system('sqlite3 ...')  # direct"},
            "client.Client",
        ),
        (1, {**TOOL_DOMAIN_REPLY, "name": "Bad Name"}, "module name"),
        (1, {**TOOL_DOMAIN_REPLY, "domain_py": "x = 1\n" * 50}, "DOMAIN = Domain"),
        (1, {**TOOL_DOMAIN_REPLY, "calls": []}, "calls"),
    ],
)
def test_bad_replies_name_the_problem(stub, leaf, reply_obj, needle):
    stub.queue = [reply(json.dumps(reply_obj))]
    with pytest.raises(GenerationError, match=needle):
        backend(stub).make([WEB, TOOL][leaf], Difficulty.EASY, 1, "x-000")


def test_every_kit_helper_the_web_app_prompt_names_is_in_the_kit():
    """The prompt tells a model which helpers the shipped kit has: a name the kit lacks (or
    lost in a rename) would make every app that follows the prompt fail at import."""
    import ast
    import re

    from factory.generate.llm_envs import WEB_APP_PROMPT
    from factory.resources import templates_dir, webkit_dir

    prompt = (templates_dir() / "prompts" / f"{WEB_APP_PROMPT}.j2").read_text()
    tree = ast.parse((webkit_dir() / "kit.py").read_text())
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    web_app = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "WebApp")
    methods = {n.name for n in web_app.body if isinstance(n, ast.FunctionDef)}
    named_methods = set(re.findall(r"\bweb\.(\w+)\(", prompt))
    named_functions = set(re.findall(r"`(\w+)\(", prompt)) - {"web", "Client"}
    assert {"column", "one_or_404", "execute", "action"} <= named_methods
    assert {"search_form", "select", "where"} <= named_functions
    assert named_methods - methods == set()
    assert named_functions - functions == set()
