"""The app skeleton every web task shares: Flask + sqlite, sessions, CSRF, pagination, audit.

An app module (``/srv/app/app.py``) does::

    from kit import WebApp
    web = WebApp("Shop", schema=SCHEMA, nav=[("Products", "/products"), ("Cart", "/cart")])
    app = web.app

    @app.route("/products")
    def products(): ...
        return web.page("Products", "<ul>...</ul>")

    if __name__ == "__main__":
        web.main()

``python3 app.py --init`` creates the database from ``SCHEMA`` plus ``seed.json`` (table ->
rows) next to the app, and keeps a pristine copy for resets. Every state change goes through
:meth:`WebApp.audit`, so a verifier can tell changes made through the app from edits to the
database behind its back.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import math
import os
import secrets
import shutil
import sqlite3
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask, abort, g, make_response, redirect, request, session

DB_PATH = Path(os.environ.get("WEBAPP_DB", "/srv/app/data/app.db"))
PORT = int(os.environ.get("WEBAPP_PORT", "8000"))

BASE_SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY, username TEXT UNIQUE NOT NULL, password_hash TEXT NOT NULL,
    display_name TEXT NOT NULL, role TEXT NOT NULL DEFAULT 'user'
);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY, username TEXT, action TEXT NOT NULL, data TEXT NOT NULL
);
"""

STYLE = (
    "body{font-family:sans-serif;margin:0}nav{background:#234;padding:8px}nav a{color:#fff;"
    "margin-right:12px}main{padding:12px}.flash{padding:6px;border:1px solid #999}"
    ".error{background:#fdd}.ok{background:#dfd}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:3px 6px}"
)


def hash_password(password: str, salt: str = "") -> str:
    salt = salt or secrets.token_hex(8)
    digest = hashlib.sha256((salt + password).encode()).hexdigest()
    return f"{salt}${digest}"


def check_password(password: str, stored: str) -> bool:
    salt, _, _ = stored.partition("$")
    return secrets.compare_digest(hash_password(password, salt), stored)


def esc(value: Any) -> str:
    """HTML-escape anything (None -> '')."""
    return html.escape("" if value is None else str(value))


def error_lines(errors: Iterable[str]) -> str:
    """A form's errors, one error paragraph each (what a page shows above the form)."""
    return "".join(f'<p class="flash error">{esc(e)}</p>' for e in errors)


def text_inputs(form: Mapping[str, str], fields: Iterable[tuple[str, str]]) -> str:
    """A labelled text input for each (name, label) of ``fields``, filled in from ``form``."""
    return "".join(
        f'<label for="{f}">{label}</label> <input id="{f}" name="{f}" '
        f'value="{esc(form.get(f, ""))}"><br>'
        for f, label in fields
    )


def options(values: Iterable[Any], chosen: Any, blank: str | None = None) -> str:
    """``<option>``s of ``values`` (each a value or a (value, text) pair), ``chosen`` selected
    (compared as text); first an empty-valued ``blank`` option when given."""
    out = f'<option value="">{esc(blank)}</option>' if blank is not None else ""
    for value in values:
        v, text = value if isinstance(value, tuple) else (value, value)
        selected = " selected" if str(v) == str(chosen) else ""
        out += f'<option value="{esc(v)}"{selected}>{esc(text)}</option>'
    return out


def select(
    name: str, label: str, values: Iterable[Any], chosen: Any, blank: str | None = None
) -> str:
    """A labelled ``<select>`` called ``name`` with :func:`options`."""
    return (
        f'<label for="{name}">{label}</label> <select id="{name}" name="{name}">'
        f"{options(values, chosen, blank)}</select>"
    )


