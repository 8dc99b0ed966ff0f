"""A root control channel into a running web or tool container, opened once by the runtime.

An in-place reset used to be a ``docker exec`` of ``/opt/webkit/reset.sh`` or ``python3 -m
toolenv.admin reset``: the exec alone costs ~0.06 s and the interpreter start ~0.02 s more,
every time. A :class:`ControlChannel` pays them once per container: one exec as root runs
:mod:`factory.runtime.control_agent` (its source passed on the command line; nothing is added to
the image) with its stdin attached, and every later request is one JSON line there and one
JSON line back over the already open stream.

Isolation is the exec's: the stream runs between the engine and a root process, so the agent's
user can neither write requests into it (no socket listens, ``/proc/PID/fd`` of a root process
is closed to it) nor signal or trace that process; the tool server's admin socket stays where
only root reaches it. Nothing flows from the container to the host but reply lines, which the
host parses as JSON and only reads ``ok``, ``error`` and reported fields from.

The stream is the engine's multiplexed one (no TTY): 8-byte frame headers (stream 1 stdout,
2 stderr, then a big-endian length), decoded by :class:`Frames`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

from factory.errors import FactoryError

AGENT_SOURCE_PATH = Path(__file__).with_name("control_agent.py")
PYTHON = "python3"
"""Found on the container's ``PATH`` (root's exec): ``python:*`` images have it in
``/usr/local/bin`` only, Debian's in ``/usr/bin``."""
OPEN_TIMEOUT_SEC = 30.0
STDERR_KEEP = 4096
MAX_REPLY = 1 << 24


class ControlError(FactoryError):
    """The control channel failed, or the container could not do what was asked."""


def agent_command(*args: str) -> list[str]:
    """The command that runs the container side (``args``: one op, done once)."""
    return [PYTHON, "-I", "-S", "-c", AGENT_SOURCE_PATH.read_text(encoding="utf-8"), *args]


class Frames:
    """Decodes the engine's multiplexed exec stream into (stream, payload) frames."""

    HEADER = struct.Struct(">BxxxL")

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self._pending += data
        frames = []
        while len(self._pending) >= self.HEADER.size:
            stream, size = self.HEADER.unpack_from(self._pending)
            end = self.HEADER.size + size
            if len(self._pending) < end:
                break
            frames.append((stream, bytes(self._pending[self.HEADER.size : end])))
            del self._pending[:end]
        return frames

    @classmethod
    def encode(cls, stream: int, payload: bytes) -> bytes:
        """One frame as the engine writes it (for tests and fakes)."""
        return cls.HEADER.pack(stream, len(payload)) + payload


