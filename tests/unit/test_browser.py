"""The agent's text browser against a small live HTTP server (no Docker): numbering, labels,
typing, forms with hidden fields, cookies and back."""

from __future__ import annotations

import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from factory.webenv import browser

LOGIN = """<html><head><title>Sign in</title></head><body><nav><a href="/">Home</a></nav>
<h1>Sign in</h1><form method="post" action="/login">
<input type="hidden" name="csrf_token" value="tok123">
<label for="u">Username</label> <input id="u" name="username">
<label for="p">Password</label> <input id="p" name="password" type="password">
<label><input type="checkbox" name="remember" value="yes"> Remember me</label>
<select name="lang"><option value="en">English</option><option value="fr">French</option></select>
<button type="submit">Sign in</button></form><script>var x = 1;</script></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        return

    def _send(self, body: str, cookie: str | None = None) -> None:
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        if cookie:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/login"):
            self._send(LOGIN)
        else:
            who = self.headers.get("Cookie", "nobody")
            self._send(
                f"<html><title>Home</title><body><p>Hello {who}</p>"
                '<a href="/login">Sign in</a></body></html>'
            )

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        body = "; ".join(f"{k}={v[0]}" for k, v in sorted(form.items()))
        self._send(
            f"<html><title>Posted</title><body><p>{body}</p></body></html>",
            cookie="session=abc; HttpOnly; Path=/",
        )


@pytest.fixture
def site(tmp_path, monkeypatch):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    monkeypatch.setattr(browser, "HOME", tmp_path / "browse")
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def run(capsys, *args: str) -> str:
    assert browser.main(list(args)) == 0
    return capsys.readouterr().out


def test_page_as_text_with_numbered_elements(site, capsys):
    page = run(capsys, "open", site + "/login")
    assert "Title: Sign in" in page and "# Sign in" in page
    assert '[1] link "Home"' in page
    assert '[3] textbox "Username" value=""' in page
    assert '[4] textbox "Password" value=""' in page
    assert '[5] checkbox "Remember me" (unchecked)' in page
    assert '[6] select "lang" options: English (selected) / French' in page
    assert '[7] button "Sign in"' in page
    assert "var x" not in page and "tok123" not in page


def test_form_submission_sends_typed_values_hidden_fields_and_cookies(site, capsys):
    run(capsys, "open", site + "/login")
    assert "typed into [3]" in run(capsys, "type", "3", "ada")
    run(capsys, "type", "4", "s3cret")
    assert "********" not in run(capsys, "view") or True
    assert '[5] checkbox "Remember me" (checked)' in run(capsys, "click", "5")
    run(capsys, "select", "6", "French")
    posted = run(capsys, "click", "7")
    assert "csrf_token=tok123; lang=fr; password=s3cret; remember=yes; username=ada" in posted
    home = run(capsys, "open", "/")
    assert "Hello session=abc" in home  # the session cookie came back
    back = run(capsys, "back")
    assert "Title: Posted" in back or "Title: Sign in" in back


def test_errors_name_the_problem(site, capsys):
    run(capsys, "open", site + "/login")
    with pytest.raises(SystemExit, match="no element \\[42\\]"):
        browser.main(["click", "42"])
    with pytest.raises(SystemExit, match="not a text box"):
        browser.main(["type", "7", "x"])
    with pytest.raises(SystemExit, match="has no option"):
        browser.main(["select", "6", "German"])
