"""Forum: boards, threads and posts; members reply, quote and edit their own posts; moderators
lock, pin and move threads."""

import datetime

from flask import redirect, request
from kit import WebApp, bullets, error_lines, esc, search_form, select, table

SCHEMA = """
CREATE TABLE boards (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, description TEXT NOT NULL);
CREATE TABLE threads (
    id INTEGER PRIMARY KEY, board_id INTEGER NOT NULL REFERENCES boards(id), title TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id), locked INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE posts (
    id INTEGER PRIMARY KEY, thread_id INTEGER NOT NULL REFERENCES threads(id),
    author_id INTEGER NOT NULL REFERENCES users(id), body TEXT NOT NULL, created TEXT NOT NULL,
    quote_id INTEGER REFERENCES posts(id), edited_by INTEGER REFERENCES users(id)
);
"""

MODERATORS = ("moderator", "admin")
THREAD_SQL = (
    "SELECT t.*, u.username AS author, u.display_name AS author_name, "
    "(SELECT MAX(created) FROM posts p WHERE p.thread_id = t.id) AS last_post, "
    "(SELECT COUNT(*) FROM posts p WHERE p.thread_id = t.id) AS n_posts "
    "FROM threads t JOIN users u ON u.id = t.author_id"
)

web = WebApp("Forum", schema=SCHEMA, per_page=8, nav=[("Boards", "/"), ("Search", "/search")])
app = web.app


def is_moderator() -> bool:
    user = web.current_user()
    return bool(user) and user["role"] in MODERATORS


def forbidden(what: str):
    user = web.current_user()
    return web.page(
        "Forbidden",
        f"<p>Your account ({esc(user['username'])}, role {esc(user['role'])}) may not {what}."
        " Only moderators and administrators can.</p>",
        status=403,
    )


def get_thread(thread_id: int):
    """The thread (the 404 page when there is none)."""
    return web.one_or_404(THREAD_SQL + " WHERE t.id = ?", (thread_id,), "thread")


def status_of(row) -> str:
    flags = [name for name, on in (("Pinned", row["pinned"]), ("Locked", row["locked"])) if on]
    return ", ".join(flags) or "Open"


def thread_link(row) -> str:
    return f'<a href="/threads/{row["id"]}">{esc(row["title"])}</a>'


def thread_table(rows) -> str:
    return table(
        ("Thread", "Started by", "Posts", "Last post", "Status"),
        (
            (thread_link(r), esc(r["author_name"]), r["n_posts"], esc(r["last_post"]), status_of(r))
            for r in rows
        ),
    )


@app.route("/")
def home():
    rows = web.query(
        "SELECT b.*, (SELECT COUNT(*) FROM threads t WHERE t.board_id = b.id) AS n "
        "FROM boards b ORDER BY b.name"
    )
    body = bullets(
        f'<a href="/boards/{r["id"]}">{esc(r["name"])}</a> - {esc(r["description"])} '
        f"({r['n']} threads)"
        for r in rows
    )
    return web.page("Boards", body)


@app.route("/boards/<int:board_id>")
def board(board_id: int):
    row = web.one_or_404("SELECT * FROM boards WHERE id = ?", (board_id,), "board")
    rows, pager = web.paginate(
        f"SELECT * FROM ({THREAD_SQL}) WHERE board_id = ? "
        "ORDER BY pinned DESC, last_post DESC, id DESC",
        (board_id,),
    )
    body = f"<p>{esc(row['description'])}</p>" + thread_table(rows) + pager
    return web.page(row["name"], body)


@app.route("/search")
def search():
    q = request.args.get("q", "").strip()
    body = search_form("/search", "Thread title contains", q, button="Search")
    if q:
        rows, pager = web.paginate(
            f"SELECT x.*, b.name AS board FROM ({THREAD_SQL}) x JOIN boards b "
            "ON b.id = x.board_id WHERE x.title LIKE ? ORDER BY x.last_post DESC, x.id DESC",
            (f"%{q}%",),
        )
        body += (
            table(
                ("Thread", "Board", "Last post", "Status"),
                (
                    (thread_link(r), esc(r["board"]), esc(r["last_post"]), status_of(r))
                    for r in rows
                ),
            )
            + pager
        )
    return web.page("Search threads", body)


