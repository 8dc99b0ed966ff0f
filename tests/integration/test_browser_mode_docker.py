"""Browser observation mode end to end, in real containers (headless Chromium from Debian): the
agent's user reaches the app only through the browser; a scripted agent reads the accessibility
tree of a page drawn by JavaScript and answers from it; and one task of each browser family is
solved through ``browse`` by an episode of the agent harness, for reward 1."""

from __future__ import annotations

import random
import re
import shlex
import time

import pytest
from fixtures.built_tasks import PagePlan, built_trial, element_id, sign_in

from factory.agent.harness import HarnessConfig, ScriptedPolicy, run_episode
from factory.families import registry
from factory.generate.taxonomy import Difficulty
from factory.validate.phases import container_spec

pytestmark = pytest.mark.docker

BROWSER_FAMILIES = ["web-shop-browser", "web-bank-browser", "web-reports"]
LONG = HarnessConfig(max_turns=40, command_timeout_sec=300.0, max_observation_chars=50_000)
_DIRECT = """
import sys, urllib.error, urllib.request
request = urllib.request.Request("http://127.0.0.1:8000" + sys.argv[1], headers=dict(h.split(": ", 1) for h in sys.argv[2:]))
try:
    with urllib.request.urlopen(request, timeout=10) as reply:
        print(reply.status, reply.read().decode()[:200])
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode()[:200])
"""


def test_only_the_browser_reaches_the_app(runtime, tmp_path):
    _trial, task, image = built_trial(runtime, tmp_path, "web-shop-browser", Difficulty.EASY)
    with runtime.start(container_spec(task, image)) as box:
        box.wait_ready()

        def agent(*command: str):
            return box.exec(list(command), timeout_sec=60, user="agent")

        # Plain HTTP from the agent's shell: refused, with or without a made-up key.
        for headers in ([], ["X-Browser-Key: 0123456789abcdef"]):
            direct = agent("python3", "-c", _DIRECT, "/login", *headers)
            assert direct.output.startswith("403 This app answers only the browser"), direct.output
        # The health probe stays open and says nothing else.
        assert agent("python3", "-c", _DIRECT, "/health").output.startswith("200")
        # The key and the browser's process are out of the agent's reach.
        assert agent("cat", "/run/browserkey/key").exit_code != 0
        environ = agent("sh", "-c", "cat /proc/$(cat /run/browsed.pid)/environ")
        assert environ.exit_code != 0
        assert agent("sh", "-c", "kill $(cat /run/browsed.pid)").exit_code != 0
        assert agent("sh", "-c", "ls /var/lib/browser").exit_code != 0
        # The browser reaches it, and opens nothing but the app.
        page = agent("browse", "goto", "/login")
        assert page.exit_code == 0, page.output
        assert 'textbox "Username"' in page.output and 'button "Sign in"' in page.output
        for url in ("file:///run/browserkey/key", "javascript:fetch('/login')", "http://1.1.1.1/"):
            refused = agent("browse", "goto", url)
            assert refused.exit_code == 1 and "opens only the app" in refused.output, url
        # Per-action latency, as the agent sees it (the CLI's whole round trip).
        started = time.monotonic()
        for _ in range(5):
            assert agent("browse", "snapshot").exit_code == 0
        per_action = (time.monotonic() - started) / 5
        print(f"browse snapshot: {per_action:.2f} s per action")
        assert per_action < 5.0
        # The reset (rollouts sharing a container) blanks the browser; an app it has to
        # restart comes back behind its gate.
        started = time.monotonic()
        assert box.exec(["sh", "/opt/webkit/reset.sh"], timeout_sec=60).exit_code == 0
        print(f"reset: {time.monotonic() - started:.2f} s")
        assert agent("browse", "snapshot").output.startswith("URL: about:blank")
        _the_reset_forgets_cookies_and_storage(box, agent)
        # The probe gone, the reset finds no app: it starts the real one, behind its gate.
        assert box.exec(["sh", "/opt/webkit/reset.sh"], timeout_sec=60).exit_code == 0
        assert agent("python3", "-c", _DIRECT, "/login").output.startswith("403")
        assert 'textbox "Username"' in agent("browse", "goto", "/login").output
        # A browser service that is gone is started again (a new browser, blank).
        assert box.exec(["sh", "-c", "kill $(cat /run/browsed.pid)"], timeout_sec=10).exit_code == 0
        assert box.exec(["sh", "/opt/webkit/reset.sh"], timeout_sec=60).exit_code == 0
        assert agent("browse", "snapshot").output.startswith("URL: about:blank")
        assert 'textbox "Username"' in agent("browse", "goto", "/login").output


# A stand-in for the app on its origin, gated like it (root reads the key): its page shows in
# its title the cookies, local and session storage it finds, then sets each of them.
_PROBE = r"""
import http.server
key = open("/run/browserkey/key").read().strip()
PAGE = (
    b"<html><head><title>probe</title></head><body><script>"
    b"document.title = 'cookies=[' + document.cookie + '] local=' + localStorage.length +"
    b" ' session=' + sessionStorage.length;"
    b"document.cookie = 'js=1; max-age=3600'; localStorage.setItem('k', 'v');"
    b"sessionStorage.setItem('s', 'v');"
    b"</script></body></html>"
)
class Probe(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            status, body, cookie = 200, b"ok", False
        elif self.headers.get("X-Browser-Key") != key:
            status, body, cookie = 403, b"This app answers only the browser.", False
        else:
            status, body, cookie = 200, PAGE, True
        self.send_response(status)
        if cookie:
            self.send_header("Set-Cookie", "server=1; Max-Age=3600; Path=/")
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", 8000), Probe).serve_forever()
"""


