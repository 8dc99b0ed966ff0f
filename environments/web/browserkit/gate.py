"""Serve a webkit app for the browser only: every request must carry the browser key.

``python3 gate.py --key-file F --user webapp /srv/app/app.py`` reads the key (as root), becomes
the app's user, loads the app module (its Flask object ``app``) and serves it on the app's
port, refusing any request without the key in the ``X-Browser-Key`` header with 403. Only
the browser service adds that header (``browsed.py``), and only root and it can read the key:
``curl`` or Python from the agent's shell reach a refusal, not the app. ``/health`` stays open
(it says only that the app is up), for the healthcheck and the reset script.
"""

from __future__ import annotations

import argparse
import hmac
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

KEY_ENVIRON = "HTTP_X_BROWSER_KEY"
OPEN_PATHS = ("/health",)
REFUSAL = (
    b"This app answers only the browser. Use the `browse` command "
    b"(plain HTTP from the shell is refused).\n"
)


def gated(wsgi_app: Any, key: str) -> Any:
    """``wsgi_app`` answering only requests that carry ``key`` (and the open paths)."""
    expected = key.encode()

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        sent = environ.get(KEY_ENVIRON, "").encode("latin-1", "replace")
        if environ.get("PATH_INFO") in OPEN_PATHS or hmac.compare_digest(sent, expected):
            return wsgi_app(environ, start_response)
        start_response(
            "403 FORBIDDEN",
            [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(REFUSAL)))],
        )
        return [REFUSAL]

    return app


def load_app(path: Path) -> Any:
    """The Flask object ``app`` of the app module at ``path``."""
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("webtask_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("app", type=Path)
    parser.add_argument("--key-file", default="/run/browserkey/key")
    parser.add_argument("--user", default="")
    parser.add_argument("--port", type=int, default=int(os.environ.get("WEBAPP_PORT", "8000")))
    args = parser.parse_args()
    key = Path(args.key_file).read_text().strip()
    if not key:
        raise SystemExit("gate: the browser key is empty")
    from kit import drop_privileges  # the webkit's; PYTHONPATH=/opt/webkit

    if args.user:
        drop_privileges(args.user)
    flask_app = load_app(args.app.resolve())
    flask_app.wsgi_app = gated(flask_app.wsgi_app, key)
    flask_app.run(host="127.0.0.1", port=args.port, threaded=True, use_reloader=False)


if __name__ == "__main__":
    main()
