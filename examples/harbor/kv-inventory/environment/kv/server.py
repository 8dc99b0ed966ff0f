"""A key-value store over HTTP: GET/PUT /keys/<key>, GET /health. State lives in memory."""

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

STORE = {"config:multiplier": os.environ.get("KV_MULTIPLIER", "1")}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def _reply(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _key(self):
        if not self.path.startswith("/keys/") or len(self.path) <= len("/keys/"):
            return None
        return unquote(self.path[len("/keys/") :])

    def do_GET(self):
        if self.path == "/health":
            return self._reply(200, b"ok")
        key = self._key()
        with LOCK:
            value = STORE.get(key) if key else None
        if value is None:
            return self._reply(404, b"not found")
        return self._reply(200, value.encode())

    def do_PUT(self):
        key = self._key()
        if key is None:
            return self._reply(400, b"bad key")
        length = int(self.headers.get("Content-Length") or 0)
        value = self.rfile.read(min(length, 1 << 16)).decode("utf-8", "replace").strip()
        with LOCK:
            STORE[key] = value
        return self._reply(204)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("0.0.0.0", 8080), Handler).serve_forever()