def search_form(action: str, label: str, q: str, *controls: str, button: str = "Filter") -> str:
    """A GET form to ``action`` that narrows a list: a text box ``q`` labelled ``label`` and
    holding ``q``, then ``controls`` (HTML: selects, inputs), then a ``button`` to submit."""
    search = f'<label for="q">{label}</label> <input id="q" name="q" value="{esc(q)}">'
    submit = f'<button type="submit">{button}</button>'
    return f'<form method="get" action="{action}">{" ".join((search, *controls, submit))}</form>'


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    """A ``<table>``: a header row of ``headers``, then one row of cells (HTML) per row."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def bullets(items: Iterable[str]) -> str:
    """A ``<ul>`` with one ``<li>`` per item (HTML)."""
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def where(sql: str, *filters: tuple[Any, str, tuple]) -> tuple[str, tuple]:
    """``sql`` (ending in a WHERE clause) narrowed by `` AND condition`` for each
    (wanted, condition, args) filter that is wanted, and the query's arguments."""
    args: list[Any] = []
    for wanted, condition, condition_args in filters:
        if wanted:
            sql += f" AND {condition}"
            args += condition_args
    return sql, tuple(args)


class WebApp:
    """One app: the Flask object plus the shared routes and helpers."""

    def __init__(
        self, title: str, *, schema: str, nav: list[tuple[str, str]], per_page: int = 10
    ) -> None:
        self.title = title
        self.schema = schema
        self.nav = nav
        self.per_page = per_page
        self.app = Flask(title)
        self.app.secret_key = self._secret()
        self.app.teardown_appcontext(self._close_db)
        self.app.before_request(self._check_csrf)
        self.app.add_url_rule("/health", "health", lambda: {"ok": True, "app": title})
        self.app.add_url_rule("/login", "login", self._login, methods=["GET", "POST"])
        self.app.add_url_rule("/logout", "logout", self._logout, methods=["POST"])
        self.app.register_error_handler(
            404, lambda _e: self.page("Not found", "<p>There is no such page.</p>", status=404)
        )
        self.app.register_error_handler(
            403, lambda _e: self.page("Forbidden", "<p>Your account may not do that.</p>", 403)
        )

    # --- database -------------------------------------------------------------------------
    @staticmethod
    def _secret() -> str:
        path = DB_PATH.parent / "secret_key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_hex(16))
        return path.read_text().strip()

    def db(self) -> sqlite3.Connection:
        if "db" not in g:
            g.db = sqlite3.connect(DB_PATH, timeout=10)
            g.db.row_factory = sqlite3.Row
            g.db.execute("PRAGMA foreign_keys = ON")
        return g.db

    @staticmethod
    def _close_db(_exc: BaseException | None) -> None:
        db = g.pop("db", None)
        if db is not None:
            db.close()

    def query(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        return self.db().execute(sql, args).fetchall()

    def column(self, sql: str, args: tuple = ()) -> list[Any]:
        """The first column of every row ``sql`` selects, as a list."""
        return [row[0] for row in self.query(sql, args)]

    def one(self, sql: str, args: tuple = ()) -> sqlite3.Row | None:
        return self.db().execute(sql, args).fetchone()

    def one_or_404(self, sql: str, args: tuple, what: str) -> sqlite3.Row:
        """The row ``sql`` selects; when there is none, the request ends here with the 404 page
        "No such ``what``."."""
        row = self.one(sql, args)
        if row is None:
            abort(make_response(self.page("Not found", f"<p>No such {what}.</p>", status=404)))
        return row

    def change(self, action: str, sql_statements: list[tuple[str, tuple]], **data: Any) -> None:
        """Run statements in one transaction and record them in the audit trail."""
        db = self.db()
        with db:
            for sql, args in sql_statements:
                db.execute(sql, args)
            self.audit(action, **data)

    def execute(self, action: str, sql: str, args: tuple, /, **data: Any) -> None:
        """:meth:`change` with one statement."""
        self.change(action, [(sql, args)], **data)

    def audit(self, action: str, **data: Any) -> None:
        user = self.current_user()
        self.db().execute(
            "INSERT INTO audit (username, action, data) VALUES (?, ?, ?)",
            (user["username"] if user else None, action, json.dumps(data, sort_keys=True)),
        )

    def init_db(self, seed_path: Path) -> None:
        """Create the database from the schema and the seed; keep a pristine copy."""
        DB_PATH.parent.mkdir(parents=True, exist_ok=True)
        if DB_PATH.exists():
            DB_PATH.unlink()
        seed = json.loads(seed_path.read_text()) if seed_path.exists() else {}
        db = sqlite3.connect(DB_PATH)
        db.executescript(BASE_SCHEMA + self.schema)
        for user in seed.pop("users", []):
            user = dict(user)
            user["password_hash"] = hash_password(user.pop("password"), "seed")
            _insert(db, "users", user)
        for table, rows in seed.items():
            for row in rows:
                _insert(db, table, row)
        db.commit()
        db.close()
        shutil.copyfile(DB_PATH, DB_PATH.parent / "pristine.db")

    # --- sessions and CSRF ----------------------------------------------------------------
    def current_user(self) -> sqlite3.Row | None:
        user_id = session.get("user_id")
        if user_id is None:
            return None
        if "user" not in g:
            g.user = self.one("SELECT * FROM users WHERE id = ?", (user_id,))
        return g.user

    def csrf_token(self) -> str:
        if "csrf" not in session:
            session["csrf"] = secrets.token_hex(16)
        return session["csrf"]

    def csrf_field(self) -> str:
        return f'<input type="hidden" name="csrf_token" value="{self.csrf_token()}">'

    def _check_csrf(self) -> Any:
        if request.method == "POST":
            sent = request.form.get("csrf_token", "")
            if not sent or not secrets.compare_digest(sent, session.get("csrf", "")):
                return self.page(
                    "Bad request",
                    "<p>The form's CSRF token is missing or stale. Reload the "
                    "page and submit the form again.</p>",
                    status=400,
                )
        return None

    def login_required(self, view: Any = None, *, role: str | None = None) -> Any:
        """Decorator: redirect to /login unless signed in (and of ``role`` when given)."""
        if view is None:
            return functools.partial(self.login_required, role=role)

        @functools.wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            user = self.current_user()
            if user is None:
                return redirect(f"/login?next={request.full_path.rstrip('?')}")
            if role and user["role"] != role:
                abort(403)
            return view(*args, **kwargs)

        return wrapped

    def action(self, rule: str, back: str, *, role: str | None = None) -> Any:
        """Decorator: a POST-only route for signed-in users (of ``role`` when given). The view
        makes its change and flashes; the answer is then a redirect to ``back`` formatted with
        the route's arguments, unless the view returns an answer of its own."""

        def decorate(view: Any) -> Any:
            @functools.wraps(view)
            def answer(**kwargs: Any) -> Any:
                response = view(**kwargs)
                return redirect(back.format(**kwargs)) if response is None else response

            self.app.add_url_rule(
                rule, view.__name__, self.login_required(answer, role=role), methods=["POST"]
            )
            return view

        return decorate

    def home(self, *, login: bool = False) -> None:
        """Route ``/`` to a redirect to the first page of the menu (for signed-in users only
        when ``login``)."""
        view = lambda: redirect(self.nav[0][1])  # noqa: E731
        self.app.add_url_rule("/", "home", self.login_required(view) if login else view)

    def _login(self) -> Any:
        error = ""
        if request.method == "POST":
            user = self.one(
                "SELECT * FROM users WHERE username = ?", (request.form.get("username", ""),)
            )
            if user and check_password(request.form.get("password", ""), user["password_hash"]):
                session.clear()
                session["user_id"] = user["id"]
                home = self.nav[0][1] if self.nav else "/"
                target = request.args.get("next") or home
                return redirect(target if target.startswith("/") else home)
            error = "Wrong username or password."
        body = (
            (f'<p class="flash error">{error}</p>' if error else "")
            + f'<form method="post" action="/login{_next_suffix()}">{self.csrf_field()}'
            '<label for="username">Username</label> <input id="username" name="username"><br>'
            '<label for="password">Password</label> '
            '<input id="password" name="password" type="password"><br>'
            '<button type="submit">Sign in</button></form>'
        )
        return self.page("Sign in", body, status=401 if error else 200)

    def _logout(self) -> Any:
        session.clear()
        return redirect("/login")

    # --- pages ----------------------------------------------------------------------------
    def flash(self, message: str, kind: str = "ok") -> None:
        session.setdefault("flashes", []).append([kind, message])
        session.modified = True

    def page(self, heading: str, body: str, status: int = 200) -> Any:
        user = self.current_user()
        links = "".join(f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in self.nav)
        if user:
            links += (
                f"<span>Signed in as {esc(user['display_name'])}</span> "
                f'<form method="post" action="/logout" style="display:inline">'
                f'{self.csrf_field()}<button type="submit">Sign out</button></form>'
            )
        else:
            links += '<a href="/login">Sign in</a>'
        flashes = "".join(
            f'<p class="flash {esc(kind)}">{esc(text)}</p>'
            for kind, text in session.pop("flashes", [])
        )
        document = (
            f"<!doctype html><html><head><title>{esc(heading)} - {esc(self.title)}</title>"
            f"<style>{STYLE}</style></head><body><nav>{links}</nav><main>"
            f"<h1>{esc(heading)}</h1>{flashes}{body}</main></body></html>"
        )
        return document, status

    def paginate(
        self, sql: str, args: tuple = (), *, per_page: int | None = None
    ) -> tuple[list[sqlite3.Row], str]:
        """Rows of the requested ``?page=N`` and the pager's HTML (links keep other params)."""
        per_page = per_page or self.per_page
        total = self.one(f"SELECT COUNT(*) AS n FROM ({sql})", args)["n"]
        pages = max(1, math.ceil(total / per_page))
        try:
            number = min(max(1, int(request.args.get("page", "1"))), pages)
        except ValueError:
            number = 1
        rows = self.query(f"{sql} LIMIT ? OFFSET ?", (*args, per_page, (number - 1) * per_page))
        params = {k: v for k, v in request.args.items() if k != "page"}

        def link(n: int, label: str) -> str:
            query = "&".join(f"{esc(k)}={esc(v)}" for k, v in {**params, "page": n}.items())
            return f'<a href="{esc(request.path)}?{query}">{label}</a>'

        parts = [f"Page {number} of {pages}"]
        if number > 1:
            parts.insert(0, link(number - 1, "Previous"))
        if number < pages:
            parts.append(link(number + 1, "Next"))
        return rows, f'<p class="pager">{" ".join(parts)}</p>'

    # --- running --------------------------------------------------------------------------
    def main(self) -> None:
        """``--init``: create the database (build time); else serve, as ``--user NAME`` when
        given (started as root, the app then runs as that user: its data folder is that
        user's alone)."""
        if "--init" in sys.argv:
            self.init_db(Path(sys.argv[0]).resolve().parent / "seed.json")
            return
        if "--user" in sys.argv[:-1]:
            drop_privileges(sys.argv[sys.argv.index("--user") + 1])
        self.app.run(host="127.0.0.1", port=PORT, threaded=True, use_reloader=False)


def drop_privileges(user: str) -> None:
    """Become ``user`` (from root), with only its own group; a no-op when already ``user``."""
    import pwd

    entry = pwd.getpwnam(user)
    if os.geteuid() == entry.pw_uid:
        return
    if os.geteuid() != 0:
        raise SystemExit(f"webkit: --user {user} needs to be started as root")
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
    os.environ["HOME"] = entry.pw_dir


def _next_suffix() -> str:
    target = request.args.get("next", "")
    return f"?next={esc(target)}" if target else ""


def _insert(db: sqlite3.Connection, table: str, row: dict) -> None:
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in row.values()]
    db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)
