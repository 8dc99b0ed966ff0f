"""`factory import --format bfcl`: BFCL multi-turn base entries -> Harbor tool tasks (no Docker).

The tests that read BFCL's data need a ``bfcl_eval-*.whl`` ($FACTORY_BFCL_WHEEL or
~/.cache/factory/wheels/) and are skipped without one, as in test_bfcl_import.py.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import shlex
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from factory.toolenv.bfcl_backend import BfclBackend
from factory.toolenv.core import Domain, Environment

from factory.importers import bfcl, bfcl_tasks
from factory.importers.bfcl_tasks import BfclSkip, named_arguments
from factory.tasks.model import load_harbor_task
from factory.toolenv import bfcl_runtime as rt
from factory.toolenv import server

# --------------------------------------------------------------------------- helpers


@contextmanager
def serving(backend: Any) -> Iterator[str]:
    """The tool server for ``backend`` on a free port, in a thread; yields its base URL."""
    httpd = ThreadingHTTPServer(
        ("127.0.0.1", 0), server.make_handler(server.ToolService(backend, None, None))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def http(base: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read()
        return json.loads(raw) if raw else None


FAKE_API = """
from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context import GREETING


class TwitterAPI:
    def __init__(self):
        self.posts = []
        self._secret = 1

    def _load_scenario(self, scenario, long_context=False):
        self.posts = list(scenario.get("posts", []))

    def post(self, text: str, tags: list = None):
        self.posts.append(text)
        return {"id": len(self.posts), "greeting": GREETING}

    def count(self):
        return len(self.posts)

    def delete_all(self):
        self.posts = []
        return {"deleted": True}

    def boom(self):
        raise ValueError("bad input")