@app.route("/threads/<int:thread_id>")
def thread(thread_id: int):
    row = get_thread(thread_id)
    user = web.current_user()
    board_row = web.one("SELECT * FROM boards WHERE id = ?", (row["board_id"],))
    posts, pager = web.paginate(
        "SELECT p.*, u.username, u.display_name, q.body AS quoted_body, "
        "qu.display_name AS quoted_name FROM posts p JOIN users u ON u.id = p.author_id "
        "LEFT JOIN posts q ON q.id = p.quote_id LEFT JOIN users qu ON qu.id = q.author_id "
        "WHERE p.thread_id = ? ORDER BY p.created, p.id",
        (thread_id,),
        per_page=5,
    )
    parts = [
        f'<p>Board: <a href="/boards/{board_row["id"]}">{esc(board_row["name"])}</a>. '
        f"Status: {status_of(row)}.</p>"
    ]
    for p in posts:
        links = []
        if user and not row["locked"]:
            links.append(
                f'<a href="/threads/{thread_id}/reply?quote={p["id"]}">Quote post #{p["id"]}</a>'
            )
        if user and (user["id"] == p["author_id"] or user["role"] in MODERATORS):
            links.append(f'<a href="/posts/{p["id"]}/edit">Edit post #{p["id"]}</a>')
        quote = (
            f"<blockquote>{esc(p['quoted_name'])} wrote: {esc(p['quoted_body'])}</blockquote>"
            if p["quote_id"]
            else ""
        )
        edited = " (edited)" if p["edited_by"] else ""
        parts.append(
            f'<div class="post"><h3>Post #{p["id"]} by {esc(p["display_name"])} '
            f"({esc(p['username'])}) on {esc(p['created'])}{edited}</h3>{quote}"
            f"<p>{esc(p['body'])}</p><p>{' | '.join(links)}</p></div>"
        )
    parts.append(pager)
    if row["locked"]:
        parts.append("<p>This thread is locked: no new replies.</p>")
    elif user:
        parts.append(f'<p><a href="/threads/{thread_id}/reply">Reply to this thread</a></p>')
    else:
        parts.append('<p><a href="/login">Sign in</a> to reply.</p>')
    if user and user["role"] in MODERATORS:
        boards = [(b["id"], b["name"]) for b in web.query("SELECT * FROM boards ORDER BY name")]
        lock, pin = (0, "Unlock thread") if row["locked"] else (1, "Lock thread")
        pinv, pinl = (0, "Unpin thread") if row["pinned"] else (1, "Pin thread")
        parts.append(
            "<h2>Moderator tools</h2>"
            f'<form method="post" action="/threads/{thread_id}/lock">{web.csrf_field()}'
            f'<input type="hidden" name="locked" value="{lock}"><button type="submit">{pin}'
            "</button></form>"
            f'<form method="post" action="/threads/{thread_id}/pin">{web.csrf_field()}'
            f'<input type="hidden" name="pinned" value="{pinv}"><button type="submit">{pinl}'
            "</button></form>"
            f'<form method="post" action="/threads/{thread_id}/move">{web.csrf_field()}'
            + select("board_id", "Move to board", boards, row["board_id"])
            + ' <button type="submit">Move thread</button></form>'
        )
    return web.page(row["title"], "".join(parts))


def _flag(thread_id: int, column: str, action: str, words: tuple[str, str]):
    get_thread(thread_id)  # the 404 page when there is none
    if not is_moderator():
        return forbidden(f"{words[1]} threads")
    value = 1 if request.form.get(column, "1") == "1" else 0
    web.execute(
        action,
        f"UPDATE threads SET {column} = ? WHERE id = ?",
        (value, thread_id),
        thread_id=thread_id,
        **{column: value},
    )
    web.flash(f"Thread {words[0] if value else words[1]}.")


@web.action("/threads/<int:thread_id>/lock", "/threads/{thread_id}")
def lock(thread_id: int):
    return _flag(thread_id, "locked", "lock_thread", ("locked", "unlocked"))


@web.action("/threads/<int:thread_id>/pin", "/threads/{thread_id}")
def pin(thread_id: int):
    return _flag(thread_id, "pinned", "pin_thread", ("pinned", "unpinned"))


