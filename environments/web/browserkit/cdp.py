"""A Chrome DevTools Protocol connection over Chromium's debugging pipe (stdlib only).

Chromium started with ``--remote-debugging-pipe`` reads commands on its fd 3 and writes
replies and events on its fd 4, each message one JSON object ended by a NUL byte. No port is
opened, so no other user of the machine can drive the browser: only the process that started
it holds the pipe.
"""

from __future__ import annotations

import collections
import fcntl
import json
import os
import select
import subprocess
import time
from collections.abc import Callable
from typing import Any


class CdpError(RuntimeError):
    """A command the browser answered with an error, or a browser that stopped answering."""


def _high(fd: int) -> int:
    """``fd`` moved to a number >= 10 (close-on-exec), so that 3 and 4 are free in the child."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Browser:
    """A Chromium process and its pipe: :meth:`call` sends a command (to the browser, or to a
    page's session) and returns its result; events that arrive meanwhile are queued."""

    def __init__(self, argv: list[str], *, stderr: Any = subprocess.DEVNULL) -> None:
        to_browser_r, to_browser_w = (_high(fd) for fd in os.pipe())
        from_browser_r, from_browser_w = (_high(fd) for fd in os.pipe())

        def plumb() -> None:  # in the child, before exec: the pipe ends become fds 3 and 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            pass_fds=(3, 4),
            preexec_fn=plumb,  # noqa: PLW1509 - called before any thread is started
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._out = to_browser_w
        self._in = from_browser_r
        self._buffer = b""
        self._next_id = 0
        self.events: collections.deque[dict[str, Any]] = collections.deque()
        self.handlers: dict[str, Callable[[dict[str, Any]], None]] = {}
        """Events answered as soon as they arrive, even while a command waits for its reply
        (a paused request must be let go before the navigation that made it can finish);
        a handler may :meth:`send`, never :meth:`call`."""

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data) :]
        return self._next_id

    def call(
        self, method: str, params: dict | None = None, session: str | None = None, timeout=30.0
    ) -> dict[str, Any]:
        """Send a command and wait for its reply; raise :class:`CdpError` on an error reply."""
        wanted = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline - time.monotonic())
            if message is None:
                raise CdpError(f"{method}: no reply within {timeout:g} s")
            if message.get("id") == wanted:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error'].get('message', message['error'])}")
                return message.get("result", {})
            if "method" in message and not self._handled(message):
                self.events.append(message)

    def poll(self, timeout: float) -> dict[str, Any] | None:
        """The next event (queued, or read within ``timeout`` seconds), or None."""
        if self.events:
            return self.events.popleft()
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline - time.monotonic())
            if message is None:
                return None
            # skip late replies to commands nobody waits for, and handled events
            if "method" in message and not self._handled(message):
                return message

    def _handled(self, event: dict[str, Any]) -> bool:
        handler = self.handlers.get(event["method"])
        if handler is None:
            return False
        handler(event)
        return True

    def _read(self, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + max(0.0, timeout)
        while b"\0" not in self._buffer:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._in], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                raise CdpError("the browser closed its pipe (it exited)")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)
