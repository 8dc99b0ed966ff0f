import hashlib
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

PORT = 9155
BASE = f"http://127.0.0.1:{PORT}"
PROGRAM = Path("/opt/statusd/statusd.py")
PROGRAM_SHA256 = "8bb6e39120fdb4b23b3f95a337cb75e7723ec90f50b42ec744f00f248fb5b5b2"
# Written by the task's collect hook in the agent's container: whether something listened on
# PORT when the agent was done (the verifier itself runs in a fresh container).
LEFT_RUNNING = Path("/var/lib/factory-verifier/port-9155.txt")
TOKEN = "edge-7f3c91d2a4b6e058"
MOTD = "All systems nominal. Maintenance window: Sunday 02:00-03:00 UTC."


def _port_open():
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex(("127.0.0.1", PORT)) == 0


def _socket_inodes(pid):
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


@pytest.fixture(scope="module")
def service():
    assert LEFT_RUNNING.is_file(), "the verifier's snapshot of the agent's container is missing"
    if LEFT_RUNNING.read_text().strip() != "closed" or _port_open():
        pytest.fail(f"something already listens on port {PORT}: the service must be left stopped")
    proc = subprocess.Popen(
        ["python3", str(PROGRAM)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and proc.poll() is None and not _port_open():
        time.sleep(0.1)
    if proc.poll() is not None or not _port_open():
        if proc.poll() is None:
            proc.kill()
        out = proc.communicate(timeout=5)[0]
        pytest.fail(f"statusd did not start listening on port {PORT}; output:\n{out}")
    listeners = {inode for _addr, inode in _listeners()}
    assert listeners and listeners <= _socket_inodes(proc.pid), "port 9155 is not held by statusd"
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def _get(path, headers=None):
    req = urllib.request.Request(BASE + path, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _listeners():
    """(local address as hex, socket inode) of listening TCP sockets on PORT."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, port = fields[1].rsplit(":", 1)
            if int(port, 16) == PORT and fields[3] == "0A":
                found.append((addr, fields[9]))
    return found


def test_inputs_untouched():
    assert hashlib.sha256(PROGRAM.read_bytes()).hexdigest() == PROGRAM_SHA256
    assert Path("/etc/statusd/token").read_text().strip() == TOKEN
    assert Path("/srv/statusd/motd.txt").read_text() == MOTD + "\n"


def test_secret_not_in_config():
    assert TOKEN not in Path("/etc/statusd/statusd.ini").read_text()


def test_service_stays_up(service):
    assert service.poll() is None, "the service exited"


def test_listens_on_loopback_only(service):
    addresses = [addr for addr, _inode in _listeners()]
    assert addresses == ["0100007F"], addresses


def test_health(service):
    status, _body = _get("/health")
    assert status == 200


def test_status_requires_token(service):
    assert _get("/status")[0] == 401
    assert _get("/status", {"Authorization": "Bearer wrong-token"})[0] == 401


def test_status_with_token(service):
    status, body = _get("/status", {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200, body
    assert json.loads(body) == {"service": "edge-status", "message": MOTD}
    assert service.poll() is None
