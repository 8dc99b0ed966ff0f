"""Bank: accounts with balances and daily transfer limits, payees, transfers with validation
and a confirmation step (a one-time code shown on the confirmation page)."""

import json
import re
import secrets

from flask import redirect, request
from kit import WebApp, error_lines, esc, select, table, text_inputs

SCHEMA = """
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), number TEXT UNIQUE,
    name TEXT NOT NULL, balance_cents INTEGER NOT NULL, daily_limit_cents INTEGER NOT NULL
);
CREATE TABLE payees (
    id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), name TEXT NOT NULL,
    account_number TEXT NOT NULL
);
CREATE TABLE transfers (
    id INTEGER PRIMARY KEY, from_account_id INTEGER NOT NULL REFERENCES accounts(id),
    to_number TEXT NOT NULL, to_name TEXT NOT NULL, amount_cents INTEGER NOT NULL,
    reference TEXT NOT NULL, day TEXT NOT NULL
);
CREATE TABLE pending (
    id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, data TEXT NOT NULL, code TEXT NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
);
"""

web = WebApp(
    "Bank",
    schema=SCHEMA,
    per_page=10,
    nav=[
        ("Accounts", "/accounts"),
        ("Payees", "/payees"),
        ("Transfer", "/transfer"),
    ],
)
app = web.app
web.home()
NUMBER_RE = re.compile(r"^\d{4}-\d{4}-\d{2}$")
AMOUNT_RE = re.compile(r"^\d+(\.\d{1,2})?$")


def money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def today() -> str:
    return web.one("SELECT value FROM settings WHERE key = 'today'")["value"]


def used_today(account_id: int) -> int:
    return web.one(
        "SELECT COALESCE(SUM(amount_cents), 0) AS n FROM transfers WHERE "
        "from_account_id = ? AND day = ?",
        (account_id, today()),
    )["n"]


def my_accounts(user_id: int):
    return web.query("SELECT * FROM accounts WHERE user_id = ? ORDER BY id", (user_id,))


@app.route("/accounts")
@web.login_required
def accounts():
    user = web.current_user()
    body = f"<p>Today is {today()}.</p>" + table(
        ("Account", "Number", "Balance", "Daily transfer limit", "Sent today"),
        (
            (
                f'<a href="/accounts/{a["id"]}">{esc(a["name"])}</a>',
                esc(a["number"]),
                money(a["balance_cents"]),
                money(a["daily_limit_cents"]),
                money(used_today(a["id"])),
            )
            for a in my_accounts(user["id"])
        ),
    )
    return web.page("Your accounts", body)


@app.route("/accounts/<int:account_id>")
@web.login_required
def account(account_id: int):
    user = web.current_user()
    acc = web.one_or_404(
        "SELECT * FROM accounts WHERE id = ? AND user_id = ?", (account_id, user["id"]), "account"
    )
    rows, pager = web.paginate(
        "SELECT * FROM transfers WHERE from_account_id = ? OR to_number = ? ORDER BY id DESC",
        (account_id, acc["number"]),
    )
    body = (
        f"<p>{esc(acc['number'])} - balance {money(acc['balance_cents'])}</p>"
        + table(
            ("Day", "From", "To", "Amount", "Reference"),
            (
                (
                    esc(t["day"]),
                    "this account" if t["from_account_id"] == account_id else "incoming",
                    f"{esc(t['to_name'])} ({esc(t['to_number'])})",
                    money(t["amount_cents"]),
                    esc(t["reference"]),
                )
                for t in rows
            ),
        )
        + pager
    )
    return web.page(acc["name"], body)


@app.route("/payees", methods=["GET", "POST"])
@web.login_required
def payees():
    user = web.current_user()
    errors = []
    form = request.form if request.method == "POST" else {}
    if request.method == "POST":
        name = form.get("name", "").strip()
        number = form.get("account_number", "").strip()
        if not name:
            errors.append("Payee name is required.")
        if not NUMBER_RE.match(number):
            errors.append(
                "Account numbers look like 1234-5678-90 (4 digits, 4 digits, 2 digits, "
                "with dashes)."
            )
        elif web.one(
            "SELECT 1 FROM payees WHERE user_id = ? AND account_number = ?", (user["id"], number)
        ):
            errors.append("You already have a payee with that account number.")
        if not errors:
            web.execute(
                "payee_add",
                "INSERT INTO payees (user_id, name, account_number) VALUES (?, ?, ?)",
                (user["id"], name, number),
                name=name,
                account_number=number,
            )
            web.flash(f"Payee {name} added.")
            return redirect("/payees")
    rows = web.query("SELECT * FROM payees WHERE user_id = ? ORDER BY name", (user["id"],))
    body = (
        error_lines(errors)
        + table(
            ("Payee", "Account number"), ((esc(p["name"]), esc(p["account_number"])) for p in rows)
        )
        + "<h2>Add a payee</h2>"
        f'<form method="post" action="/payees">{web.csrf_field()}'
        + text_inputs(form, (("name", "Name"), ("account_number", "Account number")))
        + '<button type="submit">Add payee</button></form>'
    )
    return web.page("Payees", body, status=400 if errors else 200)


