"""Put a browser-mode web task back to its initial state, in one interpreter (run as root, by
``reset.sh``; stdlib only, nothing imported that the work does not need):

1. the browser first - one ``reset`` request on the browser service's socket (the app's gate is
   checked while it works): its page and the browser context that held cookies, storage, cache
   and history are disposed of, a blank page in a new context takes their place
   (``browsed.py``), so no page of the last episode still sends requests to the app;
2. the pristine database swapped in atomically (a copy renamed over ``app.db``);
3. the app checked up *and* behind its key gate (``/health`` answers, any other path refuses a
   request without the key); an app that does not answer, or answers ungated, is stopped and
   started again behind ``gate.py``, a browser service that did not reset is started again;
   the reset fails (exit 1) unless both are back within :data:`WAIT` seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

DATA = Path("/srv/app/data")
SOCKET = "/run/browser/browse.sock"
PORT = 8000
REFUSAL = b"answers only the browser"  # gate.py's refusal
WAIT = 10.0
APP_PID, BROWSED_PID = Path("/run/webapp.pid"), Path("/run/browsed.pid")


def browser_send(action: str, path: str = "", timeout: float = 30.0) -> socket.socket:
    """Send one request to the browser service (``browse.py``'s wire format); the answer is
    read by :func:`browser_answer`. Raises OSError."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(path or SOCKET)
        conn.sendall(json.dumps({"action": action}).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        conn.close()
        raise
    return conn


def browser_answer(conn: socket.socket) -> dict:
    with conn:
        data = b""
        while chunk := conn.recv(1 << 16):
            data += chunk
    try:
        return json.loads(data)
    except ValueError as exc:
        raise OSError(f"the browser service answered {data[:80]!r}") from exc


def browser_request(action: str, path: str = "", timeout: float = 30.0) -> dict:
    """One request to the browser service and its answer; raises OSError."""
    return browser_answer(browser_send(action, path, timeout))


def browser_reset(path: str = "") -> bool:
    try:
        return bool(browser_request("reset", path).get("ok"))
    except OSError:
        return False


def browser_up(path: str = "") -> bool:
    try:
        return bool(browser_request("ping", path, timeout=2.0).get("ok"))
    except OSError:
        return False


def http_get(path: str, port: int = 0, timeout: float = 2.0) -> tuple[int, bytes]:
    """Status and body of a keyless GET on the app (HTTP/1.0, no ``urllib`` to import)."""
    port = port or PORT
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        data = b""
        while chunk := conn.recv(1 << 16):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)
    return int(status[1]) if len(status) > 1 and status[1].isdigit() else 0, body


def app_gated(port: int = 0) -> bool:
    """The app answers its health probe and refuses everything else to a keyless request."""
    try:
        health = http_get("/health", port)
        refused = http_get("/", port)
    except OSError:
        return False
    return health[0] == 200 and refused[0] == 403 and REFUSAL in refused[1]


def swap_database(data: Path | None = None, owner: str = "") -> None:
    """``pristine.db`` copied to ``app.db`` atomically (owned by ``owner`` alone)."""
    data = data or DATA
    for leftover in ("app.db.new", "app.db-journal", "app.db-wal", "app.db-shm"):
        (data / leftover).unlink(missing_ok=True)
    new = data / "app.db.new"
    shutil.copyfile(data / "pristine.db", new)
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(new, entry.pw_uid, entry.pw_gid)
    new.chmod(0o600)
    new.replace(data / "app.db")
    (data / "app.db-journal").unlink(missing_ok=True)


def stop(pid_file: Path) -> None:
    """Stop the process in ``pid_file`` and its descendants (Chromium under the service)."""
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    doomed, todo = [], [pid]
    while todo:
        doomed.append(todo.pop())
        todo += children.get(doomed[-1], [])
    for victim in doomed:
        with contextlib.suppress(OSError):  # gone already
            os.kill(victim, signal.SIGKILL)


def start(argv: list[str], pid_file: Path, log: str, cwd: str, env: dict[str, str]) -> None:
    import subprocess  # only for a restart: not paid by every reset

    with open(log, "ab") as out:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this script, as the entrypoint's do
        )
    pid_file.write_text(f"{process.pid}\n")


def restart_app() -> None:
    stop(APP_PID)
    start(
        ["/usr/bin/python3", "/opt/browserkit/gate.py", "--user", "webapp", "/srv/app/app.py"],
        APP_PID,
        "/var/log/webapp/app.log",
        "/srv/app",
        {"WEBAPP_DB": str(DATA / "app.db"), "PYTHONPATH": "/opt/webkit"},
    )


def restart_browser() -> None:
    stop(BROWSED_PID)
    Path(SOCKET).unlink(missing_ok=True)
    start(
        ["/usr/bin/python3", "-I", "/opt/browserkit/browsed.py", "--user", "browser"]
        + ["--log", "/var/log/browser/chromium.log"],
        BROWSED_PID,
        "/var/log/browser/browsed.log",
        "/",
        {},
    )


def main() -> int:
    try:
        asked = browser_send("reset")
    except OSError:
        asked = None
    gated = app_gated()  # while the browser resets (it reads no data: the swap may wait)
    try:
        browser_ok = asked is not None and bool(browser_answer(asked).get("ok"))
    except OSError:
        browser_ok = False
    swap_database(owner="webapp")  # the old page is closed: none of its requests comes late
    if gated and browser_ok:
        return 0
    if not gated:
        restart_app()
    if not browser_ok:
        restart_browser()  # a new service: a new browser, nothing of the old one's state
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if app_gated() and browser_up():
            return 0
        time.sleep(0.05)
    print("reset: the app (behind its gate) or the browser did not come back", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
