"""Native tool calling without Docker: the harness's tool-call format with a stand-in sandbox
that runs the harness's commands on this machine, a task whose MCP server is the tool server on
loopback, the in-container MCP client against servers of both protocol eras, the endpoint
policy against a stub, and tool rendering through chat templates."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import jinja2
import pytest
from factory.toolenv.core import load_domain
from factory.toolenv.server import ToolService, make_handler
from fixtures.files import write_files
from fixtures.llm_stub import Stub, reply
from fixtures.tool_server import serve_domain

from factory.agent import mcp_call
from factory.agent.actions import ActionFormat
from factory.agent.chat_template import render_prompt
from factory.agent.endpoint import EndpointPolicy
from factory.agent.harness import Episode, HarnessConfig
from factory.llm import LlmClient, LlmSettings
from factory.runtime import ExecResult
from factory.tasks.model import load_task
from factory.validate.isolation import BUSYBOX

CALENDAR_TOOLS = sorted(load_domain("calendar").tools)


class HostBox:
    """Runs what the harness would run in the container on this machine instead."""

    def __init__(self) -> None:
        self.dead = False
        self.closed = False
        self.commands: list[list[str]] = []

    def wait_ready(self) -> None:
        pass

    def exec(self, command, *, timeout_sec, user=None, max_output=0, what="", **_):
        self.commands.append(command)
        if command[0] == BUSYBOX:  # the harness's own bookkeeping (process baseline)
            return ExecResult(0, "", 0.0)
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_sec)
        return ExecResult(done.returncode, done.stdout + done.stderr, time.monotonic() - started)

    def close(self) -> None:
        self.closed = True


class HostRuntime:
    def __init__(self) -> None:
        self.boxes: list[HostBox] = []

    def start(self, spec) -> HostBox:
        self.boxes.append(HostBox())
        return self.boxes[-1]


def make_task(root: Path, servers: list[dict]):
    files = {
        "instruction.md": "Book a room for the team.\n",
        "environment/Dockerfile": "FROM factory/base:bookworm\n",
        "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "#!/bin/bash\ntrue\n",
    }
    write_files(root, files)
    lines = ['version = "1.0"', ""]
    for server in servers:
        lines += ["[[environment.mcp_servers]]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in server.items()]
    (root / "task.toml").write_text("\n".join(lines) + "\n")
    return load_task(root)


def tools_episode(tmp_path, servers, action_format=ActionFormat.TOOLS) -> Episode:
    task = make_task(tmp_path / "task", servers)
    config = HarnessConfig(action_format=action_format, command_timeout_sec=20)
    return Episode(HostRuntime(), task, "image", config)


def call(call_id: str, name: str, arguments) -> dict:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


@pytest.fixture
def calendar():
    with serve_domain("tool-calendar") as domain:
        yield domain


def test_an_episode_offers_bash_and_the_servers_tools(tmp_path, calendar):
    episode = tools_episode(tmp_path, [{"name": "calendar", "url": calendar.url}])
    opening = episode.start()
    assert episode.infra_error is None and "calling the tools" in opening[0]["content"]
    names = [t["function"]["name"] for t in episode.tools]
    assert names[0] == "bash" and sorted(names[1:]) == CALENDAR_TOOLS
    rooms = next(t for t in episode.tools if t["function"]["name"] == "list_rooms")
    assert rooms["function"]["parameters"]["additionalProperties"] is False
    calls = [
        call("a", "list_rooms", {}),
        call("b", "bash", {"command": "echo from-the-shell"}),
        call("c", "find_user", {}),
        call("d", "teleport", {}),
        call("e", "bash", {"command": 3}),
    ]
    observation = episode.observe("", calls)
    answers = [m for m in episode.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["a", "b", "c", "d", "e"]
    by_id = {m["tool_call_id"]: m["content"] for m in answers}
    assert json.loads(by_id["a"]) == calendar.state["rooms"] or "room" in by_id["a"]
    assert by_id["b"].strip() == "from-the-shell"
    assert by_id["c"].startswith("error:") and "missing required argument 'query'" in by_id["c"]
    assert "unknown tool 'teleport'" in by_id["d"] and "list_rooms" in by_id["d"]
    assert by_id["e"].startswith("error: bash takes one argument")
    assert "from-the-shell" in observation
    assert [e["tool"] for e in calendar.log] == ["list_rooms", "find_user"]
    assert calendar.sessions == {}  # every call's session was ended
    assert episode.turns[0].commands[:2] == ["list_rooms({})", "echo from-the-shell"]
    assert episode.observe("Done.", None) is None and episode.done


def test_a_local_model_writes_its_calls_in_text(tmp_path, calendar):
    episode = tools_episode(tmp_path, [{"name": "calendar", "url": calendar.url}])
    episode.start()
    text = (
        'I will list the rooms.\n<tool_call>\n{"name": "list_rooms", "arguments": {}}\n</tool_call>'
    )
    observation = episode.observe(text)
    assert observation and not observation.startswith("error")
    assert episode.messages[-1]["role"] == "tool" and calendar.log[-1]["tool"] == "list_rooms"
    assert "tool_calls" not in episode.messages[-2]  # the text holds the call


def test_an_unreachable_server_is_an_infrastructure_failure(tmp_path):
    dead = "http://127.0.0.1:9/mcp"  # discard port: nothing listens
    episode = tools_episode(tmp_path, [{"name": "gone", "url": dead}])
    episode.start()
    assert episode.done and "MCP server" in episode.infra_error


def test_servers_the_harness_cannot_call_are_left_out(tmp_path):
    episode = tools_episode(
        tmp_path, [{"name": "local", "transport": "stdio", "command": "server"}]
    )
    episode.start()
    assert episode.infra_error is None and [t["function"]["name"] for t in episode.tools] == [
        "bash"
    ]
    assert "stdio" in episode.toolbox.notes[0]


def test_the_fenced_format_offers_no_tools(tmp_path, calendar):
    episode = tools_episode(
        tmp_path, [{"name": "calendar", "url": calendar.url}], ActionFormat.FENCED
    )
    episode.start()
    assert episode.tools == [] and episode.toolbox is None
    assert episode.observe("```bash\necho hi\n```").strip() == "hi"


def test_clashing_names_are_prefixed_with_the_server(tmp_path, calendar):
    with serve_domain("tool-calendar", seed=4) as other:
        servers = [{"name": "one", "url": calendar.url}, {"name": "two", "url": other.url}]
        episode = tools_episode(tmp_path, servers)
        episode.start()
        names = [t["function"]["name"] for t in episode.tools]
        assert "one__list_rooms" in names and "two__list_rooms" in names
        episode.observe("", [call("x", "two__list_rooms", {})])
        assert other.log[-1]["tool"] == "list_rooms" and calendar.log == []


# --- the in-container MCP client against both protocol eras ------------------------------


class LegacyOnly(make_handler(ToolService(None, None, None))):  # type: ignore[misc]
    """A handshake-era MCP server (2025-06-18): sessions, no per-request version, paged
    tools/list. Only the real handler's ``_send`` is reused."""

    seen: list[tuple[str, str]] = []
    lock = threading.Lock()

    def do_DELETE(self):  # noqa: N802
        with self.lock:
            self.seen.append(("DELETE", self.headers.get("Mcp-Session-Id", "")))
        self._send(200)

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method = body.get("method")
        with self.lock:
            self.seen.append((method, self.headers.get("Mcp-Session-Id", "")))
        if "_meta" in (body.get("params") or {}):
            self._send(
                400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}}
            )
        elif method == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}
            self._send(
                200,
                {"jsonrpc": "2.0", "id": body["id"], "result": result},
                {"Mcp-Session-Id": "s1"},
            )
        elif "id" not in body:
            self._send(202)
        elif method == "tools/list":
            page = (body.get("params") or {}).get("cursor")
            tools = [{"name": "second" if page else "first", "inputSchema": {"type": "object"}}]
            result = {"tools": tools, **({} if page else {"nextCursor": "p2"})}
            self._send(200, {"jsonrpc": "2.0", "id": body["id"], "result": result})
        else:
            result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
            self._send(200, {"jsonrpc": "2.0", "id": body["id"], "result": result})


