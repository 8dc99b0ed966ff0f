"""``browse``: the agent's web browser, a headless Chromium shown as its accessibility tree.

The browser runs as its own user (``browser``) in the browser service (``browsed.py``); this
command only hands it one action and prints what it answers: the page after the action, as an
accessibility tree whose elements carry ids (``[33] button "Add to cart"``)::

    browse goto URL            open a URL (a path such as /login is taken on the app's origin)
    browse snapshot            show the current page again
    browse click ID            click element ID (links, buttons, check boxes, ...)
    browse type ID TEXT        replace the text of field ID with TEXT
    browse select ID OPTION    choose OPTION (its text or value) in the drop-down ID
    browse press KEY           press a key in the focused element (Enter, Tab, Escape, ...)
    browse scroll [down|up]    scroll the page
    browse back                go back one page

Cookies, history and the page itself persist between commands: it is one browser (``browse
reset`` starts it afresh, as the task's reset does: a blank page in a new browser context, no
cookies, storage, cache or history). Stdlib only.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from dataclasses import dataclass

SOCKET = os.environ.get("BROWSE_SOCKET", "/run/browser/browse.sock")
KEYS = ("Enter", "Tab", "Escape", "Backspace", "ArrowDown", "ArrowUp", "Space")
USAGE = (__doc__ or "").split("::", 1)[1].split("Cookies,", 1)[0].strip("\n")


class UsageError(ValueError):
    """A command line ``browse`` cannot run; the message says why."""


@dataclass(frozen=True)
class Command:
    action: str
    target: int | None = None
    text: str = ""


def element_id(word: str) -> int:
    """An element id as the agent may write it: ``33`` or ``[33]``."""
    bare = word.strip().removeprefix("[").removesuffix("]")
    if not bare.isdigit():
        raise UsageError(f"{word!r} is not an element id (the number in brackets, e.g. 33)")
    return int(bare)


def parse(argv: list[str]) -> Command:
    """The command a ``browse`` command line asks for (``argv`` without the program name)."""
    if not argv:
        raise UsageError("no action given")
    action, args = argv[0], argv[1:]
    action = {"open": "goto", "view": "snapshot", "fill": "type"}.get(action, action)

    def arity(low: int, high: int) -> None:
        if not low <= len(args) <= high:
            want = str(low) if low == high else f"{low} to {high}"
            raise UsageError(f"{action} takes {want} argument(s), got {len(args)}")

    if action in ("snapshot", "back", "ping", "reset"):
        arity(0, 0)
        return Command(action)
    if action == "goto":
        arity(1, 1)
        if not args[0].strip():
            raise UsageError("goto needs a URL or a path")
        return Command(action, text=args[0].strip())
    if action == "click":
        arity(1, 1)
        return Command(action, element_id(args[0]))
    if action in ("type", "select"):
        if len(args) < 2:
            raise UsageError(f"{action} takes an element id and a text")
        return Command(action, element_id(args[0]), " ".join(args[1:]))
    if action == "press":
        arity(1, 1)
        key = next((k for k in KEYS if k.lower() == args[0].lower()), None)
        if key is None:
            raise UsageError(f"press knows the keys {', '.join(KEYS)}")
        return Command(action, text=key)
    if action == "scroll":
        arity(0, 1)
        direction = args[0].lower() if args else "down"
        if direction not in ("down", "up"):
            raise UsageError("scroll goes down or up")
        return Command(action, text=direction)
    raise UsageError(f"unknown action {action!r}")


def request(command: Command, path: str = SOCKET, timeout: float = 120.0) -> dict:
    """Send ``command`` to the browser service and return its answer (``ok``, ``text``)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(path)
        payload = {"action": command.action, "target": command.target, "text": command.text}
        conn.sendall(json.dumps(payload).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(1 << 16):
            data += chunk
    return json.loads(data)


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    try:
        command = parse(argv)
    except UsageError as exc:
        print(f"browse: {exc}\n\n{USAGE}", file=sys.stderr)
        return 2
    try:
        answer = request(command)
    except OSError as exc:
        print(f"browse: the browser is not running ({exc})", file=sys.stderr)
        return 1
    print(answer.get("text", ""), end="")
    if not answer.get("ok"):
        print(f"browse: {answer.get('error', 'failed')}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
