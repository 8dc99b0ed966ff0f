"""The browser reset without Docker: rollouts sharing a container get a fresh browser context
and a fresh copy of the app's database, and nothing of the last episode is left."""

from __future__ import annotations

import collections
import os
import pwd
from pathlib import Path

import pytest
from fixtures.browserkit import load_browserkit

browse = load_browserkit("browse")
gate = load_browserkit("gate")
browsed = load_browserkit("browsed")
cdp = load_browserkit("cdp")

# --- the reset (rollouts sharing a container) --------------------------------------------------

reset = load_browserkit("reset")


class FakeCdp:
    """A browser that answers the CDP calls a reset makes, and remembers them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict | None, str | None]] = []
        self.events = collections.deque([{"method": "Page.loadEventFired", "sessionId": "old"}])
        self.handlers: dict = {}
        self.contexts: list[str] = []
        self.cookies: dict[str, list] = {}
        self.made = 0

    def call(self, method, params=None, session=None, timeout=30.0):
        self.calls.append((method, params, session))
        if method == "Target.createBrowserContext":
            self.made += 1
            self.contexts.append(f"C{self.made}")
            return {"browserContextId": f"C{self.made}"}
        if method == "Target.createTarget":
            return {"targetId": "T" + params["browserContextId"][1:]}
        if method == "Target.attachToTarget":
            return {"sessionId": "S" + params["targetId"][1:]}
        if method == "Page.getFrameTree":
            return {"frameTree": {"frame": {"id": "F" + session[1:]}}}
        if method == "Target.disposeBrowserContext":
            self.contexts.remove(params["browserContextId"])
        if method == "Target.getBrowserContexts":
            return {"browserContextIds": list(self.contexts)}
        if method == "Storage.getCookies":
            return {"cookies": self.cookies.get(params["browserContextId"], [])}
        if method == "Page.getNavigationHistory":
            return {"entries": [{"url": "about:blank"}]}
        if method == "Target.getTargets":
            return {
                "targetInfos": [
                    {"type": "page", "targetId": "T" + c[1:], "browserContextId": c}
                    for c in self.contexts
                ]
            }
        return {}


def test_the_browser_reset_swaps_in_a_fresh_context_and_disposes_of_the_old():
    browser = FakeCdp()
    session = browsed.Session(browser, "k" * 32, "http://127.0.0.1:8000")
    assert (session.page.context, session.session) == ("C1", "S1")
    # Every page carries the key and has its requests held for the origin rule.
    setup = [(m, s) for m, _p, s in browser.calls if s == "S1"]
    assert ("Fetch.enable", "S1") in setup
    # the key goes on the app's requests as they are let through, never on the whole page
    assert not any(method == "Network.setExtraHTTPHeaders" for method, _ in setup)
    session.prepare_spare()  # between requests: the next reset's page, never browsed
    assert session.spare.context == "C2" and session.page.context == "C1"
    browser.calls.clear()
    session.inflight.add("r1")
    assert browsed.answer(session, b'{"action": "reset"}') == {
        "ok": True,
        "text": browsed.RESET_TEXT,
    }
    methods = [m for m, _p, _s in browser.calls]
    # Only a swap: no page made, no navigation, no settle wait; the old context is gone.
    assert "Target.createTarget" not in methods and "Page.navigate" not in methods
    assert ("Target.disposeBrowserContext", {"browserContextId": "C1"}, None) in browser.calls
    assert session.page.context == "C2" and session.session == "S2" and session.frame == "F2"
    assert session.spare is None and not session.inflight and not browser.events
    # Without a spare the reset makes its page itself.
    assert browsed.answer(session, b'{"action": "reset"}')["ok"]
    assert browser.contexts == ["C3"] and session.disposed == "C2"


def test_a_reset_that_leaves_anything_fails():
    browser = FakeCdp()
    session = browsed.Session(browser, "k", "http://127.0.0.1:8000")
    assert session.leftovers() == []
    browser.cookies["C1"] = [{"name": "session"}]
    session.disposed = "C1"  # as if disposing of it had not worked
    assert session.leftovers() == ["the old browser context", "1 cookie(s)"]
    browser.cookies["C2"] = [{"name": "sid"}]  # the new context must start empty
    reply = browsed.answer(session, b'{"action": "reset"}')
    assert reply["ok"] is False and "cookie" in reply["error"]


def test_events_of_a_page_a_reset_closed_are_not_the_new_pages():
    session = browsed.Session(FakeCdp(), "k", "http://127.0.0.1:8000")
    session._track({"method": "Network.requestWillBeSent", "sessionId": "old", "params": {}})
    session._track({"method": "Network.requestWillBeSent", "params": {"requestId": "1"}})
    assert session.inflight == {"1"}


def _serve(app) -> tuple[int, object]:
    import threading
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server("127.0.0.1", 0, app, handler_class=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_port, server


def _app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"the shop"]


def test_the_reset_checks_the_app_is_behind_its_gate():
    gated_port, gated = _serve(gate.gated(_app, "k" * 32))
    open_port, ungated = _serve(_app)
    try:
        assert reset.app_gated(gated_port)
        assert not reset.app_gated(open_port)  # up, but answers without the key
        assert reset.http_get("/health", gated_port)[0] == 200
    finally:
        gated.shutdown()
        ungated.shutdown()
    assert not reset.app_gated(gated_port)  # gone


def test_the_database_swap(tmp_path):
    (tmp_path / "pristine.db").write_bytes(b"pristine")
    (tmp_path / "app.db").write_bytes(b"changed by the episode")
    for leftover in ("app.db-wal", "app.db-shm", "app.db-journal", "app.db.new"):
        (tmp_path / leftover).write_bytes(b"x")
    reset.swap_database(tmp_path)
    assert (tmp_path / "app.db").read_bytes() == b"pristine"
    assert (tmp_path / "app.db").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db", "pristine.db"]


class FakeBrowsed:
    """The browser service's socket, answering ``reset`` and ``ping`` as told."""

    def __init__(self, path: Path, ok: bool = True) -> None:
        import socket as socketlib
        import threading

        self.requests: list[dict] = []
        self.ok = ok
        self.server = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        import json

        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                raw = b""
                while not raw.endswith(b"\n") and (chunk := conn.recv(1 << 16)):
                    raw += chunk
                self.requests.append(json.loads(raw))
                conn.sendall(json.dumps({"ok": self.ok, "text": ""}).encode())


