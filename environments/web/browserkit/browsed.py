"""The browser service of a browser-mode web task: one headless Chromium, driven over the
DevTools pipe (:mod:`cdp`), serving ``browse`` commands on a unix socket (stdlib only).

Started as root by the entrypoint, it reads the app's browser key (a file only root can
read), becomes the ``browser`` user and starts Chromium. Every request the page makes is
paused (``Fetch``): the app's own go on with the key added in a header, the rest fail. The
app answers nothing without the key
(``gate.py``), so the app is reachable through this browser only. The key never reaches the
page: scripts cannot read the headers the browser adds, Chromium opens no debugging port (the
pipe is this process's alone), ``goto`` opens only the app's own origin, and every request
to another origin (a link, an image, a script's fetch) is stopped before it leaves.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import socket
import sys
import time
import traceback
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from axtree import render  # noqa: E402
from browse import Command  # noqa: E402
from cdp import Browser, CdpError  # noqa: E402

KEY_HEADER = "X-Browser-Key"
CHROMIUM = os.environ.get("BROWSE_CHROMIUM", "/usr/bin/chromium")
SETTLE_QUIET = 0.2
"""Seconds without a page load or a network request in flight after which a page is settled."""
SETTLE_MAX = 10.0
RESET_TEXT = "reset: a new blank page; no cookies, storage, cache or history\n"
KEY_CODES = {
    "Enter": ("Enter", 13, "\r"),
    "Tab": ("Tab", 9, ""),
    "Escape": ("Escape", 27, ""),
    "Backspace": ("Backspace", 8, ""),
    "ArrowDown": ("ArrowDown", 40, ""),
    "ArrowUp": ("ArrowUp", 38, ""),
    "Space": ("Space", 32, " "),
}
_CLEAR = """function () {
  if (!('value' in this)) return 'element is not a text field';
  this.focus(); this.value = '';
  this.dispatchEvent(new Event('input', {bubbles: true}));
  return '';
}"""
_SELECT = """function (wanted) {
  if (this.tagName !== 'SELECT') return 'element is not a drop-down (select)';
  const options = Array.from(this.options);
  const norm = (s) => s.replace(/\\s+/g, ' ').trim();
  const hit = options.find((o) => o.value === wanted) || options.find((o) => norm(o.text) === norm(wanted));
  if (!hit) return 'no option ' + JSON.stringify(wanted) + '; the options are: ' + options.map((o) => JSON.stringify(norm(o.text))).join(', ');
  this.value = hit.value;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return '';
}"""


class ActionError(Exception):
    """An action the page cannot do (no such element, not a field, ...): told to the agent."""


@dataclass(frozen=True)
class Page:
    """A page (target) in a browser context of its own, attached as ``session``."""

    context: str
    target: str
    session: str
    frame: str


class Session:
    """The browser and its one page (plus, between requests, the next reset's page)."""

    def __init__(self, browser: Browser, key: str, origin: str) -> None:
        self.browser = browser
        self.key = key
        self.origin = origin.rstrip("/")
        self.page: Page | None = None
        self.spare: Page | None = None
        self.disposed = ""  # the context the last reset disposed of
        # Every request the page makes is held until let go: only the app's own are, the key
        # added to each as it goes. Not Network.setExtraHTTPHeaders: it puts the key on what
        # Fetch never pauses too (a script's WebSocket to another origin carried it).
        browser.handlers["Fetch.requestPaused"] = self._let_through
        self.open_page()

    def new_page(self) -> Page:
        """A blank page in a new browser context (an in-memory, incognito-like profile of its
        own: cookies, local and session storage, IndexedDB, cache, service workers, history),
        its requests held for :meth:`_let_through` (which adds the key to the app's own)."""
        context = self.browser.call("Target.createBrowserContext")["browserContextId"]
        target = self.browser.call(
            "Target.createTarget", {"url": "about:blank", "browserContextId": context}
        )["targetId"]
        session = self.browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Network", "Runtime"):
            self.browser.call(f"{domain}.enable", None, session)
        self.browser.call(
            "Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}, session
        )
        frame = self.browser.call("Page.getFrameTree", None, session)["frameTree"]["frame"]["id"]
        return Page(context, target, session, frame)

    def prepare_spare(self) -> None:
        """Have the next reset's page ready (a new renderer takes a while to start): made
        between requests, it has never been shown or browsed."""
        if self.spare is None:
            self.spare = self.new_page()

    def open_page(self) -> None:
        """Browse from now on in a fresh page (the spare one when ready) and dispose of the
        old page's context with all it held: this is the reset, no restart and no wait."""
        old, self.page, self.spare = self.page, self.spare or self.new_page(), None
        self.session, self.frame = self.page.session, self.page.frame
        self.loading = False
        self.inflight: set[str] = set()
        self.browser.events.clear()  # the old page's events say nothing about the new one
        if old is not None:
            # its pages close with it (no beforeunload hook runs)
            self.browser.call("Target.disposeBrowserContext", {"browserContextId": old.context})
            self.disposed = old.context

    def leftovers(self) -> list[str]:
        """What the browser still holds of earlier browsing (nothing after :meth:`open_page`):
        a disposed context still there, cookies, history, a page other than one blank one."""
        found = []
        contexts = self.browser.call("Target.getBrowserContexts")["browserContextIds"]
        if self.disposed in contexts:
            found.append("the old browser context")
        cookies = self.browser.call("Storage.getCookies", {"browserContextId": self.page.context})
        if cookies["cookies"]:
            found.append(f"{len(cookies['cookies'])} cookie(s)")
        history = [e["url"] for e in self.call("Page.getNavigationHistory")["entries"]]
        if history != ["about:blank"]:
            found.append(f"history {history}")
        pages = [
            t["targetId"]
            for t in self.browser.call("Target.getTargets")["targetInfos"]
            if t["type"] == "page" and t.get("browserContextId") == self.page.context
        ]
        if pages != [self.page.target]:
            found.append(f"{len(pages)} pages in the context")
        return found

    def call(self, method: str, params: dict | None = None) -> dict[str, Any]:
        return self.browser.call(method, params, self.session)

    def _let_through(self, event: dict[str, Any]) -> None:
        params = event["params"]
        parts = urllib.parse.urlsplit(params["request"]["url"])
        session = event.get("sessionId", self.session)
        # only the current page's: a page the reset replaced sends nothing more to the app
        if f"{parts.scheme}://{parts.netloc}" == self.origin and session == self.session:
            sent = params["request"].get("headers") or {}
            headers = [
                {"name": name, "value": value}
                for name, value in sent.items()
                if name.lower() != KEY_HEADER.lower()
            ]
            headers.append({"name": KEY_HEADER, "value": self.key})
            self.browser.send(
                "Fetch.continueRequest",
                {"requestId": params["requestId"], "headers": headers},
                session,
            )
        else:
            self.browser.send(
                "Fetch.failRequest",
                {"requestId": params["requestId"], "errorReason": "BlockedByClient"},
                session,
            )

    # --- waiting ----------------------------------------------------------------------------
    def _track(self, event: dict[str, Any]) -> None:
        if event.get("sessionId", self.session) != self.session:
            return  # another page's (one a reset closed)
        method, params = event["method"], event.get("params", {})
        if method == "Page.frameStartedLoading" and params.get("frameId") == self.frame:
            self.loading = True
        elif method == "Page.frameStoppedLoading" and params.get("frameId") == self.frame:
            self.loading = False
        elif method == "Network.requestWillBeSent":
            self.inflight.add(params["requestId"])
        elif method in ("Network.loadingFinished", "Network.loadingFailed"):
            self.inflight.discard(params["requestId"])

    def settle(self) -> None:
        """Wait until the page has loaded and its scripts' requests are answered: no load and
        no request in flight for :data:`SETTLE_QUIET` seconds (at most :data:`SETTLE_MAX`)."""
        deadline = time.monotonic() + SETTLE_MAX
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            event = self.browser.poll(0.05)
            if event is not None:
                self._track(event)
            if self.loading or self.inflight:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= SETTLE_QUIET:
                return
        self.inflight.clear()  # a request that never ends (or a lost event) must not hang us

    # --- the page -----------------------------------------------------------------------------
    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result.get("result", {}).get("value")

    def snapshot(self) -> str:
        nodes = self.call("Accessibility.getFullAXTree")["nodes"]
        where = self.evaluate("[location.href, document.title]") or ["", ""]
        return render(nodes, url=where[0], title=where[1])

    def element(self, backend_id: int) -> str:
        """The page's element ``backend_id`` as a remote object id."""
        try:
            found = self.call("DOM.resolveNode", {"backendNodeId": backend_id})
        except CdpError:
            found = {}
        object_id = found.get("object", {}).get("objectId")
        if not object_id:
            raise ActionError(f"there is no element [{backend_id}] on this page (take a snapshot)")
        return object_id

    def on_element(self, backend_id: int, function: str, *args: Any) -> Any:
        result = self.call(
            "Runtime.callFunctionOn",
            {
                "objectId": self.element(backend_id),
                "functionDeclaration": function,
                "arguments": [{"value": a} for a in args],
                "returnByValue": True,
            },
        )
        return result.get("result", {}).get("value")

    def url(self, text: str) -> str:
        """``text`` as a URL on the app's origin (a path is taken relative to the page)."""
        here = self.evaluate("location.href") or self.origin + "/"
        base = here if here.startswith(self.origin + "/") else self.origin + "/"
        url = urllib.parse.urljoin(base, text)
        parts = urllib.parse.urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != self.origin:
            raise ActionError(f"this browser opens only the app, {self.origin}/ (not {url})")
        return url

    def do(self, command: Command) -> None:
        """Carry out one action (the page then settles)."""
        action, target = command.action, command.target
        if action == "goto":
            result = self.call("Page.navigate", {"url": self.url(command.text)})
            if result.get("errorText"):
                raise ActionError(f"cannot open {command.text}: {result['errorText']}")
        elif action == "click":
            self.click(target)
        elif action == "type":
            problem = self.on_element(target, _CLEAR)
            if problem:
                raise ActionError(f"[{target}]: {problem}")
            self.call("Input.insertText", {"text": command.text})
        elif action == "select":
            problem = self.on_element(target, _SELECT, command.text)
            if problem:
                raise ActionError(f"[{target}]: {problem}")
        elif action == "press":
            key, code, text = KEY_CODES[command.text]
            common = {"key": key, "code": key, "windowsVirtualKeyCode": code}
            self.call("Input.dispatchKeyEvent", {"type": "keyDown", "text": text, **common})
            self.call("Input.dispatchKeyEvent", {"type": "keyUp", **common})
        elif action == "scroll":
            delta = 600 if command.text == "down" else -600
            self.call(
                "Input.dispatchMouseEvent",
                {"type": "mouseWheel", "x": 400, "y": 300, "deltaX": 0, "deltaY": delta},
            )
        elif action == "back":
            history = self.call("Page.getNavigationHistory")
            index = history["currentIndex"]
            if index == 0:
                raise ActionError("there is no page to go back to")
            self.call(
                "Page.navigateToHistoryEntry", {"entryId": history["entries"][index - 1]["id"]}
            )
        elif action == "reset":
            self.open_page()
            left = self.leftovers()
            if left:
                raise ActionError(f"the reset left {', '.join(left)}")
            return  # a new blank page: nothing loads, nothing to settle
        elif action not in ("snapshot", "ping"):
            raise ActionError(f"unknown action {action}")
        if action != "ping":
            self.settle()

    def click(self, backend_id: int) -> None:
        """A real mouse click in the middle of the element (scrolled into view first)."""
        self.element(backend_id)
        try:
            self.call("DOM.scrollIntoViewIfNeeded", {"backendNodeId": backend_id})
            quads = self.call("DOM.getContentQuads", {"backendNodeId": backend_id})["quads"]
        except CdpError:
            quads = []
        if not quads:
            raise ActionError(f"[{backend_id}] is not visible, so it cannot be clicked")
        quad = quads[0]
        x = sum(quad[0::2]) / 4
        y = sum(quad[1::2]) / 4
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )


