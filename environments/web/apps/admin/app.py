"""Admin panel: directory accounts, groups with role-based permissions, invitations, and
account status (active / suspended)."""

import re

from flask import redirect, request
from kit import WebApp, bullets, error_lines, esc, search_form, select, table, text_inputs, where

SCHEMA = """
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY, username TEXT UNIQUE NOT NULL, email TEXT UNIQUE NOT NULL,
    full_name TEXT NOT NULL, department TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'active',
    last_login TEXT
);
CREATE TABLE groups (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, description TEXT NOT NULL);
CREATE TABLE memberships (
    account_id INTEGER NOT NULL REFERENCES accounts(id), group_id INTEGER NOT NULL
    REFERENCES groups(id), PRIMARY KEY (account_id, group_id)
);
CREATE TABLE permissions (code TEXT PRIMARY KEY, description TEXT NOT NULL);
CREATE TABLE grants (
    group_id INTEGER NOT NULL REFERENCES groups(id), code TEXT NOT NULL REFERENCES
    permissions(code), PRIMARY KEY (group_id, code)
);
CREATE TABLE invitations (
    id INTEGER PRIMARY KEY, email TEXT NOT NULL, group_id INTEGER REFERENCES groups(id),
    sent TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending'
);
"""
USERNAME = re.compile(r"^[a-z][a-z0-9.]{2,19}$")
EMAIL = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")

web = WebApp(
    "Admin",
    schema=SCHEMA,
    per_page=10,
    nav=[
        ("Accounts", "/accounts"),
        ("New account", "/accounts/new"),
        ("Groups", "/groups"),
        ("Invitations", "/invitations"),
    ],
)
app = web.app
web.home(login=True)
admin_only = web.login_required(role="admin")


def departments() -> list[str]:
    return web.column("SELECT DISTINCT department FROM accounts ORDER BY department")


@app.route("/accounts")
@web.login_required
def accounts():
    q = request.args.get("q", "").strip()
    dept = request.args.get("department", "")
    status = request.args.get("status", "")
    before = request.args.get("inactive_since", "").strip()
    sql, args = where(
        "SELECT * FROM accounts WHERE 1=1",
        (q, "(username LIKE ? OR full_name LIKE ? OR email LIKE ?)", (f"%{q}%",) * 3),
        (dept, "department = ?", (dept,)),
        (status, "status = ?", (status,)),
        (before, "(last_login IS NULL OR last_login < ?)", (before,)),
    )
    rows, pager = web.paginate(sql + " ORDER BY username", args)
    body = (
        search_form(
            "/accounts",
            "Search",
            q,
            select("department", "Department", [("", "All"), *departments()], dept),
            select("status", "Status", [("", "All"), "active", "suspended"], status),
            '<label for="inactive_since">Last login before (YYYY-MM-DD)</label> '
            f'<input id="inactive_since" name="inactive_since" value="{esc(before)}">',
        )
        + table(
            ("Username", "Name", "Department", "Status", "Last login"),
            (
                (
                    f'<a href="/accounts/{r["id"]}">{esc(r["username"])}</a>',
                    esc(r["full_name"]),
                    esc(r["department"]),
                    esc(r["status"]),
                    esc(r["last_login"] or "never"),
                )
                for r in rows
            ),
        )
        + pager
    )
    return web.page("Accounts", body)


def group_boxes(checked: set[int]) -> str:
    return "".join(
        f'<input type="checkbox" id="group-{g["id"]}" name="groups" value="{g["id"]}"'
        f'{" checked" if g["id"] in checked else ""}> <label for="group-{g["id"]}">'
        f"{esc(g['name'])}</label><br>"
        for g in web.query("SELECT * FROM groups ORDER BY name")
    )