def _the_reset_forgets_cookies_and_storage(box, agent) -> None:
    """The app swapped for the probe: cookies and storage a page set are there on the next
    page, and gone after the reset (which finds the probe up and behind the gate)."""
    started = box.exec(
        [
            "sh",
            "-c",
            f"printf '%s' {shlex.quote(_PROBE)} > /tmp/probe.py && kill $(cat /run/webapp.pid) "
            "&& sleep 1 && (nohup python3 /tmp/probe.py >/tmp/probe.log 2>&1 & "
            "echo $! > /tmp/probe.pid) && for i in $(seq 100); do "
            "python3 /opt/webkit/health.py && exit 0; sleep 0.1; done; cat /tmp/probe.log; exit 1",
        ],
        timeout_sec=60,
    )
    assert started.exit_code == 0, started.output

    def title(path: str) -> str:
        page = agent("browse", "goto", path)
        assert page.exit_code == 0, page.output
        return re.search(r"^Title: (.*)$", page.output, re.M).group(1)

    fresh = "cookies=[server=1] local=0 session=0"
    assert title("/a") == fresh
    assert title("/b") == "cookies=[server=1; js=1] local=1 session=1"
    reset = box.exec(["sh", "/opt/webkit/reset.sh"], timeout_sec=60)
    assert reset.exit_code == 0, reset.output
    assert agent("browse", "snapshot").output.startswith("URL: about:blank")
    assert agent("browse", "back").exit_code == 1  # no history either
    assert title("/c") == fresh
    assert box.exec(["sh", "-c", "kill $(cat /tmp/probe.pid)"], timeout_sec=10).exit_code == 0


class ReportReader(PagePlan):
    """Reads the JavaScript-drawn sales report the way a model would: signs in, sets the
    filters by their ids (the page does not reload: the ids from one snapshot still hold),
    pages with the report's own buttons, then writes the best-selling product."""

    def __init__(self, context: dict) -> None:
        self.rows: list[list[str]] = []
        super().__init__(context)

    def _steps(self):
        yield lambda page: "browse goto /login"
        yield lambda page: sign_in(page, self.c["user"])
        yield lambda page: "browse goto /report"
        yield lambda page: " && ".join(
            [
                # the first answer is dropped: the table it shows is the one for the old month
                f"browse select {element_id(page, 'combobox', 'Region')} {shlex.quote(self.c['region'])}"
                " >/dev/null",
                f"browse select {element_id(page, 'combobox', 'Month')} {self.c['month']}",
            ]
        )
        while True:
            page = yield None
            self.rows += _rows(page)
            next_page = re.search(r'\[(\d+)\] button "Next page"( disabled)?', page)
            if next_page.group(2):
                break
            click = f"browse click {next_page.group(1)}"
            yield lambda page, click=click: click
        best = max(self.rows, key=lambda r: _cents(r[4]))[0]
        yield lambda page: f"printf '%s\\n' {shlex.quote(best)} > {self.c['answer_path']}"


def _rows(page: str) -> list[list[str]]:
    rows: list[list[str]] = []
    for line in page.splitlines():
        if re.match(r"\s*\[\d+\] row\b", line):
            rows.append([])
        elif (cell := re.match(r'\s*\[\d+\] cell "(.*)"', line)) and rows:
            rows[-1].append(cell.group(1))
    return [r for r in rows if len(r) == 5]


def _cents(text: str) -> int:
    whole, _, frac = text.lstrip("$").replace(",", "").partition(".")
    return int(whole) * 100 + int(frac)


def test_scripted_agent_reads_a_javascript_report(runtime, tmp_path):
    trial, task, image = built_trial(runtime, tmp_path, "web-reports", Difficulty.MEDIUM)
    context = registry.get("web-reports").draft(random.Random(1), Difficulty.MEDIUM, {}).context
    result = run_episode(runtime, task, image, ReportReader(context), LONG, tmp_path)
    assert result.infra_error is None, result.infra_error
    pages = [m["content"] for m in result.transcript if m["role"] == "user"]
    # The rows exist only once the page's script fetched and drew them: two pages of them.
    assert any("page 2 of 2" in p for p in pages), pages[-1][-3000:]
    assert result.reward == 1.0, result.verifier


@pytest.mark.parametrize("family", BROWSER_FAMILIES)
def test_each_browser_family_is_solved_through_the_browser(runtime, tmp_path, family):
    trial, task, image = built_trial(runtime, tmp_path, family, Difficulty.EASY)
    solve = (trial.path / "solution" / "solve.sh").read_text()
    assert "browse" in solve and "client import" not in solve
    result = run_episode(runtime, task, image, ScriptedPolicy([solve]), LONG, tmp_path)
    assert result.infra_error is None, result.infra_error
    assert result.reward == 1.0, (result.transcript[-1]["content"][-2000:], result.verifier)
