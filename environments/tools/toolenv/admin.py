"""``python3 -m toolenv.admin state|reset``: the tool server's control endpoints, for root.

The server answers them only on its admin socket (``--admin-socket``), a unix socket inside a
folder that only the server's user and root can enter; the agent's user cannot reach it. The
verifier reads the state files instead (see the server's docstring); this is for resets between
rollouts that share a container, and for people debugging a task. Standard library only, and
nothing else of the package is imported, so a reset costs one interpreter start.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

SOCKET = "/run/toolenv/admin.sock"


def admin_request(method: str, path: str, socket_path: str = SOCKET, timeout: float = 10.0) -> Any:
    """One HTTP request over the admin socket; the JSON reply (OSError unless HTTP 200)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(socket_path)
        body = b"{}" if method == "POST" else b""
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    status_line, _, rest = b"".join(chunks).partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError):
        raise OSError(f"admin {method} {path}: no HTTP reply") from None
    result = json.loads(payload) if payload.strip() else None
    if status != 200:
        raise OSError(f"admin {method} {path}: HTTP {status} {result}")
    return result


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    commands = {
        "state": ("GET", "/state"),
        "reset": ("POST", "/reset"),
        "health": ("GET", "/health"),
    }
    if not args or args[0] not in commands:
        print("usage: python3 -m toolenv.admin state|reset|health [SOCKET]", file=sys.stderr)
        return 2
    method, path = commands[args[0]]
    try:
        result = admin_request(method, path, args[1] if len(args) > 1 else SOCKET)
    except OSError as exc:
        print(f"toolenv.admin: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