def _reset_here(monkeypatch, tmp_path, port: int, ok: bool = True):
    data = tmp_path / "data"
    data.mkdir()
    (data / "pristine.db").write_bytes(b"pristine")
    (data / "app.db").write_bytes(b"changed")
    sock = tmp_path / "browse.sock"
    browser = FakeBrowsed(sock, ok)
    restarted: list[str] = []
    monkeypatch.setattr(reset, "DATA", data)
    monkeypatch.setattr(reset, "SOCKET", str(sock))
    monkeypatch.setattr(reset, "PORT", port)
    monkeypatch.setattr(reset, "WAIT", 0.3)
    monkeypatch.setattr(reset.pwd, "getpwnam", lambda name: pwd.getpwuid(os.getuid()))
    monkeypatch.setattr(reset, "restart_app", lambda: restarted.append("app"))
    monkeypatch.setattr(reset, "restart_browser", lambda: restarted.append("browser"))
    return data, browser, restarted


def test_a_reset_is_one_browser_request_and_the_swap(monkeypatch, tmp_path):
    port, server = _serve(gate.gated(_app, "k" * 32))
    try:
        data, browser, restarted = _reset_here(monkeypatch, tmp_path, port)
        assert reset.main() == 0
    finally:
        server.shutdown()
    assert browser.requests == [{"action": "reset"}] and restarted == []
    assert (data / "app.db").read_bytes() == b"pristine"


def test_an_ungated_app_or_a_browser_that_did_not_reset_is_restarted(monkeypatch, tmp_path):
    port, server = _serve(_app)  # answers without the key: never left as it is
    try:
        data, browser, restarted = _reset_here(monkeypatch, tmp_path, port, ok=False)
        assert reset.main() == 1  # still ungated after the wait: the reset fails
    finally:
        server.shutdown()
    assert restarted == ["app", "browser"]
    assert (data / "app.db").read_bytes() == b"pristine"


_PROBE_PAGE = b"""<html><head><title>probe</title><script src="/cached.js"></script></head>
<body><script>
document.title = 'cookies=[' + document.cookie + '] local=' + localStorage.length +
  ' session=' + sessionStorage.length;
document.cookie = 'js=1; max-age=3600'; localStorage.setItem('k', 'v');
sessionStorage.setItem('s', 'v');
</script></body></html>"""


@pytest.mark.skipif(
    not Path(browsed.CHROMIUM).exists(), reason=f"no Chromium at {browsed.CHROMIUM}"
)
def test_after_a_reset_chromium_holds_nothing_of_the_last_episode(tmp_path):
    # A real headless Chromium (Docker-free): a page sets cookies (from the server and from
    # its script), local and session storage, and caches a script; after the reset a page of
    # the same origin sees none of it, and the script is fetched again.
    import http.server
    import threading

    hits = collections.Counter()

    class Probe(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits[self.path] += 1
            cached = self.path == "/cached.js"
            body = b"var cached = 1;" if cached else _PROBE_PAGE
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript" if cached else "text/html")
            self.send_header("Content-Length", str(len(body)))
            if cached:
                self.send_header("Cache-Control", "max-age=3600")
            else:
                self.send_header("Set-Cookie", "server=1; Max-Age=3600; Path=/")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Probe)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = cdp.Browser(browsed.chromium_argv(str(tmp_path / "profile")))
    try:
        session = browsed.Session(browser, "k", f"http://127.0.0.1:{server.server_port}")

        def title(path: str) -> str:
            session.do(browse.Command("goto", text=path))
            return session.evaluate("document.title")

        fresh = "cookies=[server=1] local=0 session=0"
        assert title("/a") == fresh
        assert title("/b") == "cookies=[server=1; js=1] local=1 session=1"
        assert hits["/cached.js"] == 1  # the second page took the script from the cache
        session.prepare_spare()
        assert browsed.answer(session, b'{"action": "reset"}')["ok"]
        assert session.snapshot().startswith("URL: about:blank\n")
        assert session.call("Page.getNavigationHistory")["entries"][0]["url"] == "about:blank"
        assert title("/c") == fresh
        assert hits["/cached.js"] == 2  # the cache went with the old context
        assert browsed.answer(session, b'{"action": "reset"}')["ok"]  # no spare: made then
        assert title("/d") == fresh
    finally:
        browser.process.kill()
        browser.process.wait()
        server.shutdown()
