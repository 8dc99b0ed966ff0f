"""Tracker: projects, issues (status, priority, assignee, labels), comments, search and filters
with pages, issue creation with validation, and updates that need a comment to close."""

from flask import abort, redirect, request
from kit import WebApp, error_lines, esc, search_form, select, table, where

SCHEMA = """
CREATE TABLE projects (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, name TEXT NOT NULL);
CREATE TABLE issues (
    id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
    title TEXT NOT NULL, description TEXT NOT NULL, status TEXT NOT NULL, priority TEXT NOT NULL,
    assignee_id INTEGER REFERENCES users(id), reporter_id INTEGER NOT NULL REFERENCES users(id)
);
CREATE TABLE labels (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
CREATE TABLE issue_labels (
    issue_id INTEGER NOT NULL REFERENCES issues(id), label_id INTEGER NOT NULL REFERENCES labels(id),
    PRIMARY KEY (issue_id, label_id)
);
CREATE TABLE issue_comments (
    id INTEGER PRIMARY KEY, issue_id INTEGER NOT NULL REFERENCES issues(id),
    user_id INTEGER NOT NULL REFERENCES users(id), body TEXT NOT NULL
);
"""

web = WebApp(
    "Tracker",
    schema=SCHEMA,
    per_page=10,
    nav=[
        ("Issues", "/issues"),
        ("New issue", "/issues/new"),
    ],
)
app = web.app
web.home()
STATUSES = ("open", "in_progress", "closed")
PRIORITIES = ("low", "medium", "high", "critical")


def issue_or_404(issue_id: int):
    row = web.one(
        "SELECT i.*, p.key, p.name AS project, a.username AS assignee, a.display_name AS "
        "assignee_name, r.display_name AS reporter FROM issues i JOIN projects p ON "
        "p.id = i.project_id LEFT JOIN users a ON a.id = i.assignee_id JOIN users r ON "
        "r.id = i.reporter_id WHERE i.id = ?",
        (issue_id,),
    )
    if row is None:
        abort(404)
    return row


def labels_of(issue_id: int) -> list[str]:
    return web.column(
        "SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id "
        "WHERE il.issue_id = ? ORDER BY l.name",
        (issue_id,),
    )


def people():
    return [
        (u["username"], f"{u['display_name']} ({u['username']})")
        for u in web.query("SELECT * FROM users ORDER BY display_name")
    ]


@app.route("/issues")
@web.login_required
def issues():
    a = request.args
    q, project, status = a.get("q", "").strip(), a.get("project", ""), a.get("status", "")
    priority, assignee, label = a.get("priority", ""), a.get("assignee", ""), a.get("label", "")
    sql, args = where(
        "SELECT i.*, p.key, u.username AS assignee FROM issues i JOIN projects p ON "
        "p.id = i.project_id LEFT JOIN users u ON u.id = i.assignee_id WHERE 1=1",
        (q, "(i.title LIKE ? OR i.description LIKE ?)", (f"%{q}%", f"%{q}%")),
        (project, "p.key = ?", (project,)),
        (status in STATUSES, "i.status = ?", (status,)),
        (priority in PRIORITIES, "i.priority = ?", (priority,)),
        (assignee == "-", "i.assignee_id IS NULL", ()),
        (assignee not in ("", "-"), "u.username = ?", (assignee,)),
        (
            label,
            "i.id IN (SELECT il.issue_id FROM issue_labels il JOIN labels l ON "
            "l.id = il.label_id WHERE l.name = ?)",
            (label,),
        ),
    )
    rows, pager = web.paginate(sql + " ORDER BY i.id", args)
    projects = [
        (p["key"], f"{p['key']} - {p['name']}")
        for p in web.query("SELECT * FROM projects ORDER BY key")
    ]
    labels = web.column("SELECT name FROM labels ORDER BY name")
    body = (
        search_form(
            "/issues",
            "Search",
            q,
            select("project", "Project", projects, project, "Any"),
            select("status", "Status", STATUSES, status, "Any"),
            select("priority", "Priority", PRIORITIES, priority, "Any"),
            select("assignee", "Assignee", [("-", "Unassigned"), *people()], assignee, "Anyone"),
            select("label", "Label", labels, label, "Any"),
        )
        + table(
            ("Issue", "Title", "Status", "Priority", "Assignee", "Labels"),
            (
                (
                    f"{esc(r['key'])}-{r['id']}",
                    f'<a href="/issues/{r["id"]}">{esc(r["title"])}</a>',
                    esc(r["status"]),
                    esc(r["priority"]),
                    esc(r["assignee"] or "-"),
                    esc(", ".join(labels_of(r["id"]))),
                )
                for r in rows
            ),
        )
        + pager
    )
    return web.page("Issues", body)


