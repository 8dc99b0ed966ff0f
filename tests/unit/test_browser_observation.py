"""Browser observation mode without Docker: the accessibility tree as the agent reads it (ids,
what is left out, states), the ``browse`` command line, the app's gate, the browser service's
origin rule, and what a browser-mode task ships (the text mode unchanged)."""

from __future__ import annotations

import collections
import io
import random
import types
from pathlib import Path

import pytest
from fixtures.browserkit import load_browserkit

from factory.families import registry
from factory.families.web.webfamily import BROWSERKIT_DIR
from factory.generate.taxonomy import Difficulty

axtree = load_browserkit("axtree")
browse = load_browserkit("browse")
gate = load_browserkit("gate")
browsed = load_browserkit("browsed")
cdp = load_browserkit("cdp")


def node(node_id, role, name="", *, children=(), parent=None, backend=None, **extra):
    out = {
        "nodeId": str(node_id),
        "role": {"type": "role", "value": role},
        "name": {"type": "computedString", "value": name},
        "childIds": [str(c) for c in children],
    }
    if parent is not None:
        out["parentId"] = str(parent)
    if backend is not None:
        out["backendDOMNodeId"] = backend
    out.update(extra)
    return out


# A login form as Chromium reports it (getFullAXTree), with the wrappers real pages have.
LOGIN = [
    node(1, "RootWebArea", "Sign in - Shop", children=[2], backend=7),
    node(2, "generic", children=[3, 4, 9, 12, 14, 16], parent=1, backend=20),
    node(3, "heading", "Sign in", children=[5], parent=2, backend=21),
    node(5, "StaticText", "Sign in", children=[6], parent=3, backend=22),
    node(6, "InlineTextBox", "Sign in", parent=5),
    node(4, "link", "Products", children=[8], parent=2, backend=23),
    node(8, "StaticText", "Products", parent=4, backend=24),
    node(
        9,
        "textbox",
        "Username",
        parent=2,
        backend=31,
        value={"type": "string", "value": "ann42"},
        properties=[{"name": "focused", "value": {"type": "boolean", "value": True}}],
    ),
    node(12, "none", children=[13], parent=2, backend=32, ignored=True),
    node(
        13,
        "checkbox",
        "Remember me",
        parent=12,
        backend=33,
        properties=[{"name": "checked", "value": {"type": "tristate", "value": "true"}}],
    ),  # fmt: skip
    node(
        14,
        "button",
        "Sign in",
        parent=2,
        backend=35,
        properties=[{"name": "disabled", "value": {"type": "boolean", "value": False}}],
    ),  # fmt: skip
    node(16, "paragraph", children=[17, 18], parent=2, backend=36),
    node(17, "StaticText", 'Say "hi"  to\nus', parent=16, backend=37),
    node(18, "LineBreak", "\n", parent=16, backend=38),
]


def test_the_tree_shows_elements_with_their_dom_ids():
    text = axtree.render(LOGIN, url="http://127.0.0.1:8000/login", title="Sign in - Shop")
    assert text == (
        "URL: http://127.0.0.1:8000/login\n"
        "Title: Sign in - Shop\n"
        '[7] RootWebArea "Sign in - Shop"\n'
        '  [21] heading "Sign in"\n'
        '  [23] link "Products"\n'
        '  [31] textbox "Username" value="ann42" focused\n'
        '  [33] checkbox "Remember me" checked\n'
        '  [35] button "Sign in"\n'
        "  [36] paragraph\n"
        '    StaticText "Say \\"hi\\" to us"\n'
    )


def test_ids_do_not_depend_on_what_else_is_on_the_page():
    # A script adds a row above the button: the ids of the elements already there hold.
    grown = [dict(n) for n in LOGIN]
    grown[1] = {**grown[1], "childIds": ["3", "4", "40", "9", "12", "14", "16"]}
    grown.append(node(40, "row", "new row", parent=2, backend=90))
    before = axtree.render(LOGIN).splitlines()
    after = axtree.render(grown).splitlines()
    assert '  [90] row "new row"' in after
    assert [line for line in after if "[90]" not in line] == before