def test_the_client_falls_back_to_a_session_with_a_legacy_server():
    LegacyOnly.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), LegacyOnly)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        listed = mcp_call.request(url, "tools/list", {})
        assert [t["name"] for t in listed["tools"]] == ["first", "second"]
        assert mcp_call.request(url, "tools/call", {"name": "first", "arguments": {}})["content"]
    finally:
        httpd.shutdown()
    session = [
        ("initialize", ""),
        ("notifications/initialized", "s1"),
    ]
    assert LegacyOnly.seen == [
        ("tools/list", ""),  # the stateless attempt, refused without a modern error
        *session,
        ("tools/list", "s1"),
        ("tools/list", "s1"),  # the second page
        ("DELETE", "s1"),
        ("tools/call", ""),
        *session,
        ("tools/call", "s1"),
        ("DELETE", "s1"),
    ]


def test_the_client_makes_one_stateless_request_to_a_modern_server(calendar):
    result = mcp_call.request(calendar.url, "tools/call", {"name": "list_rooms", "arguments": {}})
    assert result["isError"] is False and result["resultType"] == "complete"
    assert calendar.sessions == {} and [e["tool"] for e in calendar.log] == ["list_rooms"]
    with pytest.raises(mcp_call.McpError, match="Unknown tool: nope"):
        mcp_call.request(calendar.url, "tools/call", {"name": "nope", "arguments": {}})