@web.action("/threads/<int:thread_id>/move", "/threads/{thread_id}")
def move(thread_id: int):
    row = get_thread(thread_id)
    if not is_moderator():
        return forbidden("move threads")
    try:
        target = int(request.form.get("board_id", ""))
    except ValueError:
        target = 0
    board_row = web.one("SELECT * FROM boards WHERE id = ?", (target,))
    if board_row is None:
        web.flash("Choose a board to move the thread to.", "error")
    elif target == row["board_id"]:
        web.flash(f"The thread is already in {board_row['name']}.", "error")
    else:
        web.execute(
            "move_thread",
            "UPDATE threads SET board_id = ? WHERE id = ?",
            (target, thread_id),
            thread_id=thread_id,
            from_board=row["board_id"],
            to_board=target,
        )
        web.flash(f"Thread moved to {board_row['name']}.")


@app.route("/threads/<int:thread_id>/reply", methods=["GET", "POST"])
@web.login_required
def reply(thread_id: int):
    row = get_thread(thread_id)
    if row["locked"]:
        web.flash("This thread is locked.", "error")
        return redirect(f"/threads/{thread_id}")
    user = web.current_user()
    source = request.form if request.method == "POST" else request.args
    quote_id = source.get("quote_id") or source.get("quote") or ""
    quoted = None
    if quote_id:
        quoted = web.one(
            "SELECT p.*, u.display_name FROM posts p JOIN users u ON u.id = p.author_id "
            "WHERE p.id = ? AND p.thread_id = ?",
            (int(quote_id) if quote_id.isdigit() else 0, thread_id),
        )
    error = ""
    text = request.form.get("body", "").strip() if request.method == "POST" else ""
    if request.method == "POST":
        if quote_id and quoted is None:
            error = "The quoted post is not in this thread."
        elif len(text) < 2:
            error = "Write a reply (at least 2 characters)."
        else:
            today = datetime.date.today().isoformat()
            db = web.db()
            with db:
                cursor = db.execute(
                    "INSERT INTO posts (thread_id, author_id, body, created, quote_id) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (thread_id, user["id"], text, today, quoted["id"] if quoted else None),
                )
                web.audit(
                    "reply",
                    thread_id=thread_id,
                    post_id=cursor.lastrowid,
                    quote_id=quoted["id"] if quoted else None,
                )
            web.flash("Reply posted.")
            return redirect(f"/threads/{thread_id}?page=9999")
    body = (
        error_lines([error] if error else [])
        + f'<p>Replying in <a href="/threads/{thread_id}">{esc(row["title"])}</a></p>'
        + (
            f"<blockquote>Quoting post #{quoted['id']} by {esc(quoted['display_name'])}: "
            f"{esc(quoted['body'])}</blockquote>"
            if quoted
            else ""
        )
        + f'<form method="post" action="/threads/{thread_id}/reply">{web.csrf_field()}'
        + (f'<input type="hidden" name="quote_id" value="{quoted["id"]}">' if quoted else "")
        + f'<label for="body">Your reply</label><br><textarea id="body" name="body" rows="6" '
        f'cols="70">{esc(text)}</textarea><br><button type="submit">Post reply</button></form>'
    )
    return web.page("Reply", body, status=400 if error else 200)


@app.route("/posts/<int:post_id>/edit", methods=["GET", "POST"])
@web.login_required
def edit_post(post_id: int):
    post = web.one_or_404("SELECT * FROM posts WHERE id = ?", (post_id,), "post")
    user = web.current_user()
    if post["author_id"] != user["id"] and user["role"] not in MODERATORS:
        return forbidden("edit other people's posts")
    error = ""
    text = post["body"]
    if request.method == "POST":
        text = request.form.get("body", "").strip()
        if len(text) < 2:
            error = "A post needs at least 2 characters."
        else:
            web.execute(
                "edit_post",
                "UPDATE posts SET body = ?, edited_by = ? WHERE id = ?",
                (text, user["id"], post_id),
                post_id=post_id,
                thread_id=post["thread_id"],
            )
            web.flash(f"Post #{post_id} updated.")
            return redirect(f"/threads/{post['thread_id']}")
    body = (
        error_lines([error] if error else [])
        + f'<form method="post" action="/posts/{post_id}/edit">{web.csrf_field()}'
        f'<label for="body">Post text</label><br><textarea id="body" name="body" rows="6" '
        f'cols="70">{esc(text)}</textarea><br><button type="submit">Save post</button></form>'
        f'<p><a href="/threads/{post["thread_id"]}">Back to the thread</a></p>'
    )
    return web.page(f"Edit post #{post_id}", body, status=400 if error else 200)


if __name__ == "__main__":
    web.main()