@app.route("/issues/<int:issue_id>")
@web.login_required
def issue(issue_id: int):
    row = issue_or_404(issue_id)
    labels = labels_of(issue_id)
    comments = web.query(
        "SELECT c.*, u.display_name FROM issue_comments c JOIN users u ON "
        "u.id = c.user_id WHERE c.issue_id = ? ORDER BY c.id",
        (issue_id,),
    )
    all_labels = web.column("SELECT name FROM labels ORDER BY name")
    body = (
        f"<p>Project: {esc(row['key'])} - {esc(row['project'])}. Reported by "
        f"{esc(row['reporter'])}.</p><p>Status: {esc(row['status'])}. Priority: "
        f"{esc(row['priority'])}. Assignee: {esc(row['assignee'] or 'nobody')}.</p>"
        f"<p>Labels: {esc(', '.join(labels)) if labels else '(none)'}</p>"
        f"<div>{esc(row['description'])}</div>"
        f"<h2>Comments ({len(comments)})</h2><ul>"
        + "".join(f"<li>{esc(c['display_name'])}: {esc(c['body'])}</li>" for c in comments)
        + "</ul><h2>Update</h2>"
        f'<form method="post" action="/issues/{issue_id}/update">{web.csrf_field()}'
        + select("status", "Status", STATUSES, row["status"])
        + "<br>"
        + select("priority", "Priority", PRIORITIES, row["priority"])
        + "<br>"
        + select("assignee", "Assignee", people(), row["assignee"] or "", "Unassigned")
        + "<br>"
        '<label for="comment">Comment (required when closing)</label> '
        '<textarea id="comment" name="comment"></textarea><br>'
        '<button type="submit">Save changes</button></form>'
        "<h2>Labels</h2>"
        + "".join(
            f'<form method="post" action="/issues/{issue_id}/labels" style="display:inline">'
            f'{web.csrf_field()}<input type="hidden" name="label" value="{esc(name)}">'
            '<input type="hidden" name="op" value="remove">'
            f'<button type="submit">Remove label {esc(name)}</button></form> '
            for name in labels
        )
        + f'<form method="post" action="/issues/{issue_id}/labels">{web.csrf_field()}'
        '<input type="hidden" name="op" value="add">'
        + select("label", "Add label", [n for n in all_labels if n not in labels], "")
        + ' <button type="submit">Add label</button></form>'
    )
    return web.page(f"{row['key']}-{issue_id}: {row['title']}", body)


@web.action("/issues/<int:issue_id>/update", "/issues/{issue_id}")
def update(issue_id: int):
    user = web.current_user()
    row = issue_or_404(issue_id)
    f = request.form
    status, priority = f.get("status", row["status"]), f.get("priority", row["priority"])
    assignee, comment = f.get("assignee", ""), f.get("comment", "").strip()
    target = web.one("SELECT id FROM users WHERE username = ?", (assignee,)) if assignee else None
    if status not in STATUSES:
        web.flash(f"Unknown status {status!r}.", "error")
    elif priority not in PRIORITIES:
        web.flash("Priority must be one of: " + ", ".join(PRIORITIES) + ".", "error")
    elif assignee and target is None:
        web.flash(f"No user {assignee!r}.", "error")
    elif status == "closed" and row["status"] != "closed" and not comment:
        web.flash("Closing an issue needs a comment saying why.", "error")
    else:
        new_assignee = target["id"] if target else None
        changes = {}
        if status != row["status"]:
            changes["status"] = status
        if priority != row["priority"]:
            changes["priority"] = priority
        if new_assignee != row["assignee_id"]:
            changes["assignee"] = assignee or None
        statements = [
            (
                "UPDATE issues SET status = ?, priority = ?, assignee_id = ? WHERE id = ?",
                (status, priority, new_assignee, issue_id),
            )
        ]
        if comment:
            changes["comment"] = comment
            statements.append(
                (
                    "INSERT INTO issue_comments (issue_id, user_id, body) VALUES (?, ?, ?)",
                    (issue_id, user["id"], comment),
                )
            )
        if changes:
            web.change("issue_update", statements, issue_id=issue_id, **changes)
            web.flash(f"{row['key']}-{issue_id} updated.")
        else:
            web.flash("Nothing to change.")