def test_the_client_script_runs_alone(calendar):
    source = (Path(mcp_call.__file__)).read_text()
    done = subprocess.run(
        ["python3", "-I", "-c", source, calendar.url, "tools/list", "{}", "5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(t["name"] for t in json.loads(done.stdout)["tools"]) == CALENDAR_TOOLS
    bad = subprocess.run(
        ["python3", "-I", "-c", source, "http://127.0.0.1:9/mcp", "tools/list", "{}", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and "error" in json.loads(bad.stdout)


# --- the endpoint policy -------------------------------------------------------------------


def tool_reply(*calls: dict) -> tuple[int, dict]:
    status, body = reply("")
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": list(calls),
    }
    body["choices"][0]["finish_reason"] = "tool_calls"
    return status, body


def test_the_endpoint_is_offered_the_tools_and_sees_their_results(tmp_path, calendar):
    stub = Stub()
    try:
        stub.queue = [tool_reply(call("c1", "list_rooms", {})), reply("All booked.")]
        client = LlmClient(
            LlmSettings(base_url=stub.url, model="m", max_retries=0, cache_dir=tmp_path / "cache")
        )
        policy = EndpointPolicy(client, seed=1)
        episode = tools_episode(tmp_path, [{"name": "calendar", "url": calendar.url}])
        messages = episode.start()
        text, calls = policy.reply(messages, episode.tools)
        assert text == "" and calls[0]["function"]["name"] == "list_rooms"
        episode.observe(text, calls)
        text, calls = policy.reply(episode.messages, episode.tools)
        assert text == "All booked." and calls is None
    finally:
        stub.server.shutdown()
    first, second = stub.requests
    assert first["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["tools"]][0] == "bash"
    assistant, result = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "c1" and assistant["content"] == ""
    assert result["role"] == "tool" and result["tool_call_id"] == "c1" and result["content"]
    # the tool calls are cached like text
    again = LlmClient(LlmSettings(base_url=stub.url, model="m", cache_dir=tmp_path / "cache"))
    cached = again.complete(
        first["messages"], seed=1, tools=first["tools"], temperature=0.7, max_tokens=512
    )
    assert cached.cached and cached.tool_calls[0]["function"]["name"] == "list_rooms"


# --- tools through chat templates ------------------------------------------------------------


class Tokenizer:
    """The one method the harness uses of a transformers tokenizer, on a Jinja template."""

    def __init__(self, template: str) -> None:
        self.template = jinja2.Environment().from_string(template)

    def apply_chat_template(
        self, messages, tokenize=False, add_generation_prompt=False, tools=None
    ):
        return self.template.render(
            messages=messages, tools=tools, add_generation_prompt=add_generation_prompt
        )


PLAIN = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOOL_AWARE = "{% if tools %}<tools>{{ tools | length }}</tools>\n{% endif %}" + PLAIN
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Fix it."}]
TOOLS = [{"type": "function", "function": {"name": "bash", "description": "run", "parameters": {}}}]


def test_a_template_with_tool_support_renders_the_tools_itself():
    prompt = render_prompt(Tokenizer(TOOL_AWARE), MESSAGES, TOOLS)
    assert prompt.startswith("<tools>1</tools>") and "<tool_call>" not in prompt


def test_a_template_without_tool_support_gets_them_in_the_system_message():
    prompt = render_prompt(Tokenizer(PLAIN), MESSAGES, TOOLS)
    system = prompt.split("<|im_end|>")[0]
    assert system.startswith("<|im_start|>system\nBe brief.") and '"name": "bash"' in system
    assert "<tool_call>" in system
    assert render_prompt(Tokenizer(PLAIN), MESSAGES) == Tokenizer(PLAIN).apply_chat_template(
        MESSAGES, add_generation_prompt=True
    )
    no_system = render_prompt(Tokenizer(PLAIN), MESSAGES[1:], TOOLS)
    assert no_system.startswith("<|im_start|>system\n# Tools")


# --- the trainer's rollouts with a local model -------------------------------------------


class CharTokenizer(Tokenizer):
    """Characters as token ids (0: end of turn), on the plain chatml template."""

    eos_token_id = 0

    def __init__(self) -> None:
        super().__init__(PLAIN)

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) for c in text]}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(chr(i) for i in ids if i or not skip_special_tokens)


def test_local_rollouts_render_the_tools_and_frame_results_as_tool_messages(tmp_path, calendar):
    from factory_train.generation import Sample
    from factory_train.rollout import RolloutEngine

    from factory.agent.harness import EpisodeResult

    replies = iter(['<tool_call>{"name": "list_rooms", "arguments": {}}</tool_call>', "Done."])

    def generate(prompts: list[list[int]], budgets: list[int]) -> list[Sample]:
        ids = [ord(c) for c in next(replies)] + [0]
        return [Sample(ids, [0.0] * len(ids), truncated=False) for _ in prompts]

    episode = tools_episode(tmp_path, [{"name": "calendar", "url": calendar.url}])
    episode.finish = lambda: EpisodeResult(episode.task.id, 0.0, len(episode.turns))
    engine = RolloutEngine(generate, CharTokenizer(), max_episode_tokens=100_000, concurrency=1)
    try:
        (rollout,), _stats = engine.run([episode], [0])
    finally:
        engine.close()
    text = CharTokenizer().decode(rollout.trace.ids)
    system = text.split("<|im_end|>")[0]
    assert '"name": "list_rooms"' in system and "<tool_call>" in system  # tools described
    assert "<|im_start|>tool\n" in text  # the result framed as a tool message
    assert calendar.log[-1]["tool"] == "list_rooms"
    pairs = zip(rollout.trace.ids, rollout.trace.mask, strict=True)
    policy_text = "".join(chr(i) for i, m in pairs if m)
    assert policy_text.startswith('<tool_call>{"name": "list_rooms"') and "Done." in policy_text