def answer(session: Session, raw: bytes) -> dict[str, Any]:
    """The reply to one request: the page after the action, or what went wrong."""
    try:
        payload = json.loads(raw)
        command = Command(payload["action"], payload.get("target"), payload.get("text") or "")
    except (ValueError, KeyError, TypeError):
        return {"ok": False, "error": "malformed request", "text": ""}
    if command.action == "ping":
        return {"ok": True, "text": "ready\n"}
    try:
        session.do(command)
    except ActionError as exc:
        return {"ok": False, "error": str(exc), "text": ""}
    if command.action == "reset":
        return {"ok": True, "text": RESET_TEXT}
    return {"ok": True, "text": session.snapshot()}


def drop_privileges(user: str) -> None:
    entry = pwd.getpwnam(user)
    if os.geteuid() == entry.pw_uid:
        return
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
    os.environ["HOME"] = entry.pw_dir


def chromium_argv(profile: str) -> list[str]:
    return [
        CHROMIUM,
        "--headless",
        "--no-sandbox",  # the browser's user is the sandbox here; a container has no userns
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--mute-audio",
        "--window-size=1280,900",
        "--remote-debugging-pipe",
        f"--user-data-dir={profile}",
        "about:blank",
    ]


def serve(args: argparse.Namespace) -> None:
    key = Path(args.key_file).read_text().strip()
    if args.user:
        drop_privileges(args.user)
    profile = Path(os.environ.get("HOME", "/tmp")) / "profile"
    with open(args.log, "ab") as log:
        browser = Browser(chromium_argv(str(profile)), stderr=log)
    session = Session(browser, key, args.origin)
    path = Path(args.socket)
    path.unlink(missing_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    path.chmod(0o666)  # any user of the machine may ask the browser for a page
    server.listen(8)
    print(f"browsed: ready on {path}", flush=True)
    while True:  # one request at a time: it is one browser tab
        try:
            session.prepare_spare()  # before waiting: the next reset then only swaps pages
        except CdpError:
            traceback.print_exc()  # the reset makes its page itself
        conn, _ = server.accept()
        with conn:
            conn.settimeout(30)
            try:
                raw = b""
                while not raw.endswith(b"\n") and (chunk := conn.recv(1 << 16)):
                    raw += chunk
                try:
                    reply = answer(session, raw)
                except CdpError as exc:
                    traceback.print_exc()
                    reply = {"ok": False, "error": f"browser error: {exc}", "text": ""}
                conn.sendall(json.dumps(reply).encode())
            except OSError:
                traceback.print_exc()
        if browser.process.poll() is not None:
            raise SystemExit("browsed: Chromium exited")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user", default="", help="become this user (from root) first")
    parser.add_argument("--key-file", default="/run/browserkey/key")
    parser.add_argument("--socket", default="/run/browser/browse.sock")
    parser.add_argument("--origin", default="http://127.0.0.1:8000")
    parser.add_argument("--log", default="/dev/null", help="Chromium's own messages go here")
    serve(parser.parse_args())


if __name__ == "__main__":
    main()