class ControlChannel:
    """Requests to the container side over one open, multiplexed exec stream (thread-safe:
    one request at a time). Any failure of the stream closes the channel; a closed channel
    refuses requests (the owner opens a new one)."""

    def __init__(self, conn: Any, *, keep: Any = None) -> None:
        """``conn``: a socket-like object (``sendall``, ``recv``, ``settimeout``, ``close``)
        carrying the multiplexed stream; ``keep``: what must stay referenced while it is used
        (the HTTP response the engine's client hijacked it from)."""
        self._conn = conn
        self._keep = keep
        self._frames = Frames()
        self._lines = bytearray()
        self._stderr = bytearray()
        self._lock = threading.Lock()
        self._next_id = 1
        self.closed = False
        self.kinds: list[str] = []
        """The environments the container side found (``tool``, ``web``, ``browser``)."""
        self.pid: int | None = None
        """The container side's process id (in the container's PID namespace)."""

    @classmethod
    def open(cls, api: Any, container_id: str, *, timeout_sec: float = OPEN_TIMEOUT_SEC):
        """Start the container side as root in ``container_id`` through the engine's API (a
        ``docker.APIClient``) and greet it; ControlError when that fails."""
        try:
            exec_id = api.exec_create(
                container_id,
                agent_command(),
                stdin=True,
                stdout=True,
                stderr=True,
                tty=False,
                user="root",
                workdir="/",
            )["Id"]
            raw = api.exec_start(exec_id, socket=True)
        except Exception as exc:  # noqa: BLE001 - the engine's errors vary by transport
            raise ControlError(f"cannot open the control channel: {exc}") from None
        channel = cls(getattr(raw, "_sock", raw), keep=raw)
        hello = channel.request("hello", timeout_sec=timeout_sec)
        channel.kinds = [str(kind) for kind in hello.get("kinds") or []]
        channel.pid = int(hello.get("pid") or 0) or None
        return channel

    def request(self, op: str, *, timeout_sec: float) -> dict:
        """Send one op; its reply (ControlError when the container side says it failed, or the
        stream broke or stayed silent past ``timeout_sec``: the channel is then closed)."""
        with self._lock:
            if self.closed:
                raise ControlError("the control channel is closed")
            rid, self._next_id = self._next_id, self._next_id + 1
            deadline = time.monotonic() + timeout_sec
            line = json.dumps({"id": rid, "op": op}).encode() + b"\n"
            try:
                self._conn.settimeout(max(0.001, timeout_sec))
                self._conn.sendall(line)
            except OSError as exc:
                self._drain()
                self._break(f"cannot send {op!r}: {exc}{self._said()}")
            while True:
                reply = self._read_reply(deadline, op)
                if reply.get("id") == rid:
                    break
        if not reply.get("ok"):
            raise ControlError(f"{op}: {reply.get('error') or 'failed'}")
        return reply

    def _read_reply(self, deadline: float, op: str) -> dict:
        while b"\n" not in self._lines:
            left = deadline - time.monotonic()
            if left <= 0:
                self._break(f"no answer to {op!r} in time")
            try:
                self._conn.settimeout(left)
                chunk = self._conn.recv(1 << 16)
            except TimeoutError:
                self._break(f"no answer to {op!r} in time")
            except OSError as exc:
                self._break(f"lost the stream waiting for {op!r}: {exc}")
            if not chunk:
                self._break(f"the container side ended{self._said()}")
            self._take(chunk)
            if len(self._lines) > MAX_REPLY and b"\n" not in self._lines:
                self._break(f"a reply longer than {MAX_REPLY} bytes")
        line, _, rest = bytes(self._lines).partition(b"\n")
        self._lines = bytearray(rest)
        try:
            reply = json.loads(line)
        except ValueError:
            self._break(f"not a reply: {line[:80]!r}")
        if not isinstance(reply, dict):
            self._break(f"not a reply: {line[:80]!r}")
        return reply

    def _take(self, chunk: bytes) -> None:
        for stream, payload in self._frames.feed(chunk):
            if stream == 2:
                self._stderr = (self._stderr + payload)[-STDERR_KEEP:]
            else:
                self._lines += payload

    def _drain(self, wait_sec: float = 0.5) -> None:
        """Read what the container side wrote before it ended (its last words on stderr)."""
        deadline = time.monotonic() + wait_sec
        try:
            while (left := deadline - time.monotonic()) > 0:
                self._conn.settimeout(left)
                chunk = self._conn.recv(1 << 16)
                if not chunk:
                    return
                self._take(chunk)
        except OSError:
            return

    def _said(self) -> str:
        said = self._stderr.decode("utf-8", "replace").strip()[-300:]
        return f": {said}" if said else ""

    def _break(self, why: str):
        self._close_stream()
        raise ControlError(f"control channel: {why}")

    def _close_stream(self) -> None:
        self.closed = True
        for closing in (self._conn, self._keep):
            close = getattr(closing, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):  # what may be gone already
                    close()

    def close(self) -> None:
        """End the container side (its stdin ends) and the stream."""
        if self.closed:
            return
        with contextlib.suppress(OSError, AttributeError):
            self._conn.shutdown(socket.SHUT_WR)
        self._close_stream()