def test_a_wrapper_with_a_name_is_shown():
    nodes = [
        node(1, "RootWebArea", "x", children=[2], backend=1),
        node(2, "generic", "Cart summary", children=[3], parent=1, backend=2),
        node(3, "StaticText", "3 items", parent=2, backend=3),
    ]
    assert axtree.render(nodes).splitlines() == [
        '[1] RootWebArea "x"',
        '  [2] generic "Cart summary"',
        '    StaticText "3 items"',
    ]


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["goto", "/login"], browse.Command("goto", None, "/login")),
        (
            ["open", " http://127.0.0.1:8000/ "],
            browse.Command("goto", None, "http://127.0.0.1:8000/"),
        ),
        (["snapshot"], browse.Command("snapshot")),
        (["view"], browse.Command("snapshot")),
        (["click", "[33]"], browse.Command("click", 33)),
        (["type", "31", "two", "words"], browse.Command("type", 31, "two words")),
        (["type", "31", ""], browse.Command("type", 31, "")),
        (["select", "4", "Savings (1234)"], browse.Command("select", 4, "Savings (1234)")),
        (["press", "enter"], browse.Command("press", None, "Enter")),
        (["scroll"], browse.Command("scroll", None, "down")),
        (["scroll", "UP"], browse.Command("scroll", None, "up")),
        (["back"], browse.Command("back")),
        (["reset"], browse.Command("reset")),
    ],
)
def test_command_lines(argv, want):
    assert browse.parse(argv) == want


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "no action"),
        (["click"], "takes 1 argument"),
        (["click", "Sign in"], "not an element id"),
        (["click", "-3"], "not an element id"),
        (["type", "31"], "element id and a text"),
        (["press", "F5"], "knows the keys"),
        (["scroll", "left"], "down or up"),
        (["goto", "  "], "needs a URL"),
        (["back", "2"], "takes 0 argument"),
        (["eval", "1+1"], "unknown action"),
    ],
)
def test_bad_command_lines(argv, says):
    with pytest.raises(browse.UsageError, match=says):
        browse.parse(argv)


def test_the_cli_says_what_is_wrong_without_the_service(capsys, monkeypatch):
    monkeypatch.setattr(browse, "SOCKET", "/nonexistent/browse.sock")
    assert browse.main(["frob"]) == 2
    assert "unknown action" in capsys.readouterr().err
    monkeypatch.setattr(browse, "request", lambda command: (_ for _ in ()).throw(OSError("gone")))
    assert browse.main(["snapshot"]) == 1
    assert "not running" in capsys.readouterr().err


def _call(app, path: str, key: str | None = None) -> tuple[str, bytes]:
    environ = {"PATH_INFO": path, "REQUEST_METHOD": "GET", "wsgi.input": io.BytesIO()}
    if key is not None:
        environ[gate.KEY_ENVIRON] = key
    status = []
    body = b"".join(app(environ, lambda s, headers: status.append(s)))
    return status[0], body


def test_the_gate_lets_only_the_key_through():
    def inner(environ, start_response):
        start_response("200 OK", [])
        return [b"the app"]

    app = gate.gated(inner, "k" * 32)
    assert _call(app, "/login", "k" * 32) == ("200 OK", b"the app")
    for key in (None, "", "k" * 31, "K" * 32, "k" * 33, "\xff" * 32):
        status, body = _call(app, "/login", key)
        assert status.startswith("403") and b"answers only the browser" in body
    assert _call(app, "/health") == ("200 OK", b"the app")


def test_the_browser_opens_only_the_app():
    session = browsed.Session.__new__(browsed.Session)
    session.origin = "http://127.0.0.1:8000"
    session.evaluate = lambda expression: "http://127.0.0.1:8000/products?page=2"
    assert session.url("/cart") == "http://127.0.0.1:8000/cart"
    assert session.url("3") == "http://127.0.0.1:8000/3"
    assert session.url("http://127.0.0.1:8000/x") == "http://127.0.0.1:8000/x"
    for url in (
        "file:///run/browserkey/key",
        "javascript:fetch('/login')",
        "data:text/html,<script>1</script>",
        "http://127.0.0.1:8001/",
        "http://localhost:8000/",
        "//evil.example/",
        "http://127.0.0.1:8000@evil.example/",
    ):
        with pytest.raises(browsed.ActionError, match="opens only the app"):
            session.url(url)


