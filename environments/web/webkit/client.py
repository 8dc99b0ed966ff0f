"""A tiny HTTP client for scripts that drive a webkit app (reference solutions, tests):
cookie jar, CSRF token extraction, form posts. Stdlib only."""

from __future__ import annotations

import http.cookiejar
import os
import re
import urllib.error
import urllib.parse
import urllib.request

ORIGIN = os.environ.get("WEBAPP_ORIGIN", "http://127.0.0.1:8000")
_CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')


class Client:
    def __init__(self, origin: str = ORIGIN) -> None:
        self.origin = origin
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = ""

    def get(self, path: str) -> tuple[int, str]:
        return self._open(urllib.request.Request(self.origin + path))

    def post(self, path: str, data: dict) -> tuple[int, str]:
        if not self.csrf:
            self.get("/login")
        body = urllib.parse.urlencode({**data, "csrf_token": self.csrf}, doseq=True).encode()
        return self._open(urllib.request.Request(self.origin + path, data=body))

    def login(self, username: str, password: str) -> None:
        status, page = self.post("/login", {"username": username, "password": password})
        if status != 200 or "Signed in as" not in page:
            raise SystemExit(f"login as {username} failed (status {status})")

    def _open(self, request: urllib.request.Request) -> tuple[int, str]:
        try:
            with self.opener.open(request, timeout=30) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode()
        found = _CSRF.search(text)
        if found:
            self.csrf = found.group(1)
        return status, text
