"""Blog: posts (draft / scheduled / published) with tags, editing, publishing by editors, and a
paginated comment moderation queue."""

import functools
import re

from flask import abort, redirect, request
from kit import WebApp, bullets, error_lines, esc, search_form, select, table, where

SCHEMA = """
CREATE TABLE posts (
    id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id), status TEXT NOT NULL,
    publish_at TEXT
);
CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
CREATE TABLE post_tags (
    post_id INTEGER NOT NULL REFERENCES posts(id), tag_id INTEGER NOT NULL REFERENCES tags(id),
    PRIMARY KEY (post_id, tag_id)
);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL REFERENCES posts(id),
    author_name TEXT NOT NULL, email TEXT NOT NULL, body TEXT NOT NULL, status TEXT NOT NULL
);
"""

web = WebApp(
    "Blog",
    schema=SCHEMA,
    per_page=10,
    nav=[
        ("Posts", "/posts"),
        ("Moderation", "/moderation"),
    ],
)
app = web.app
web.home()
STATUSES = ("draft", "scheduled", "published")
TAG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def is_editor(user) -> bool:
    return user is not None and user["role"] in ("editor", "admin")


def post_or_404(post_id: int):
    row = web.one(
        "SELECT p.*, u.display_name AS author, u.username AS author_username "
        "FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ?",
        (post_id,),
    )
    if row is None:
        abort(404)
    return row


def can_edit(user, post) -> bool:
    return is_editor(user) or post["author_id"] == user["id"]


def post_tags(post_id: int) -> list[str]:
    return web.column(
        "SELECT t.name FROM post_tags pt JOIN tags t ON t.id = pt.tag_id WHERE pt.post_id = ? "
        "ORDER BY t.name",
        (post_id,),
    )


@app.route("/posts")
@web.login_required
def posts():
    q = request.args.get("q", "").strip()
    status = request.args.get("status", "")
    sql, args = where(
        "SELECT p.*, u.display_name AS author FROM posts p JOIN users u ON u.id = p.author_id "
        "WHERE 1=1",
        (q, "p.title LIKE ?", (f"%{q}%",)),
        (status in STATUSES, "p.status = ?", (status,)),
    )
    rows, pager = web.paginate(sql + " ORDER BY p.id DESC", args)
    body = (
        search_form(
            "/posts", "Search titles", q, select("status", "Status", STATUSES, status, "Any")
        )
        + table(
            ("#", "Title", "Author", "Status"),
            (
                (
                    r["id"],
                    f'<a href="/posts/{r["id"]}">{esc(r["title"])}</a>',
                    esc(r["author"]),
                    esc(r["status"])
                    + (f" ({esc(r['publish_at'])})" if r["status"] == "scheduled" else ""),
                )
                for r in rows
            ),
        )
        + pager
    )
    return web.page("Posts", body)


@app.route("/posts/<int:post_id>")
@web.login_required
def post(post_id: int):
    user = web.current_user()
    row = post_or_404(post_id)
    tags = post_tags(post_id)
    comments = web.query(
        "SELECT * FROM comments WHERE post_id = ? AND status = 'approved' ORDER BY id", (post_id,)
    )
    state = esc(row["status"]) + (
        f" for {esc(row['publish_at'])}" if row["status"] == "scheduled" else ""
    )
    body = (
        f"<p>By {esc(row['author'])} - status: {state}</p>"
        f"<p>Tags: {esc(', '.join(tags)) if tags else '(none)'}</p>"
        f"<div>{esc(row['body'])}</div>"
    )
    if can_edit(user, row):
        body += f'<p><a href="/posts/{post_id}/edit">Edit this post</a></p>'
    body += f"<h2>Comments ({len(comments)})</h2>" + bullets(
        f"{esc(c['author_name'])}: {esc(c['body'])}" for c in comments
    )
    return web.page(row["title"], body)


