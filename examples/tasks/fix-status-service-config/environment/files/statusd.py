#!/usr/bin/env python3
"""statusd: a tiny HTTP status service.

Configuration: an INI file, /etc/statusd/statusd.ini (or the path in $STATUSD_CONFIG).

[server]
bind       address to listen on (default 127.0.0.1)
port       TCP port (required)
log_level  one of: debug, info, warning, error (default info)

[service]
name          service name reported by /status (default statusd)
message_file  file whose contents (stripped) /status reports as "message" (required)

[auth]
token_file    if set, /status requires the header "Authorization: Bearer <token>", where
              <token> is the contents of this file (stripped); otherwise /status is public

Endpoints:
GET /health -> 200 "ok"
GET /status -> 200 {"service": <name>, "message": <message>}; 401 without a valid token
"""

from __future__ import annotations

import configparser
import hmac
import json
import logging
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR}


def load_config(path: str) -> dict:
    parser = configparser.ConfigParser()
    if not parser.read(path):
        sys.exit(f"statusd: cannot read config file {path}")
    try:
        port = parser.getint("server", "port")
    except (configparser.Error, ValueError) as exc:
        sys.exit(f"statusd: [server] port: {exc}")
    level = parser.get("server", "log_level", fallback="info").strip().lower()
    if level not in LEVELS:
        sys.exit(f"statusd: [server] log_level: unknown level {level!r}")
    message_file = parser.get("service", "message_file", fallback="").strip()
    if not message_file:
        sys.exit("statusd: [service] message_file is required")
    token = None
    token_file = parser.get("auth", "token_file", fallback="").strip()
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as fh:
                token = fh.read().strip()
        except OSError as exc:
            sys.exit(f"statusd: [auth] token_file: {exc}")
        if not token:
            sys.exit("statusd: [auth] token_file is empty")
    return {
        "bind": parser.get("server", "bind", fallback="127.0.0.1").strip(),
        "port": port,
        "level": LEVELS[level],
        "name": parser.get("service", "name", fallback="statusd").strip(),
        "message_file": message_file,
        "token": token,
    }


def make_handler(cfg: dict):
    class Handler(BaseHTTPRequestHandler):
        server_version = "statusd/1.3"

        def _send(self, code: int, body: str, ctype: str = "text/plain") -> None:
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/health":
                self._send(200, "ok")
                return
            if self.path != "/status":
                self._send(404, "not found")
                return
            if cfg["token"] is not None:
                given = self.headers.get("Authorization", "")
                if not hmac.compare_digest(given, f"Bearer {cfg['token']}"):
                    self._send(401, "unauthorized")
                    return
            try:
                with open(cfg["message_file"], encoding="utf-8") as fh:
                    message = fh.read().strip()
            except OSError:
                logging.error("cannot read message file %s", cfg["message_file"])
                self._send(500, "message file unavailable")
                return
            body = json.dumps({"service": cfg["name"], "message": message})
            self._send(200, body, "application/json")

        def log_message(self, fmt: str, *args) -> None:
            logging.info("%s %s", self.address_string(), fmt % args)

    return Handler


def main() -> None:
    cfg = load_config(os.environ.get("STATUSD_CONFIG", "/etc/statusd/statusd.ini"))
    logging.basicConfig(level=cfg["level"], format="statusd %(levelname)s %(message)s")
    server = ThreadingHTTPServer((cfg["bind"], cfg["port"]), make_handler(cfg))
    logging.info("listening on %s:%d", cfg["bind"], cfg["port"])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