LABEL_OPS = {
    "remove": ("DELETE FROM issue_labels WHERE issue_id = ? AND label_id = ?", "removed from"),
    "add": ("INSERT INTO issue_labels (issue_id, label_id) VALUES (?, ?)", "added to"),
}


@web.action("/issues/<int:issue_id>/labels", "/issues/{issue_id}")
def label(issue_id: int):
    row = issue_or_404(issue_id)
    name, op = request.form.get("label", ""), request.form.get("op", "add")
    found = web.one("SELECT id FROM labels WHERE name = ?", (name,))
    op = "remove" if op == "remove" else "add"
    if found is None:
        web.flash(f"No label {name!r}.", "error")
    elif op == "add" and name in labels_of(issue_id):
        web.flash(f"{row['key']}-{issue_id} already has the label {name}.", "error")
    else:
        sql, done = LABEL_OPS[op]
        web.execute(f"label_{op}", sql, (issue_id, found["id"]), issue_id=issue_id, label=name)
        web.flash(f"Label {name} {done} {row['key']}-{issue_id}.")


@app.route("/issues/new", methods=["GET", "POST"])
@web.login_required
def new_issue():
    user = web.current_user()
    f = request.form if request.method == "POST" else {}
    errors = []
    if request.method == "POST":
        project = web.one("SELECT * FROM projects WHERE key = ?", (f.get("project", ""),))
        title = f.get("title", "").strip()
        priority = f.get("priority", "").strip()
        assignee = f.get("assignee", "")
        target = (
            web.one("SELECT id FROM users WHERE username = ?", (assignee,)) if assignee else None
        )
        wanted = [x for x in f.getlist("labels") if x]
        known = {r["name"]: r["id"] for r in web.query("SELECT * FROM labels")}
        if project is None:
            errors.append("Choose a project.")
        if not title:
            errors.append("Title is required.")
        elif len(title) > 100:
            errors.append("Title must be at most 100 characters.")
        if priority not in PRIORITIES:
            errors.append("Priority must be one of: " + ", ".join(PRIORITIES) + ".")
        if assignee and target is None:
            errors.append(f"No user {assignee!r}.")
        unknown = [x for x in wanted if x not in known]
        if unknown:
            errors.append("Unknown labels: " + ", ".join(unknown) + ".")
        if not errors:
            db = web.db()
            with db:
                cursor = db.execute(
                    "INSERT INTO issues (project_id, title, description, status, priority, "
                    "assignee_id, reporter_id) VALUES (?, ?, ?, 'open', ?, ?, ?)",
                    (
                        project["id"],
                        title,
                        f.get("description", "").strip(),
                        priority,
                        target["id"] if target else None,
                        user["id"],
                    ),
                )
                issue_id = cursor.lastrowid
                for name in sorted(set(wanted)):
                    db.execute("INSERT INTO issue_labels VALUES (?, ?)", (issue_id, known[name]))
                web.audit("issue_create", issue_id=issue_id, title=title, priority=priority)
            web.flash(f"Issue {project['key']}-{issue_id} created.")
            return redirect(f"/issues/{issue_id}")
    projects = [
        (p["key"], f"{p['key']} - {p['name']}")
        for p in web.query("SELECT * FROM projects ORDER BY key")
    ]
    labels = web.column("SELECT name FROM labels ORDER BY name")
    chosen = f.getlist("labels") if f else []
    boxes = "".join(
        f'<input type="checkbox" id="lab-{esc(n)}" name="labels" value="{esc(n)}"'
        f'{" checked" if n in chosen else ""}> <label for="lab-{esc(n)}">{esc(n)}</label> '
        for n in labels
    )
    body = (
        error_lines(errors)
        + f'<form method="post" action="/issues/new">{web.csrf_field()}'
        + select("project", "Project", projects, f.get("project", ""), "Choose...")
        + "<br>"
        f'<label for="title">Title</label> <input id="title" name="title" '
        f'value="{esc(f.get("title", ""))}"><br>'
        '<label for="description">Description</label> <textarea id="description" '
        f'name="description">{esc(f.get("description", ""))}</textarea><br>'
        '<label for="priority">Priority (low, medium, high or critical)</label> '
        f'<input id="priority" name="priority" value="{esc(f.get("priority", ""))}"><br>'
        + select("assignee", "Assignee", people(), f.get("assignee", ""), "Unassigned")
        + "<br>"
        f"<p>Labels: {boxes}</p>"
        '<button type="submit">Create issue</button></form>'
    )
    return web.page("New issue", body, status=400 if errors else 200)


if __name__ == "__main__":
    web.main()
