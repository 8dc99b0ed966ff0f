"""The root control channel (factory.runtime.control) and its container side
(factory.runtime.control_agent), without Docker: the engine's multiplexed stream is played over
a socket pair, the tool server and the web app by local stand-ins."""

from __future__ import annotations

import os
import pwd
import random
import shutil
import socket
import sqlite3
import subprocess
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from factory.toolenv.core import Environment, load_domain
from factory.toolenv.server import DomainBackend, ToolService, UnixHttpServer, make_admin_handler

from factory.families import registry
from factory.generate.taxonomy import Difficulty
from factory.resources import toolenv_dir
from factory.runtime import control_agent
from factory.runtime.control import PYTHON, ControlChannel, ControlError, Frames, agent_command

ME = pwd.getpwuid(os.getuid()).pw_name


# --- the stream's framing --------------------------------------------------------------------


def test_frames_split_anywhere_and_kept_apart_by_stream():
    wire = Frames.encode(1, b'{"id": 1') + Frames.encode(2, b"warning\n") + Frames.encode(1, b"}\n")
    for cut in range(len(wire) + 1):
        frames = Frames()
        got = frames.feed(wire[:cut]) + frames.feed(wire[cut:])
        assert got == [(1, b'{"id": 1'), (2, b"warning\n"), (1, b"}\n")]
    assert Frames().feed(Frames.encode(1, b"")) == [(1, b"")]


# --- the container side's ops ------------------------------------------------------------------


@contextmanager
def tool_server(tmp_path: Path, state: dict):
    service = ToolService(DomainBackend(Environment(load_domain("calendar"), state)), None, None)
    sock = str(tmp_path / "admin.sock")
    admin = UnixHttpServer(sock, make_admin_handler(service))
    threading.Thread(target=admin.serve_forever, daemon=True).start()
    try:
        yield service, sock
    finally:
        admin.shutdown()
        admin.server_close()


@pytest.fixture
def calendar_state():
    return registry.get("tool-calendar").seed_state(random.Random(3), Difficulty.EASY)


def tool_controller(sock: str) -> control_agent.Controller:
    return control_agent.Controller(
        toolenv=str(toolenv_dir().parent),
        tool_socket=sock,
        webkit="/nonexistent",
        browser_reset="/nonexistent/reset.py",
    )


def test_tool_reset_goes_to_the_admin_socket(tmp_path, calendar_state):
    with tool_server(tmp_path, calendar_state) as (service, sock):
        controller = tool_controller(sock)
        assert controller.kinds() == ["tool"]
        initial = controller.handle("state")["state"]
        service.call(
            "create_event",
            {
                "title": "t",
                "attendees": [],
                "date": "2027-03-03",
                "start": "09:00",
                "end": "10:00",
            },
        )
        changed = controller.handle("state")["state"]
        assert changed != initial and changed["log"]
        assert controller.handle("reset") == {"kinds": ["tool"]}
        assert controller.handle("state")["state"] == {"state": calendar_state, "log": []}
    with pytest.raises(control_agent.ControlFailure, match="tool server reset"):
        controller.handle("reset")  # the server is gone: the reset says so