@app.route("/posts/<int:post_id>/edit", methods=["GET", "POST"])
@web.login_required
def edit(post_id: int):
    user = web.current_user()
    row = post_or_404(post_id)
    if not can_edit(user, row):
        return web.page("Forbidden", "<p>You can only edit your own posts.</p>", status=403)
    errors = []
    title, body_text = row["title"], row["body"]
    if request.method == "POST":
        title = request.form.get("title", "").strip()
        body_text = request.form.get("body", "").strip()
        if not title:
            errors.append("Title is required.")
        elif len(title) > 80:
            errors.append("Title must be at most 80 characters.")
        if not body_text:
            errors.append("Body is required.")
        if not errors:
            web.execute(
                "post_edit",
                "UPDATE posts SET title = ?, body = ? WHERE id = ?",
                (title, body_text, post_id),
                post_id=post_id,
                title=title,
            )
            web.flash("Post saved.")
            return redirect(f"/posts/{post_id}/edit")
    tags = post_tags(post_id)
    tag_rows = "".join(
        f'<li>{esc(t)} <form method="post" action="/posts/{post_id}/tags/remove" '
        f'style="display:inline">{web.csrf_field()}<input type="hidden" name="tag" '
        f'value="{esc(t)}"><button type="submit">Remove tag {esc(t)}</button></form></li>'
        for t in tags
    )
    body = (
        error_lines(errors)
        + f"<p>Status: {esc(row['status'])}"
        + (f" for {esc(row['publish_at'])}" if row["status"] == "scheduled" else "")
        + "</p>"
        + f'<form method="post" action="/posts/{post_id}/edit">{web.csrf_field()}'
        f'<label for="title">Title</label> <input id="title" name="title" value="{esc(title)}">'
        f'<br><label for="body">Body</label> <textarea id="body" name="body">{esc(body_text)}'
        '</textarea><br><button type="submit">Save post</button></form>'
        f"<h2>Tags</h2><ul>{tag_rows or '<li>(none)</li>'}</ul>"
        f'<form method="post" action="/posts/{post_id}/tags">{web.csrf_field()}'
        '<label for="tag">New tag</label> <input id="tag" name="tag"> '
        '<button type="submit">Add tag</button></form>'
        "<h2>Publishing</h2>"
    )
    if is_editor(user):
        body += (
            f'<form method="post" action="/posts/{post_id}/publish">{web.csrf_field()}'
            '<button type="submit">Publish now</button></form>'
            f'<form method="post" action="/posts/{post_id}/schedule">{web.csrf_field()}'
            '<label for="publish_at">Publish on (YYYY-MM-DD)</label> '
            '<input id="publish_at" name="publish_at"> <button type="submit">Schedule</button>'
            "</form>"
            f'<form method="post" action="/posts/{post_id}/unpublish">{web.csrf_field()}'
            '<button type="submit">Move back to drafts</button></form>'
        )
    else:
        body += "<p>Only editors can publish or schedule posts.</p>"
    return web.page(f"Edit post #{post_id}", body, status=400 if errors else 200)


def post_action(verb: str, *, editors_only: bool = False):
    """Decorator: the POST route /posts/<id>/<verb> (the 404 page for no such post) for the
    post's author or an editor (only editors when ``editors_only``); the view makes its change
    and flashes, and the answer is the post's edit page."""

    def decorate(view):
        @functools.wraps(view)
        def checked(post_id: int):
            user = web.current_user()
            row = post_or_404(post_id)
            if editors_only and not is_editor(user):
                return web.page(
                    "Forbidden",
                    "<p>Only editors can publish, schedule or unpublish posts.</p>",
                    status=403,
                )
            if not can_edit(user, row):
                abort(403)
            return view(post_id)

        return web.action(f"/posts/<int:post_id>/{verb}", "/posts/{post_id}/edit")(checked)

    return decorate


@post_action("tags")
def tag_add(post_id: int):
    name = request.form.get("tag", "").strip().lower()
    if not TAG_RE.match(name):
        web.flash("Tags are lowercase words: letters, digits and single hyphens.", "error")
    elif name in post_tags(post_id):
        web.flash(f"The post already has the tag {name}.", "error")
    else:
        tag = web.one("SELECT id FROM tags WHERE name = ?", (name,))
        statements = []
        if tag is None:
            statements.append(("INSERT INTO tags (name) VALUES (?)", (name,)))
        statements.append(
            (
                "INSERT INTO post_tags (post_id, tag_id) SELECT ?, id FROM tags WHERE name = ?",
                (post_id, name),
            )
        )
        web.change("tag_add", statements, post_id=post_id, tag=name)
        web.flash(f"Tag {name} added.")