def test_malformed_requests_are_refused():
    assert browsed.answer(None, b"not json")["ok"] is False
    assert browsed.answer(None, b'{"target": 3}')["error"] == "malformed request"
    assert browsed.answer(None, b'{"action": "ping"}') == {"ok": True, "text": "ready\n"}


BROWSER_FAMILIES = ["web-shop-browser", "web-bank-browser", "web-reports"]


@pytest.mark.parametrize("name", BROWSER_FAMILIES)
def test_a_browser_task_ships_chromium_and_says_use_the_browser(name):
    family = registry.get(name)
    draft = family.draft(random.Random(1), Difficulty.EASY, dict(family.default_params))
    dockerfile = draft.files["environment/Dockerfile"]
    assert "chromium" in dockerfile and "/opt/browserkit/entrypoint.sh" in dockerfile
    kit = sorted(p.name for p in BROWSERKIT_DIR.iterdir() if p.is_file())
    assert "browsed.py" in kit and "entrypoint.sh" in kit
    assert sorted(p for p in draft.files if p.startswith("environment/browserkit/")) == [
        f"environment/browserkit/{n}" for n in kit
    ]  # the whole kit, nothing else
    solve = draft.files["solution/solve.sh"]
    assert "browse(" in solve and "from client import" not in solve
    assert all("from client import" not in m for m in draft.mutations.values())
    assert "browse ping" in draft.healthcheck["command"]
    assert "browser" in draft.tags and draft.memory_mb >= 2048
    assert draft.separate_verifier and draft.collect and draft.collect_user == "root"
    instruction = family.template("instruction.md.j2").render(**draft.context)
    assert "Use the browser: it is the only way in" in instruction
    assert "curl` or Python from the shell" not in instruction


@pytest.mark.parametrize("name", ["web-shop-browser", "web-bank-browser"])
def test_the_text_solution_is_a_cheat_in_browser_mode(name):
    family = registry.get(name)
    draft = family.draft(random.Random(1), Difficulty.MEDIUM, dict(family.default_params))
    assert "from client import Client" in draft.cheats["http-behind-the-browser"]


def test_text_mode_is_the_default_and_browser_only_families_refuse_it():
    text = registry.get("web-shop").draft(random.Random(1), Difficulty.EASY, {})
    assert "environment/Dockerfile" not in text.files and not text.cheats
    assert not any(p.startswith("environment/browserkit/") for p in text.files)
    same = registry.get("web-shop").draft(
        random.Random(1), Difficulty.EASY, {"observation": "text"}
    )
    assert same.files == text.files and same.mutations == text.mutations
    with pytest.raises(ValueError, match="offers the observations browser"):
        registry.get("web-reports").draft(
            random.Random(1), Difficulty.EASY, {"observation": "text"}
        )


@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_report_answers_and_their_near_misses(difficulty):
    family = registry.get("web-reports")
    draft = family.draft(random.Random(3), difficulty, {})
    assert draft.outputs == ["/srv/app/data/app.db", "/home/agent/answer.txt"]
    context = draft.context
    assert context["expected"] in draft.secrets
    instruction = family.template("instruction.md.j2").render(**context)
    assert not any(s in instruction for s in draft.secrets)
    assert len(draft.mutations) >= 2
    tests = family.template("tests/test_outputs.py.j2").render(**context)
    assert f"EXPECTED = {context['expected']!r}" in tests


def test_the_driver_reads_tree_lines():
    driver = Path(BROWSERKIT_DIR).parents[2] / "templates/families/_shared/browse_driver.py.j2"
    scope: dict = {}
    exec(driver.read_text().split("-#}", 1)[1], scope)
    page = axtree.render(LOGIN)
    assert list(scope["elements"](page))[3] == (31, "textbox", "Username", ' value="ann42" focused')
    assert scope["find"](page, "button", "Sign in") == 35
    assert scope["find"](page, "link", "Products", after="Sign in") == 23