class Health(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


@contextmanager
def web_app():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def web_setup(tmp_path: Path, reset_sh: str) -> tuple[Path, Path]:
    data, kit = tmp_path / "data", tmp_path / "webkit"
    data.mkdir()
    kit.mkdir()
    db = sqlite3.connect(data / "pristine.db")
    db.execute("CREATE TABLE orders (id INTEGER)")
    db.commit()
    db.close()
    (data / "app.db").write_bytes((data / "pristine.db").read_bytes())
    (kit / "reset.sh").write_text(reset_sh)
    return data, kit


def orders(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0]


def test_web_reset_swaps_the_database_in_this_process_while_the_app_answers(tmp_path):
    marker = tmp_path / "reset.sh ran"
    data, kit = web_setup(tmp_path, f"touch '{marker}'\n")
    with sqlite3.connect(data / "app.db") as conn:
        conn.execute("INSERT INTO orders VALUES (1)")
    (data / "app.db-journal").write_text("left over")
    with web_app() as port:
        controller = control_agent.Controller(
            toolenv="/nonexistent", webkit=str(kit), browser_reset="/nonexistent/reset.py",
            web_data=str(data), web_port=port, web_owner=ME,
        )  # fmt: skip
        assert controller.kinds() == ["web"]
        assert orders(data / "app.db") == 1
        assert controller.handle("reset") == {"kinds": ["web"]}
    assert orders(data / "app.db") == 0
    assert oct((data / "app.db").stat().st_mode & 0o777) == "0o600"
    assert not (data / "app.db-journal").exists() and not (data / "app.db.new").exists()
    assert not marker.exists()  # no restart, no shell


def test_web_reset_leaves_a_silent_app_to_the_images_reset_script(tmp_path):
    marker = tmp_path / "reset.sh ran"
    data, kit = web_setup(tmp_path, f"touch '{marker}'\n")
    with web_app() as port:
        pass  # closed: nothing answers on its port now
    controller = control_agent.Controller(
        toolenv="/nonexistent", webkit=str(kit), browser_reset="/nonexistent/reset.py",
        web_data=str(data), web_port=port, web_owner=ME,
    )  # fmt: skip
    assert controller.handle("reset") == {"kinds": ["web"]}
    assert marker.exists()
    (kit / "reset.sh").write_text("echo 'the app did not come back' >&2; exit 1\n")
    with pytest.raises(control_agent.ControlFailure, match="did not come back"):
        controller.handle("reset")


BROWSER_RESET = """
import sys
calls = []
def main():
    calls.append(1)
    print("chatter on stdout")
    if len(calls) > 2:
        print("reset: the browser did not come back", file=sys.stderr)
        return 1
    return 0
"""


def test_browser_reset_runs_the_kits_reset_main_loaded_once(tmp_path):
    script = tmp_path / "reset.py"
    script.write_text(BROWSER_RESET)
    controller = control_agent.Controller(
        toolenv="/nonexistent", webkit="/nonexistent", browser_reset=str(script)
    )
    assert controller.handle("hello")["kinds"] == ["browser"]
    script.write_text("def main():\n    raise SystemExit('not the code loaded at hello')\n")
    assert controller.handle("reset") == {"kinds": ["browser"]}
    assert controller.handle("reset") == {"kinds": ["browser"]}
    with pytest.raises(control_agent.ControlFailure, match="browser did not come back"):
        controller.handle("reset")
    assert controller._browser.calls == [1, 1, 1]  # one module, three calls


def test_requests_are_answered_by_op_only(tmp_path):
    controller = control_agent.Controller(
        toolenv="/nonexistent", webkit="/nonexistent", browser_reset="/nonexistent/reset.py"
    )
    assert control_agent.answer(controller, b"not json")["ok"] is False
    assert control_agent.answer(controller, b'{"id": 3}')["ok"] is False
    unknown = control_agent.answer(controller, b'{"id": 4, "op": "exec", "argv": ["sh"]}')
    assert unknown["id"] == 4 and not unknown["ok"] and "unknown op" in unknown["error"]
    nothing = control_agent.answer(controller, b'{"id": 5, "op": "reset"}')
    assert not nothing["ok"] and "no web or tool environment" in nothing["error"]
    with pytest.raises(control_agent.ControlFailure):
        controller.handle("state")


# --- the host side over a played engine stream ----------------------------------------------


@contextmanager
def played_channel(controller: control_agent.Controller, *, noise: bool = False):
    """A ControlChannel whose other end is the container side's loop, framed as the engine
    frames an exec's output (stderr ``noise`` between replies)."""
    host, container = socket.socketpair()
    requests = container.makefile("rb")

    def write(data: bytes) -> None:
        if noise:
            container.sendall(Frames.encode(2, b"a warning\n"))
        for cut in range(0, len(data), 7):  # frames cut short, as the engine may
            container.sendall(Frames.encode(1, data[cut : cut + 7]))

    def run() -> None:
        control_agent.serve(controller, requests, write)
        container.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    channel = ControlChannel(host)
    try:
        yield channel
    finally:
        channel.close()
        thread.join(5)


def test_channel_round_trips_and_resets(tmp_path, calendar_state):
    with tool_server(tmp_path, calendar_state) as (service, sock):
        with played_channel(tool_controller(sock), noise=True) as channel:
            assert channel.request("hello", timeout_sec=5)["kinds"] == ["tool"]
            service.call("create_event", {"title": "x"})  # a refused call: on the log
            assert channel.request("state", timeout_sec=5)["state"]["log"]
            took = []
            for _ in range(20):
                started = time.perf_counter()
                reply = channel.request("reset", timeout_sec=5)
                took.append(time.perf_counter() - started)
                assert reply["ok"] and reply["kinds"] == ["tool"]
            assert channel.request("state", timeout_sec=5)["state"]["log"] == []
            assert sorted(took)[10] < 0.05  # one round trip, no process started
            with pytest.raises(ControlError, match="unknown op"):
                channel.request("teleport", timeout_sec=5)
            assert not channel.closed  # a refused request leaves the channel open
        assert channel.closed
        with pytest.raises(ControlError, match="closed"):
            channel.request("hello", timeout_sec=5)


def test_channel_closes_on_silence_and_on_a_side_that_ended():
    host, container = socket.socketpair()
    channel = ControlChannel(host)
    with pytest.raises(ControlError, match="no answer"):
        channel.request("reset", timeout_sec=0.2)
    assert channel.closed
    container.close()

    host, container = socket.socketpair()
    channel = ControlChannel(host)
    container.sendall(Frames.encode(2, b"Traceback: boom\n"))
    container.close()
    with pytest.raises(ControlError, match="Traceback: boom"):
        channel.request("reset", timeout_sec=5)
    assert channel.closed


class FakeApi:
    """The engine client's exec calls, the container side run as a local process (stdin and
    stdout piped, its stdout framed as the engine does)."""

    def __init__(self) -> None:
        self.created: list[tuple[str, list[str], dict]] = []

    def exec_create(self, container_id, command, **kwargs):
        self.created.append((container_id, command, kwargs))
        return {"Id": "exec-1"}

    def exec_start(self, exec_id, socket=False):  # noqa: A002 - the engine client's name
        import socket as sockets

        assert socket is True
        host, ours = sockets.socketpair()
        command = self.created[-1][1]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

        def pump_in() -> None:
            while data := ours.recv(4096):
                process.stdin.write(data)
                process.stdin.flush()
            process.stdin.close()

        def pump_out() -> None:
            while data := process.stdout.read1(4096):
                ours.sendall(Frames.encode(1, data))
            ours.close()

        for pump in (pump_in, pump_out):
            threading.Thread(target=pump, daemon=True).start()
        self.process = process
        return host


@pytest.mark.skipif(not shutil.which(PYTHON), reason=f"no {PYTHON}")
def test_open_starts_the_container_side_as_root_from_its_source():
    """The command the engine runs: the container side's source under -I -S (isolated: no
    environment variables, user site or current folder on its path), as root in /, stdin
    attached, no TTY; its hello answers over the framed stream."""
    api = FakeApi()
    channel = ControlChannel.open(api, "c0ffee", timeout_sec=10)
    try:
        (container, command, options) = api.created[0]
        assert container == "c0ffee"
        assert command[:4] == [PYTHON, "-I", "-S", "-c"] and len(command) == 5
        assert command == agent_command()
        assert options["user"] == "root" and options["stdin"] and not options["tty"]
        assert options["workdir"] == "/"
        assert channel.kinds == control_agent.Controller().kinds()
        if not channel.kinds:  # this host has no kit in /opt: the reset says so
            with pytest.raises(ControlError, match="no web or tool environment"):
                channel.request("reset", timeout_sec=10)
    finally:
        channel.close()
    assert api.process.wait(10) == 0  # its stdin ended: it exits


# --- the sandbox's reset: one channel per container, opened again when it broke -----------------


class PlayedEngine:
    """An engine client whose exec streams are the container side's loop in a thread (over a
    controller of the test's paths), framed as the engine frames them."""

    def __init__(self, controller: control_agent.Controller) -> None:
        self.controller = controller
        self.opened: list[socket.socket] = []
        self.running = True

    def exec_create(self, container_id, command, **kwargs):
        assert command == agent_command() and kwargs["user"] == "root"
        return {"Id": f"exec-{len(self.opened)}"}

    def exec_start(self, exec_id, socket=False):  # noqa: A002 - the engine client's name
        import socket as sockets

        host, container = sockets.socketpair()
        requests = container.makefile("rb")

        def run() -> None:
            control_agent.serve(
                self.controller, requests, lambda data: container.sendall(Frames.encode(1, data))
            )
            container.close()

        threading.Thread(target=run, daemon=True).start()
        self.opened.append(container)
        return host

    def inspect_container(self, container_id):
        return {"State": {"Running": self.running}}


class Owner:
    def __init__(self, api) -> None:
        self.api = api
        self.discarded = []

    def image_path_kind(self, image, path):
        return None

    def _discard(self, sandbox) -> None:
        self.discarded.append(sandbox)


def test_sandbox_resets_over_one_channel_and_reopens_a_broken_one(tmp_path, calendar_state):
    from factory.errors import ContainerDiedError
    from factory.runtime import ContainerSpec, Sandbox

    with tool_server(tmp_path, calendar_state) as (service, sock):
        engine = PlayedEngine(tool_controller(sock))
        box = Sandbox(Owner(engine), "c0ffee", ContainerSpec(image="task"))
        service.call("create_event", {"title": "x"})
        assert box.reset_in_place(timeout_sec=5)["kinds"] == ["tool"]
        assert box.reset_in_place(timeout_sec=5)["ok"]
        assert len(engine.opened) == 1  # one exec for both resets
        assert service.snapshot()["log"] == []
        engine.opened[0].shutdown(
            socket.SHUT_RDWR
        )  # the stream broke (its process was killed, say)
        with pytest.raises(ControlError):
            box.reset_in_place(timeout_sec=5)
        assert box.reset_in_place(timeout_sec=5)["ok"]  # a new channel
        assert len(engine.opened) == 2
        engine.running = False
        engine.opened[1].shutdown(socket.SHUT_RDWR)
        with pytest.raises(ContainerDiedError, match="gone"):
            box.reset_in_place(timeout_sec=5)
        box.close()
        with pytest.raises(ContainerDiedError):
            box.control()