@app.route("/transfer", methods=["GET", "POST"])
@web.login_required
def transfer():
    user = web.current_user()
    mine = my_accounts(user["id"])
    payee_rows = web.query("SELECT * FROM payees WHERE user_id = ? ORDER BY name", (user["id"],))
    targets = [
        (f"acct:{a['number']}", f"{a['name']} ({a['number']})", a["number"], a["name"])
        for a in mine
    ] + [
        (f"payee:{p['id']}", f"{p['name']} ({p['account_number']})", p["account_number"], p["name"])
        for p in payee_rows
    ]
    form = request.form if request.method == "POST" else {}
    errors = []
    if request.method == "POST":
        source = next((a for a in mine if str(a["id"]) == form.get("from", "")), None)
        target = next((t for t in targets if t[0] == form.get("to", "")), None)
        amount_text = form.get("amount", "").strip().lstrip("$").replace(",", "")
        reference = form.get("reference", "").strip()
        cents = 0
        if source is None:
            errors.append("Choose the account to pay from.")
        if target is None:
            errors.append("Choose who to pay.")
        if not AMOUNT_RE.match(amount_text):
            errors.append("Enter the amount like 125.50.")
        else:
            whole, _, frac = amount_text.partition(".")
            cents = int(whole) * 100 + int((frac + "00")[:2])
            if cents <= 0:
                errors.append("The amount must be more than zero.")
        if not reference:
            errors.append("A reference is required.")
        if source is not None and target is not None and target[2] == source["number"]:
            errors.append("You cannot transfer to the same account.")
        if source is not None and cents > 0 and not errors:
            if cents > source["balance_cents"]:
                errors.append(
                    f"Insufficient funds: {source['name']} holds {money(source['balance_cents'])}."
                )
            elif used_today(source["id"]) + cents > source["daily_limit_cents"]:
                left = source["daily_limit_cents"] - used_today(source["id"])
                errors.append(
                    f"Daily limit exceeded: {source['name']} can send "
                    f"{money(max(0, left))} more today."
                )
        if not errors:
            code = f"{secrets.randbelow(1000000):06d}"
            data = {
                "from": source["id"],
                "to_number": target[2],
                "to_name": target[3],
                "amount_cents": cents,
                "reference": reference,
            }
            db = web.db()
            with db:
                pid = db.execute(
                    "INSERT INTO pending (user_id, data, code) VALUES (?, ?, ?)",
                    (user["id"], json.dumps(data), code),
                ).lastrowid
            body = (
                f"<p>Send {money(cents)} from {esc(source['name'])} to {esc(target[1])}, "
                f"reference {esc(reference)}.</p><p>Your confirmation code is <b>{code}</b>. "
                "Type it below to confirm.</p>"
                f'<form method="post" action="/transfer/confirm">{web.csrf_field()}'
                f'<input type="hidden" name="pending_id" value="{pid}">'
                '<label for="code">Confirmation code</label> <input id="code" name="code"> '
                '<button type="submit">Confirm transfer</button></form>'
            )
            return web.page("Confirm transfer", body)
    body = (
        error_lines(errors)
        + f'<form method="post" action="/transfer">{web.csrf_field()}'
        + select(
            "from",
            "From account",
            [(a["id"], f"{a['name']} ({a['number']})") for a in mine],
            form.get("from"),
        )
        + "<br>"
        + select("to", "To", [t[:2] for t in targets], form.get("to"))
        + '<br><label for="amount">Amount</label> <input id="amount" name="amount" '
        f'value="{esc(form.get("amount", ""))}"><br><label for="reference">Reference</label> '
        f'<input id="reference" name="reference" value="{esc(form.get("reference", ""))}"><br>'
        '<button type="submit">Continue</button></form>'
    )
    return web.page("New transfer", body, status=400 if errors else 200)


@app.route("/transfer/confirm", methods=["POST"])
@web.login_required
def confirm():
    user = web.current_user()
    row = web.one(
        "SELECT * FROM pending WHERE id = ? AND user_id = ?",
        (int(request.form.get("pending_id", "0") or 0), user["id"]),
    )
    if row is None or row["used"]:
        web.flash("That transfer is no longer pending; start again.", "error")
        return redirect("/transfer")
    if request.form.get("code", "").strip() != row["code"]:
        web.flash("Wrong confirmation code; the transfer was cancelled. Start again.", "error")
        web.execute(
            "transfer_cancel",
            "UPDATE pending SET used = 1 WHERE id = ?",
            (row["id"],),
            pending_id=row["id"],
        )
        return redirect("/transfer")
    data = json.loads(row["data"])
    source = web.one("SELECT * FROM accounts WHERE id = ?", (data["from"],))
    cents = data["amount_cents"]
    if cents > source["balance_cents"] or (
        used_today(source["id"]) + cents > source["daily_limit_cents"]
    ):
        web.flash("The account can no longer cover this transfer.", "error")
        return redirect("/transfer")
    db = web.db()
    with db:
        db.execute("UPDATE pending SET used = 1 WHERE id = ?", (row["id"],))
        tid = db.execute(
            "INSERT INTO transfers (from_account_id, to_number, to_name, amount_cents, "
            "reference, day) VALUES (?, ?, ?, ?, ?, ?)",
            (source["id"], data["to_number"], data["to_name"], cents, data["reference"], today()),
        ).lastrowid
        db.execute(
            "UPDATE accounts SET balance_cents = balance_cents - ? WHERE id = ?",
            (cents, source["id"]),
        )
        db.execute(
            "UPDATE accounts SET balance_cents = balance_cents + ? WHERE number = ?",
            (cents, data["to_number"]),
        )
        web.audit("transfer", transfer_id=tid, amount_cents=cents)
    web.flash(f"Transfer #{tid} done: {money(cents)} sent.")
    return redirect(f"/accounts/{source['id']}")


if __name__ == "__main__":
    web.main()