def test_only_the_apps_requests_leave_the_browser():
    # Every request the page makes is paused: only the app's own go on (with the key the
    # browser adds); a link, an image or a script's fetch elsewhere fails, the key unsent.
    sent = []
    session = browsed.Session.__new__(browsed.Session)
    session.origin = "http://127.0.0.1:8000"
    session.session = "S1"
    session.key = "k3y"
    session.browser = types.SimpleNamespace(send=lambda *call: sent.append(call))
    urls = {
        "1": "http://127.0.0.1:8000/api/sales?month=2024-01",
        "2": "http://127.0.0.1:9999/steal",
        "3": "http://127.0.0.1:8000.evil.example/",
        "4": "https://127.0.0.1:8000/",
    }
    for request_id, url in urls.items():
        session._let_through({"params": {"requestId": request_id, "request": {"url": url}}})
    assert sent[0][0] == "Fetch.continueRequest" and sent[0][2] == "S1"
    assert sent[0][1]["requestId"] == "1"
    assert {"name": "X-Browser-Key", "value": "k3y"} in sent[0][1]["headers"]
    assert [(m, p["requestId"], p.get("errorReason")) for m, p, _ in sent[1:]] == [
        ("Fetch.failRequest", r, "BlockedByClient") for r in ("2", "3", "4")
    ]
    # A page a reset replaced (another session) reaches not even the app.
    sent.clear()
    session._let_through(
        {"sessionId": "S0", "params": {"requestId": "5", "request": {"url": urls["1"]}}}
    )
    assert sent == [
        ("Fetch.failRequest", {"requestId": "5", "errorReason": "BlockedByClient"}, "S0")
    ]


def test_the_key_goes_only_on_requests_the_browser_lets_through():
    # The key is added as an app request is let go, never set for the whole page
    # (Network.setExtraHTTPHeaders also put it on a script's WebSocket to another origin,
    # which Fetch never pauses); a key header the page set itself is replaced, and the
    # request's own headers are kept.
    sent, calls = [], []
    replies = {
        "Target.createBrowserContext": {"browserContextId": "C1"},
        "Target.createTarget": {"targetId": "T"},
        "Target.attachToTarget": {"sessionId": "S1"},
        "Page.getFrameTree": {"frameTree": {"frame": {"id": "F"}}},
    }

    def call(method, params=None, session=None):
        calls.append(method)
        return replies.get(method, {})

    browser = types.SimpleNamespace(
        handlers={}, call=call, send=lambda *c: sent.append(c), events=collections.deque()
    )
    browsed.Session(browser, "k3y", "http://127.0.0.1:8000")
    assert "Fetch.enable" in calls and "Network.setExtraHTTPHeaders" not in calls
    request = {
        "url": "http://127.0.0.1:8000/cart",
        "headers": {"Accept": "text/html", "x-browser-key": "forged"},
    }
    browser.handlers["Fetch.requestPaused"]({"params": {"requestId": "7", "request": request}})
    ((method, params, target),) = sent
    assert (method, params["requestId"], target) == ("Fetch.continueRequest", "7", "S1")
    assert params["headers"] == [
        {"name": "Accept", "value": "text/html"},
        {"name": "X-Browser-Key", "value": "k3y"},
    ]


def test_handled_events_are_answered_while_a_command_waits():
    browser = cdp.Browser.__new__(cdp.Browser)
    browser.events = collections.deque()
    seen = []
    browser.handlers = {"Fetch.requestPaused": seen.append}
    replies = iter(
        [
            {"method": "Fetch.requestPaused", "params": {"requestId": "7"}},
            {"method": "Page.loadEventFired", "params": {}},
            {"id": 99, "result": {}},  # a reply nobody waits for
            {"id": 1, "result": {"frameId": "F"}},
        ]
    )
    browser._read = lambda timeout: next(replies, None)
    browser.send = lambda method, params=None, session=None: 1
    assert browser.call("Page.navigate", {"url": "x"}) == {"frameId": "F"}
    assert [e["params"]["requestId"] for e in seen] == ["7"]
    assert [e["method"] for e in browser.events] == ["Page.loadEventFired"]
    assert browser.poll(0)["method"] == "Page.loadEventFired"
    assert browser.poll(0) is None