@app.route("/accounts/new", methods=["GET", "POST"])
@admin_only
def new_account():
    form = request.form if request.method == "POST" else {}
    default = web.one("SELECT id FROM groups WHERE name = 'Everyone'")
    checked = (
        {int(g) for g in request.form.getlist("groups") if g.isdigit()}
        if request.method == "POST"
        else {default["id"]}
        if default
        else set()
    )
    errors = []
    if request.method == "POST":
        username = form.get("username", "").strip()
        email = form.get("email", "").strip()
        if not USERNAME.match(username):
            errors.append(
                "Username must be 3-20 characters: lowercase letters, digits and dots, "
                "starting with a letter."
            )
        elif web.one("SELECT 1 FROM accounts WHERE username = ?", (username,)):
            errors.append(f"Username {username} is already taken.")
        if not EMAIL.match(email):
            errors.append("Enter a valid email address (name@example.com).")
        elif web.one("SELECT 1 FROM accounts WHERE email = ?", (email,)):
            errors.append(f"Email {email} is already in use.")
        if not form.get("full_name", "").strip():
            errors.append("Full name is required.")
        if not form.get("department", "").strip():
            errors.append("Department is required.")
        known = set(web.column("SELECT id FROM groups"))
        if not checked <= known:
            errors.append("Unknown group.")
        if not errors:
            db = web.db()
            with db:
                cursor = db.execute(
                    "INSERT INTO accounts (username, email, full_name, department, status) "
                    "VALUES (?, ?, ?, ?, 'active')",
                    (username, email, form["full_name"].strip(), form["department"].strip()),
                )
                for group_id in sorted(checked):
                    db.execute(
                        "INSERT INTO memberships VALUES (?, ?)", (cursor.lastrowid, group_id)
                    )
                web.audit(
                    "create_account",
                    account_id=cursor.lastrowid,
                    username=username,
                    groups=sorted(checked),
                )
            web.flash(f"Account {username} created.")
            return redirect(f"/accounts/{cursor.lastrowid}")
    fields = text_inputs(
        form,
        (
            ("username", "Username"),
            ("email", "Email"),
            ("full_name", "Full name"),
            ("department", "Department"),
        ),
    )
    body = (
        error_lines(errors)
        + f'<form method="post" action="/accounts/new">{web.csrf_field()}{fields}'
        f"<p>Groups:</p>{group_boxes(checked)}"
        '<button type="submit">Create account</button></form>'
    )
    return web.page("New account", body, status=400 if errors else 200)


@app.route("/accounts/<int:account_id>")
@web.login_required
def account(account_id: int):
    row = web.one_or_404("SELECT * FROM accounts WHERE id = ?", (account_id,), "account")
    groups = web.query(
        "SELECT g.* FROM groups g JOIN memberships m ON m.group_id = g.id "
        "WHERE m.account_id = ? ORDER BY g.name",
        (account_id,),
    )
    target, label = (
        ("suspended", "Suspend account")
        if row["status"] == "active"
        else ("active", "Reactivate account")
    )
    body = (
        f"<p>Name: {esc(row['full_name'])}<br>Email: {esc(row['email'])}<br>"
        f"Department: {esc(row['department'])}<br>Status: {esc(row['status'])}<br>"
        f"Last login: {esc(row['last_login'] or 'never')}</p>"
        "<p>Groups: "
        + (", ".join(f'<a href="/groups/{g["id"]}">{esc(g["name"])}</a>' for g in groups) or "none")
        + "</p>"
        f'<form method="post" action="/accounts/{account_id}/status">{web.csrf_field()}'
        f'<input type="hidden" name="status" value="{target}">'
        f'<button type="submit">{label}</button></form>'
        f'<h2>Group membership</h2><form method="post" action="/accounts/{account_id}/groups">'
        f"{web.csrf_field()}{group_boxes({g['id'] for g in groups})}"
        '<button type="submit">Save groups</button></form>'
    )
    return web.page(f"Account {row['username']}", body)


@web.action("/accounts/<int:account_id>/status", "/accounts/{account_id}", role="admin")
def account_status(account_id: int):
    row = web.one("SELECT * FROM accounts WHERE id = ?", (account_id,))
    status = request.form.get("status", "")
    if row is None or status not in ("active", "suspended"):
        web.flash("Unknown account or status.", "error")
    elif row["status"] == status:
        web.flash(f"{row['username']} is already {status}.", "error")
    else:
        web.execute(
            "set_status",
            "UPDATE accounts SET status = ? WHERE id = ?",
            (status, account_id),
            account_id=account_id,
            status=status,
        )
        web.flash(f"Account {row['username']} is now {status}.")


@web.action("/accounts/<int:account_id>/groups", "/accounts/{account_id}", role="admin")
def account_groups(account_id: int):
    wanted = sorted({int(g) for g in request.form.getlist("groups") if g.isdigit()})
    web.change(
        "set_groups",
        [("DELETE FROM memberships WHERE account_id = ?", (account_id,))]
        + [("INSERT INTO memberships VALUES (?, ?)", (account_id, g)) for g in wanted],
        account_id=account_id,
        groups=wanted,
    )
    web.flash("Groups saved.")


