"""The container side of a control channel (:mod:`factory.runtime.control`).

This file never ships in a task: the runtime passes its source to ``/usr/bin/python3 -I -S -c``
in one ``docker exec`` as root, whose stdin and stdout stay attached to the engine's stream for
as long as the container lives. Each request is one JSON line on stdin, each reply one JSON
line on stdout (``{"id": N, "op": "reset"}`` -> ``{"id": N, "ok": true, ...}``), so a reset
costs one round trip over an open stream instead of an exec and an interpreter start.

Only the runtime can send requests: the exec's stdin is a stream between the engine and this
process (root), which no user in the container can open (``/proc/PID/fd`` of a root process is
closed to others) and nothing in the container can connect to; no socket is listened on and no
file is read for requests. Nothing of a request but its op name and id is used.

Ops (standard library only, nothing imported that a reset does not need):

* ``hello``: the environments found (``tool``: the tool server's kit; ``web``: the webkit;
  ``browser``: the browser kit, which resets the web app too), and the image's code that their
  resets run loaded now (the runtime greets before the agent's first command).
* ``reset``: each one back to its initial state - the tool server over its admin socket
  (``POST /reset``, :mod:`toolenv.admin` from the image); the browser-mode kit's ``reset.py``
  loaded once and its ``main()`` called in this interpreter; the text webkit's database swap
  done here (what its ``reset.sh`` does) and the app's health checked, the image's own
  ``reset.sh`` run when it does not answer (it restarts the app).
* ``state``: the tool server's state (``GET /state`` on its admin socket).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import pwd
import shutil
import socket
import sys
import time

TOOLENV = "/opt/toolenv"
TOOL_SOCKET = "/run/toolenv/admin.sock"
WEBKIT = "/opt/webkit"
BROWSER_RESET = "/opt/browserkit/reset.py"
WEB_DATA = "/srv/app/data"
WEB_PORT = 8000
WEB_OWNER = "webapp"
MAX_REQUEST = 1 << 16


class ControlFailure(Exception):
    """A request that could not be done (its reply says why)."""


class Controller:
    """The ops, over the environment's paths (the container's own by default)."""

    def __init__(
        self,
        *,
        toolenv: str = TOOLENV,
        tool_socket: str = TOOL_SOCKET,
        webkit: str = WEBKIT,
        browser_reset: str = BROWSER_RESET,
        web_data: str = WEB_DATA,
        web_port: int = WEB_PORT,
        web_owner: str = WEB_OWNER,
    ) -> None:
        self.toolenv = toolenv
        self.tool_socket = tool_socket
        self.webkit = webkit
        self.browser_reset = browser_reset
        self.web_data = web_data
        self.web_port = web_port
        self.web_owner = web_owner
        self._admin = None
        self._browser = None

    def kinds(self) -> list[str]:
        found = []
        if os.path.isfile(os.path.join(self.toolenv, "toolenv", "admin.py")):
            found.append("tool")
        if os.path.isfile(self.browser_reset):
            found.append("browser")
        elif os.path.isfile(os.path.join(self.webkit, "reset.sh")):
            found.append("web")
        return found

    def handle(self, op: str) -> dict:
        if op == "hello":
            kinds = self.kinds()
            self.preload(kinds)
            return {"kinds": kinds, "pid": os.getpid()}
        if op == "reset":
            kinds = self.kinds()
            if not kinds:
                raise ControlFailure("no web or tool environment to reset in this container")
            for kind in kinds:
                getattr(self, f"reset_{kind}")()
            return {"kinds": kinds}
        if op == "state":
            if "tool" not in self.kinds():
                raise ControlFailure("no tool server in this container")
            return {"state": self.admin().admin_request("GET", "/state", self.tool_socket)}
        raise ControlFailure(f"unknown op {op[:40]!r}")

    def preload(self, kinds: list[str]) -> None:
        """Load the image's code that resets use now, when the channel opens (before the agent
        acts, where the harness opens it first): later resets run what was loaded then. One
        that cannot be loaded is tried again by the reset that needs it (and fails there)."""
        with contextlib.suppress(Exception):
            if "tool" in kinds:
                self.admin()
            if "browser" in kinds:
                self.browser()

    # --- tool server ----------------------------------------------------------------------
    def admin(self):
        """The image's own ``toolenv.admin`` (its HTTP client for the admin socket)."""
        if self._admin is None:
            self._admin = _load("toolenv_admin", os.path.join(self.toolenv, "toolenv", "admin.py"))
        return self._admin

    def reset_tool(self) -> None:
        try:
            self.admin().admin_request("POST", "/reset", self.tool_socket)
        except OSError as exc:
            raise ControlFailure(f"tool server reset: {exc}") from None

    # --- browser mode -----------------------------------------------------------------------
    def browser(self):
        """The browser kit's ``reset`` module, loaded once."""
        if self._browser is None:
            self._browser = _load("browserkit_reset", self.browser_reset)
        return self._browser

    def reset_browser(self) -> None:
        """The browser kit's ``reset.py`` (browser context, database, gate), in this process."""
        module = self.browser()
        said = io.StringIO()
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            code = module.main()
        if code:
            raise ControlFailure(f"browser-mode reset failed: {said.getvalue().strip()[-300:]}")

    # --- text web app -----------------------------------------------------------------------
    def reset_web(self) -> None:
        """What ``reset.sh`` does while the app answers: the pristine database copied and
        renamed over ``app.db`` (owned by the app's user alone), then ``/health``; an app that
        does not answer is left to ``reset.sh``, which swaps again and restarts it."""
        try:
            self.swap_database()
            if self.web_healthy():
                return
        except OSError:
            pass
        import subprocess  # only when the app must be restarted

        try:
            done = subprocess.run(
                ["sh", os.path.join(self.webkit, "reset.sh")],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise ControlFailure(f"web reset: {exc}") from None
        if done.returncode != 0:
            said = (done.stdout + done.stderr).decode("utf-8", "replace").strip()[-300:]
            raise ControlFailure(f"web reset failed ({done.returncode}): {said}")

    def swap_database(self) -> None:
        data = self.web_data
        for leftover in ("app.db.new", "app.db-journal", "app.db-wal", "app.db-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(data, leftover))
        new = os.path.join(data, "app.db.new")
        shutil.copyfile(os.path.join(data, "pristine.db"), new)
        if self.web_owner:
            entry = pwd.getpwnam(self.web_owner)
            os.chown(new, entry.pw_uid, entry.pw_gid)
        os.chmod(new, 0o600)
        os.replace(new, os.path.join(data, "app.db"))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(data, "app.db-journal"))

    def web_healthy(self) -> bool:
        """``/health`` answers 200 (``health.py``'s check, without its interpreter)."""
        request = f"GET /health HTTP/1.0\r\nHost: 127.0.0.1:{self.web_port}\r\n\r\n".encode()
        try:
            with socket.create_connection(("127.0.0.1", self.web_port), timeout=2) as conn:
                conn.sendall(request)
                got = b""
                while len(got) < MAX_REQUEST and (chunk := conn.recv(4096)):
                    got += chunk
        except OSError:
            return False
        parts = got.split(b"\r\n", 1)[0].split()
        return len(parts) > 1 and parts[1] == b"200"


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ControlFailure(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and the like look their module up
    spec.loader.exec_module(module)
    return module


def answer(controller: Controller, line: bytes) -> dict:
    """The reply to one request line."""
    started = time.monotonic()
    try:
        request = json.loads(line)
        rid, op = request.get("id"), request["op"]
        if not isinstance(op, str):
            raise ValueError("op is not a string")
    except (ValueError, KeyError, AttributeError) as exc:
        return {"id": None, "ok": False, "error": f"bad request: {exc}"}
    try:
        reply = {"id": rid, "ok": True, **controller.handle(op)}
    except ControlFailure as exc:
        reply = {"id": rid, "ok": False, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the channel outlives one failed request
        reply = {"id": rid, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    reply["seconds"] = round(time.monotonic() - started, 6)
    return reply


def reap() -> None:
    """Collect services this process restarted that have since exited (no zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(controller: Controller, requests, write) -> None:
    """Answer request lines from ``requests`` (a binary stream) until it ends."""
    while True:
        line = requests.readline(MAX_REQUEST)
        if not line:
            return
        if not line.strip():
            continue
        reap()
        write(json.dumps(answer(controller, line), sort_keys=True).encode() + b"\n")


def main() -> int:
    # Replies go to a private copy of stdout; fd 1 itself points at /dev/null, so nothing that
    # prints (a module's warning, a child process) can write into the stream.
    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    sys.stdout = sys.stderr

    def write(data: bytes) -> None:
        while data:
            data = data[os.write(out, data) :]

    serve(Controller(), sys.stdin.buffer, write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