@post_action("tags/remove")
def tag_remove(post_id: int):
    name = request.form.get("tag", "")
    web.execute(
        "tag_remove",
        "DELETE FROM post_tags WHERE post_id = ? AND tag_id IN (SELECT id FROM tags WHERE name = ?)",
        (post_id, name),
        post_id=post_id,
        tag=name,
    )
    web.flash(f"Tag {name} removed.")


@post_action("publish", editors_only=True)
def publish(post_id: int):
    if not post_tags(post_id):
        web.flash("A post needs at least one tag before it can be published.", "error")
    else:
        web.execute(
            "post_publish",
            "UPDATE posts SET status = 'published', publish_at = NULL WHERE id = ?",
            (post_id,),
            post_id=post_id,
        )
        web.flash("Post published.")


@post_action("schedule", editors_only=True)
def schedule(post_id: int):
    when = request.form.get("publish_at", "").strip()
    if not DATE_RE.match(when):
        web.flash("Give the publication date as YYYY-MM-DD.", "error")
    elif not post_tags(post_id):
        web.flash("A post needs at least one tag before it can be scheduled.", "error")
    else:
        web.execute(
            "post_schedule",
            "UPDATE posts SET status = 'scheduled', publish_at = ? WHERE id = ?",
            (when, post_id),
            post_id=post_id,
            publish_at=when,
        )
        web.flash(f"Post scheduled for {when}.")


@post_action("unpublish", editors_only=True)
def unpublish(post_id: int):
    web.execute(
        "post_unpublish",
        "UPDATE posts SET status = 'draft', publish_at = NULL WHERE id = ?",
        (post_id,),
        post_id=post_id,
    )
    web.flash("Post moved back to drafts.")


@app.route("/moderation")
@web.login_required
def moderation():
    if not is_editor(web.current_user()):
        return web.page("Forbidden", "<p>Only editors can moderate comments.</p>", status=403)
    rows, pager = web.paginate(
        "SELECT c.*, p.title FROM comments c JOIN posts p ON p.id = c.post_id "
        "WHERE c.status = 'pending' ORDER BY c.id",
        per_page=5,
    )
    items = "".join(
        f'<li><p>Comment #{c["id"]} on "{esc(c["title"])}" by {esc(c["author_name"])} '
        f"&lt;{esc(c['email'])}&gt;:</p><p>{esc(c['body'])}</p>"
        f'<form method="post" action="/comments/{c["id"]}/moderate">{web.csrf_field()}'
        f'<input type="hidden" name="back" value="{esc(request.full_path)}">'
        f'<button type="submit" name="decision" value="approve">Approve #{c["id"]}</button> '
        f'<button type="submit" name="decision" value="reject">Reject #{c["id"]}</button>'
        "</form></li>"
        for c in rows
    )
    body = (
        f"<p>Comments awaiting moderation, oldest first.</p><ul>{items}</ul>{pager}"
        if rows
        else "<p>No comments are awaiting moderation.</p>"
    )
    return web.page("Moderation queue", body)


@app.route("/comments/<int:comment_id>/moderate", methods=["POST"])
@web.login_required
def moderate(comment_id: int):
    if not is_editor(web.current_user()):
        return web.page("Forbidden", "<p>Only editors can moderate comments.</p>", status=403)
    decision = request.form.get("decision", "")
    row = web.one("SELECT * FROM comments WHERE id = ?", (comment_id,))
    if row is None:
        abort(404)
    if decision not in ("approve", "reject"):
        web.flash("Choose approve or reject.", "error")
    elif row["status"] != "pending":
        web.flash(f"Comment #{comment_id} was already moderated.", "error")
    else:
        status = "approved" if decision == "approve" else "rejected"
        web.execute(
            "comment_moderate",
            "UPDATE comments SET status = ? WHERE id = ?",
            (status, comment_id),
            comment_id=comment_id,
            status=status,
        )
        web.flash(f"Comment #{comment_id} {status}.")
    back = request.form.get("back", "/moderation")
    return redirect(back if back.startswith("/") else "/moderation")


if __name__ == "__main__":
    web.main()