@app.route("/groups")
@web.login_required
def groups():
    rows = web.query(
        "SELECT g.*, (SELECT COUNT(*) FROM memberships m WHERE m.group_id = g.id) AS n "
        "FROM groups g ORDER BY g.name"
    )
    body = bullets(
        f'<a href="/groups/{r["id"]}">{esc(r["name"])}</a> - {esc(r["description"])} '
        f"({r['n']} members)"
        for r in rows
    )
    return web.page("Groups", body)


@app.route("/groups/<int:group_id>")
@web.login_required
def group(group_id: int):
    row = web.one_or_404("SELECT * FROM groups WHERE id = ?", (group_id,), "group")
    have = set(web.column("SELECT code FROM grants WHERE group_id = ?", (group_id,)))
    perms = web.query("SELECT * FROM permissions ORDER BY code")
    members = web.query(
        "SELECT a.* FROM accounts a JOIN memberships m ON m.account_id = a.id "
        "WHERE m.group_id = ? ORDER BY a.username",
        (group_id,),
    )
    boxes = "".join(
        f'<input type="checkbox" id="perm-{esc(p["code"])}" name="codes" value="{esc(p["code"])}"'
        f'{" checked" if p["code"] in have else ""}> <label for="perm-{esc(p["code"])}">'
        f"{esc(p['code'])} - {esc(p['description'])}</label><br>"
        for p in perms
    )
    body = (
        f"<p>{esc(row['description'])}</p><h2>Permissions</h2>"
        f'<form method="post" action="/groups/{group_id}/permissions">{web.csrf_field()}{boxes}'
        '<button type="submit">Save permissions</button></form>'
        f"<h2>Members ({len(members)})</h2>"
        + bullets(
            f'<a href="/accounts/{m["id"]}">{esc(m["username"])}</a> ({esc(m["status"])})'
            for m in members
        )
    )
    return web.page(f"Group {row['name']}", body)


@web.action("/groups/<int:group_id>/permissions", "/groups/{group_id}", role="admin")
def group_permissions(group_id: int):
    known = set(web.column("SELECT code FROM permissions"))
    wanted = sorted(set(request.form.getlist("codes")) & known)
    before = sorted(web.column("SELECT code FROM grants WHERE group_id = ?", (group_id,)))
    web.change(
        "set_permissions",
        [("DELETE FROM grants WHERE group_id = ?", (group_id,))]
        + [("INSERT INTO grants VALUES (?, ?)", (group_id, c)) for c in wanted],
        group_id=group_id,
        granted=sorted(set(wanted) - set(before)),
        revoked=sorted(set(before) - set(wanted)),
    )
    web.flash("Permissions saved.")


@app.route("/invitations")
@web.login_required
def invitations():
    rows, pager = web.paginate(
        "SELECT i.*, g.name AS group_name FROM invitations i LEFT JOIN groups g "
        "ON g.id = i.group_id ORDER BY i.sent DESC, i.id DESC"
    )
    body = (
        table(
            ("Email", "Group", "Sent", "Status", ""),
            (
                (
                    esc(r["email"]),
                    esc(r["group_name"] or "-"),
                    esc(r["sent"]),
                    esc(r["status"]),
                    f'<form method="post" action="/invitations/{r["id"]}/revoke">'
                    f'{web.csrf_field()}<button type="submit">Revoke invitation for '
                    f"{esc(r['email'])}</button></form>"
                    if r["status"] == "pending"
                    else "",
                )
                for r in rows
            ),
        )
        + pager
    )
    return web.page("Invitations", body)


@web.action("/invitations/<int:invitation_id>/revoke", "/invitations", role="admin")
def revoke(invitation_id: int):
    row = web.one("SELECT * FROM invitations WHERE id = ?", (invitation_id,))
    if row is None or row["status"] != "pending":
        web.flash("No pending invitation with that id.", "error")
    else:
        web.execute(
            "revoke_invitation",
            "UPDATE invitations SET status = 'revoked' WHERE id = ?",
            (invitation_id,),
            invitation_id=invitation_id,
            email=row["email"],
        )
        web.flash(f"Invitation for {row['email']} revoked.")


if __name__ == "__main__":
    web.main()