"""


def fake_backend(tmp_path: Path, excluded: tuple[str, ...] = ("delete_all",)) -> BfclBackend:
    api = tmp_path / "bfcl_api"
    api.mkdir()
    (api / "long_context.py").write_text('GREETING = "hi"\n')
    (api / "posting_api.py").write_text(FAKE_API)
    names = [n for n in ("post", "count", "delete_all", "boom") if n not in excluded]
    tools = [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": f"{n} things",
                "parameters": {"type": "object", "properties": {}},
            },
        }
        for n in names
    ]
    config = {
        "id": "multi_turn_base_x",
        "involved_classes": ["TwitterAPI"],
        "initial_config": {"TwitterAPI": {"posts": ["first"]}},
        "tools": tools,
        "source_dir": "bfcl_api",
    }
    path = tmp_path / "bfcl_task.json"
    path.write_text(json.dumps(config))
    return BfclBackend.from_file(path)


# --------------------------------------------------------------------------- no data needed


def test_task_ids() -> None:
    assert bfcl_tasks.task_id_for("multi_turn_base_12") == "bfcl-multi-turn-base-12"


def test_positional_arguments_take_the_docs_parameter_names() -> None:
    doc = {
        "name": "post_tweet",
        "parameters": {
            "type": "dict",
            "properties": {"content": {}, "tags": {}, "mentions": {}},
        },
    }
    assert named_arguments(doc, ["hello"], {"mentions": ["@a"]}) == {
        "content": "hello",
        "mentions": ["@a"],
    }
    assert named_arguments(doc, ["a", ["#t"]], {}) == {"content": "a", "tags": ["#t"]}
    with pytest.raises(BfclSkip, match="3 parameter"):
        named_arguments(doc, [1, 2, 3, 4], {})
    with pytest.raises(BfclSkip, match="both by position and by name"):
        named_arguments(doc, ["a"], {"content": "b"})


def test_backend_runs_calls_like_bfcl_and_logs_result_strings(tmp_path: Path) -> None:
    backend = fake_backend(tmp_path)
    assert backend.call("post", {"text": "x"}) == {
        "ok": True,
        "result": {"id": 2, "greeting": "hi"},
    }
    assert backend.call("count", {}) == {"ok": True, "result": "2"}
    failed = backend.call("boom", {})
    assert failed == {"ok": False, "error": "Error during execution: bad input"}
    missing = backend.call("post", {})
    assert not missing["ok"] and "text" in missing["error"]
    excluded = backend.call("delete_all", {})  # the instance has it; the task excludes it
    assert not excluded["ok"] and "unknown tool 'delete_all'" in excluded["error"]
    assert not backend.call("post", ["x"])["ok"]
    log = backend.snapshot()["log"]
    assert [e["result"] for e in log[:2]] == ['{"id": 2, "greeting": "hi"}', "2"]
    assert [e["ok"] for e in log] == [True, True, False, False, False, False]
    assert backend.snapshot()["state"] == {"TwitterAPI": {"posts": ["first", "x"]}}
    backend.reset()
    assert backend.snapshot() == {"state": {"TwitterAPI": {"posts": ["first"]}}, "log": []}


def test_server_serves_a_bfcl_backend(tmp_path: Path) -> None:
    backend = fake_backend(tmp_path)
    with serving(backend) as base:
        assert http(base, "/health") == {"ok": True, "domain": "bfcl"}
        names = [t["function"]["name"] for t in http(base, "/tools")["tools"]]
        assert names == ["post", "count", "boom"]
        assert "TwitterAPI" in http(base, "/policy")["policy"]
        assert http(base, "/call", {"name": "post", "arguments": '{"text": "y"}'})["ok"]
        listed = http(base, "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert [t["name"] for t in listed["result"]["tools"]] == names
        called = http(
            base,
            "/mcp",
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count"}},
        )
        assert called["result"] == {"content": [{"type": "text", "text": '"2"'}], "isError": False}
        state = http(base, "/state")
        assert state["state"]["TwitterAPI"]["posts"] == ["first", "y"]
        assert [e["tool"] for e in state["log"]] == ["post", "count"]
        with pytest.raises(urllib.error.HTTPError) as refused:  # control: admin socket only
            http(base, "/reset", {})
        assert refused.value.code == 404
        assert len(http(base, "/state")["log"]) == 2


def test_server_still_serves_a_domain(tmp_path: Path) -> None:
    domain = Domain(name="counter", title="Counter", policy="Count carefully.")

    @domain.tool("Add n.", {"n": {"type": "integer"}}, mutates=True)
    def add(state: dict, n: int) -> int:
        state["total"] += n
        return state["total"]

    out = tmp_path / "state.json"
    backend = server.DomainBackend(Environment(domain, {"total": 1}))
    service = server.ToolService(backend, tmp_path / "calls.jsonl", out)
    assert service.call("add", {"n": 2}) == {"ok": True, "result": 3}
    assert not service.call("add", {"n": "x"})["ok"]
    assert json.loads(out.read_text()) == {"total": 3}
    assert len((tmp_path / "calls.jsonl").read_text().splitlines()) == 2
    with serving(backend) as base:
        assert http(base, "/health") == {"ok": True, "domain": "counter"}
        assert http(base, "/policy") == {"policy": "Count carefully."}
        assert http(base, "/tools")["tools"][0]["function"]["name"] == "add"


def test_server_command_line_checks_backend_options(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="needs --domain and --state"):
        server.make_backend("domain", domain="calendar", state=None, config=None)
    with pytest.raises(SystemExit, match="needs --config"):
        server.make_backend("bfcl", domain=None, state=None, config=None)
    fake_backend(tmp_path)
    backend = server.make_backend(
        "bfcl", domain=None, state=None, config=tmp_path / "bfcl_task.json"
    )
    assert backend.name == "bfcl"


# --------------------------------------------------------------------------- with the wheel


@pytest.fixture(scope="module")
def src() -> bfcl.BfclSource:
    found = bfcl.find_wheel()
    if found is None or not found.is_file():
        pytest.skip(
            "no bfcl-eval wheel: set FACTORY_BFCL_WHEEL or run "
            "`pip download bfcl-eval --no-deps -d ~/.cache/factory/wheels`"
        )
    return bfcl.locate_bfcl(found)


@pytest.fixture(scope="module")
def entries(src: bfcl.BfclSource) -> list[bfcl.BfclEntry]:
    return bfcl.load_multi_turn_base(src)


@pytest.fixture(scope="module")
def imported(src: bfcl.BfclSource, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfcl")
    report = bfcl_tasks.import_bfcl(out, source=src.package_dir, ids=["0", "multi_turn_base_47"])
    assert [r.task_id for r in report.imported] == [
        "bfcl-multi-turn-base-0",
        "bfcl-multi-turn-base-47",
    ]
    return out


def test_select_entries(entries: list[bfcl.BfclEntry]) -> None:
    chosen = bfcl_tasks.select_entries(
        entries, ["bfcl-multi-turn-base-3", "1", "multi_turn_base_2"]
    )
    assert [e.id for e in chosen] == ["multi_turn_base_1", "multi_turn_base_2", "multi_turn_base_3"]
    assert len(bfcl_tasks.select_entries(entries, None, 5)) == 5
    with pytest.raises(bfcl.BfclDataError, match="no multi-turn base entry nope"):
        bfcl_tasks.select_entries(entries, ["nope"])


def test_docs_order_matches_the_methods_for_positional_calls(
    src: bfcl.BfclSource, entries: list[bfcl.BfclEntry]
) -> None:
    """Naming positional arguments after the docs binds them as Python would."""
    checked = 0
    for entry in entries:
        instances = rt.create_instances(src.source_dir, entry.involved_classes, {})
        table = rt.method_table(instances)
        docs = {doc["name"]: doc for doc in entry.functions}
        for text in (call for turn in entry.ground_truth for call in turn):
            name, args, kwargs = rt.parse_call(text)
            if not args:
                continue
            bound = inspect.signature(table[name]).bind(*args, **kwargs).arguments
            assert named_arguments(docs[name], args, kwargs) == dict(bound), text
            checked += 1
    assert checked >= 30


def test_every_entry_converts(src: bfcl.BfclSource, entries: list[bfcl.BfclEntry]) -> None:
    unchanged = 0
    for entry in entries:
        calls, initial, final = bfcl_tasks.check_entry(entry, src)
        assert sum(map(len, calls)) == sum(map(len, entry.ground_truth)), entry.id
        unchanged += final == initial
    assert unchanged > 0  # kept: the response check fails a run that makes no call


def test_task_files_and_notes(imported: Path) -> None:
    task = imported / "bfcl-multi-turn-base-0"
    for rel in (
        "instruction.md",
        "task.toml",
        "environment/Dockerfile",
        "environment/start-tools.sh",
        "environment/bfcl_task.json",
        "environment/toolenv/server.py",
        "environment/toolenv/mcp.py",
        "environment/toolenv/bfcl_backend.py",
        "environment/toolenv/bfcl_runtime.py",
        "environment/bfcl_api/gorilla_file_system.py",
        "environment/bfcl_api/posting_api.py",
        "environment/bfcl_api/long_context.py",
        "solution/solve.sh",
        "tests/test.sh",
        "tests/test_outputs.py",
        "tests/ground_truth.json",
        "tests/bfcl_runtime.py",
        "tests/bfcl_api/gorilla_file_system.py",
    ):
        assert (task / rel).is_file(), rel
    loaded = load_harbor_task(task)
    config = loaded.config
    assert loaded.id == "bfcl-multi-turn-base-0"
    assert config.environment.healthcheck is not None
    assert config.environment.mcp_servers[0].url == "http://127.0.0.1:8000/mcp"
    assert not config.environment.network_enabled
    assert config.metadata["license"] == "Apache-2.0"
    provenance = config.provenance
    assert provenance.source == "import:bfcl-multi-turn-base"
    notes = " ".join(provenance.notes)
    for words in ("flattened", "final state", "response check", "excluded_function cp"):
        assert words in notes
    instruction = (task / "instruction.md").read_text()
    assert "The user will make these requests in order:" in instruction
    assert "\n1. Move 'final_report.pdf'" in instruction and "\n4. " in instruction
    for words in ("tool list", "tool call NAME", "/tools", "/call", "http://127.0.0.1:8000/mcp"):
        assert words in instruction
    tools = json.loads((task / "environment/bfcl_task.json").read_text())["tools"]
    assert "cp" not in {t["function"]["name"] for t in tools}
    assert "python3-mpmath" not in (task / "environment/Dockerfile").read_text()
    assert "ENTRYPOINT" in (task / "environment/Dockerfile").read_text()
    math_task = imported / "bfcl-multi-turn-base-47"
    assert "python3-mpmath" in (math_task / "environment/Dockerfile").read_text()
    assert "MathAPI" in " ".join(load_harbor_task(math_task).config.provenance.notes)
    report = json.loads((imported / ".bfcl-import.json").read_text())
    assert report["imported"] == 2 and report["skipped"] == 0


def test_solution_names_positional_arguments(imported: Path) -> None:
    solve = (imported / "bfcl-multi-turn-base-0/solution/solve.sh").read_text()
    assert 'tool call sort \'{"file_name": "final_report.pdf"}\'' in solve
    assert solve.count("tool call ") == 10


def _solution_calls(task: Path) -> list[tuple[str, dict]]:
    calls = []
    for line in (task / "solution/solve.sh").read_text().splitlines():
        if line.startswith("tool call "):
            _, _, name, arguments = shlex.split(line)
            calls.append((name, json.loads(arguments)))
    return calls


@pytest.mark.parametrize("task_id", ["bfcl-multi-turn-base-0", "bfcl-multi-turn-base-47"])
def test_verifier_passes_the_solution_and_fails_doing_nothing(
    imported: Path, task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task's own tests/test_outputs.py, run here against the task's own server code."""
    task = imported / task_id
    backend = BfclBackend.from_file(task / "environment/bfcl_task.json")
    spec = importlib.util.spec_from_file_location(
        f"bfcl_verifier_{task_id}", task / "tests/test_outputs.py"
    )
    assert spec is not None and spec.loader is not None
    verifier = importlib.util.module_from_spec(spec)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    try:
        spec.loader.exec_module(verifier)
        with serving(backend) as base:
            verifier.TASK["port"] = int(base.rsplit(":", 1)[1])
            with pytest.raises(AssertionError, match="never obtained"):
                verifier.test_ground_truth_results_were_obtained()  # nothing done yet
            for name, arguments in _solution_calls(task):
                assert http(base, "/call", {"name": name, "arguments": arguments})["ok"]
            verifier.test_final_state()
            verifier.test_ground_truth_results_were_obtained()
            http(base, "/call", {"name": "cd", "arguments": {"folder": "nowhere"}})
            verifier.test_ground_truth_results_were_obtained()  # extra calls are allowed
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]


@pytest.mark.parametrize("spelling", ["import", "tasks import-bfcl"])
def test_cli_imports_by_id(src: bfcl.BfclSource, tmp_path: Path, spelling: str) -> None:
    from typer.testing import CliRunner

    from factory.cli import app

    if spelling == "import":
        args = ["import", str(src.package_dir), "--format", "bfcl", "--ids", "5", "--ids", "6,7"]
    else:  # the old spelling, a hidden alias
        args = ["tasks", "import-bfcl", "--source", str(src.package_dir), "--ids", "5", "6,7"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path), "--limit", "2"])
    assert result.exit_code == 0, result.output
    assert "2 tasks into" in result.output and "(2 from bfcl)" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".bfcl-import.json",
        "bfcl-multi-turn-base-5",
        "bfcl-multi-turn-base-6",
    ]
