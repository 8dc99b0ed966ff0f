"""Shop: a product catalogue with search and pages, a cart, coupons, checkout and orders."""

from flask import redirect, request
from kit import WebApp, bullets, error_lines, esc, search_form, select, table, text_inputs, where

SCHEMA = """
CREATE TABLE products (
    id INTEGER PRIMARY KEY, sku TEXT UNIQUE NOT NULL, name TEXT NOT NULL, category TEXT NOT NULL,
    price_cents INTEGER NOT NULL, stock INTEGER NOT NULL
);
CREATE TABLE coupons (
    code TEXT PRIMARY KEY, percent INTEGER NOT NULL, min_total_cents INTEGER NOT NULL,
    active INTEGER NOT NULL
);
CREATE TABLE cart_items (
    user_id INTEGER NOT NULL REFERENCES users(id), product_id INTEGER NOT NULL REFERENCES products(id),
    qty INTEGER NOT NULL, PRIMARY KEY (user_id, product_id)
);
CREATE TABLE cart_coupons (user_id INTEGER PRIMARY KEY, code TEXT NOT NULL);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), status TEXT NOT NULL,
    subtotal_cents INTEGER NOT NULL, discount_cents INTEGER NOT NULL, total_cents INTEGER NOT NULL,
    coupon_code TEXT, ship_name TEXT NOT NULL, ship_street TEXT NOT NULL, ship_city TEXT NOT NULL,
    ship_zip TEXT NOT NULL
);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL,
    qty INTEGER NOT NULL, price_cents INTEGER NOT NULL
);
"""

web = WebApp(
    "Shop",
    schema=SCHEMA,
    per_page=8,
    nav=[
        ("Products", "/products"),
        ("Cart", "/cart"),
        ("My orders", "/orders"),
    ],
)
app = web.app
web.home()


def money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def cart_lines(user_id: int) -> list:
    return web.query(
        "SELECT p.*, c.qty FROM cart_items c JOIN products p ON p.id = c.product_id "
        "WHERE c.user_id = ? ORDER BY p.name",
        (user_id,),
    )


def totals(user_id: int) -> tuple[int, int, str | None]:
    subtotal = sum(line["price_cents"] * line["qty"] for line in cart_lines(user_id))
    row = web.one("SELECT code FROM cart_coupons WHERE user_id = ?", (user_id,))
    if not row:
        return subtotal, 0, None
    coupon = web.one("SELECT * FROM coupons WHERE code = ?", (row["code"],))
    if not coupon or subtotal < coupon["min_total_cents"]:
        return subtotal, 0, None
    return subtotal, subtotal * coupon["percent"] // 100, coupon["code"]


@app.route("/products")
def products():
    q = request.args.get("q", "").strip()
    category = request.args.get("category", "")
    sql, args = where(
        "SELECT * FROM products WHERE 1=1",
        (q, "(name LIKE ? OR sku LIKE ?)", (f"%{q}%", f"%{q}%")),
        (category, "category = ?", (category,)),
    )
    rows, pager = web.paginate(sql + " ORDER BY name", args)
    categories = web.column("SELECT DISTINCT category FROM products ORDER BY category")
    body = (
        search_form(
            "/products",
            "Search",
            q,
            select("category", "Category", categories, category, "All"),
            button="Search",
        )
        + table(
            ("Product", "SKU", "Price", "Stock"),
            (
                (
                    f'<a href="/products/{r["id"]}">{esc(r["name"])}</a>',
                    esc(r["sku"]),
                    money(r["price_cents"]),
                    r["stock"],
                )
                for r in rows
            ),
        )
        + pager
    )
    return web.page("Products", body)


@app.route("/products/<int:product_id>")
def product(product_id: int):
    row = web.one_or_404("SELECT * FROM products WHERE id = ?", (product_id,), "product")
    body = (
        f"<p>SKU {esc(row['sku'])} - {esc(row['category'])}</p><p>Price: {money(row['price_cents'])}"
        f"</p><p>In stock: {row['stock']}</p>"
        f'<form method="post" action="/cart/add">{web.csrf_field()}'
        f'<input type="hidden" name="product_id" value="{row["id"]}">'
        '<label for="qty">Quantity</label> <input id="qty" name="qty" type="number" value="1"> '
        '<button type="submit">Add to cart</button></form>'
    )
    return web.page(row["name"], body)


def cart_form(qty_default: str, qty_invalid: int):
    """A cart form's answer: the signed-in user, the product id, its row (None when there is
    no such product) and the quantity (``qty_invalid`` when it is not a whole number)."""
    user = web.current_user()
    product_id = int(request.form.get("product_id", "0") or 0)
    row = web.one("SELECT * FROM products WHERE id = ?", (product_id,))
    try:
        qty = int(request.form.get("qty", qty_default))
    except ValueError:
        qty = qty_invalid
    return user, product_id, row, qty


@app.route("/cart/add", methods=["POST"])
@web.login_required
def cart_add():
    user, product_id, row, qty = cart_form("1", 0)
    if row is None or qty < 1:
        web.flash("Choose a product and a quantity of at least 1.", "error")
        return redirect(f"/products/{product_id}")
    have = web.one(
        "SELECT qty FROM cart_items WHERE user_id = ? AND product_id = ?", (user["id"], product_id)
    )
    total = qty + (have["qty"] if have else 0)
    if total > row["stock"]:
        web.flash(f"Only {row['stock']} of {row['name']} in stock.", "error")
        return redirect(f"/products/{product_id}")
    web.execute(
        "cart_add",
        "INSERT INTO cart_items (user_id, product_id, qty) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id, product_id) DO UPDATE SET qty = excluded.qty",
        (user["id"], product_id, total),
        product_id=product_id,
        qty=total,
    )
    web.flash(f"Added {qty} x {row['name']} to your cart.")
    return redirect("/cart")


@app.route("/cart")
@web.login_required
def cart():
    user = web.current_user()
    lines = cart_lines(user["id"])
    subtotal, discount, code = totals(user["id"])
    rows = "".join(
        f"<tr><td>{esc(line['name'])}</td><td>{money(line['price_cents'])}</td><td>"
        f'<form method="post" action="/cart/update">{web.csrf_field()}'
        f'<input type="hidden" name="product_id" value="{line["id"]}">'
        f'<label for="qty-{line["id"]}">Qty of {esc(line["name"])}</label> '
        f'<input id="qty-{line["id"]}" name="qty" type="number" value="{line["qty"]}"> '
        '<button type="submit">Update</button></form></td><td>'
        f'<form method="post" action="/cart/remove">{web.csrf_field()}'
        f'<input type="hidden" name="product_id" value="{line["id"]}">'
        f'<button type="submit">Remove {esc(line["name"])}</button></form></td></tr>'
        for line in lines
    )
    body = (
        (
            "<table><tr><th>Product</th><th>Price</th><th>Quantity</th><th></th></tr>"
            f"{rows}</table>"
            if lines
            else "<p>Your cart is empty.</p>"
        )
        + f"<p>Subtotal: {money(subtotal)}</p>"
        + (f"<p>Coupon {esc(code)}: -{money(discount)}</p>" if code else "")
        + f"<p>Total: {money(subtotal - discount)}</p>"
        + f'<form method="post" action="/cart/coupon">{web.csrf_field()}'
        '<label for="code">Coupon code</label> <input id="code" name="code"> '
        '<button type="submit">Apply coupon</button></form>'
        + ('<p><a href="/checkout">Proceed to checkout</a></p>' if lines else "")
    )
    return web.page("Your cart", body)


@web.action("/cart/update", "/cart")
def cart_update():
    user, product_id, row, qty = cart_form("", -1)
    if row is None or qty < 0:
        web.flash("Quantity must be a whole number, 0 or more.", "error")
    elif qty > row["stock"]:
        web.flash(f"Only {row['stock']} of {row['name']} in stock.", "error")
    elif qty == 0:
        remove_line(user["id"], product_id)
    else:
        web.execute(
            "cart_update",
            "UPDATE cart_items SET qty = ? WHERE user_id = ? AND product_id = ?",
            (qty, user["id"], product_id),
            product_id=product_id,
            qty=qty,
        )
        web.flash(f"{row['name']}: quantity {qty}.")


def remove_line(user_id: int, product_id: int) -> None:
    web.execute(
        "cart_remove",
        "DELETE FROM cart_items WHERE user_id = ? AND product_id = ?",
        (user_id, product_id),
        product_id=product_id,
    )


@web.action("/cart/remove", "/cart")
def cart_remove():
    remove_line(web.current_user()["id"], int(request.form.get("product_id", "0") or 0))
    web.flash("Removed from your cart.")


@web.action("/cart/coupon", "/cart")
def cart_coupon():
    user = web.current_user()
    code = request.form.get("code", "").strip().upper()
    coupon = web.one("SELECT * FROM coupons WHERE code = ? AND active = 1", (code,))
    subtotal, _, _ = totals(user["id"])
    if coupon is None:
        web.flash(f"Coupon {code or '(empty)'} does not exist or has expired.", "error")
    elif subtotal < coupon["min_total_cents"]:
        web.flash(
            f"Coupon {code} needs a subtotal of at least {money(coupon['min_total_cents'])}.",
            "error",
        )
    else:
        web.execute(
            "coupon_apply",
            "INSERT INTO cart_coupons (user_id, code) VALUES (?, ?) "
            "ON CONFLICT (user_id) DO UPDATE SET code = excluded.code",
            (user["id"], code),
            code=code,
        )
        web.flash(f"Coupon {code} applied: {coupon['percent']}% off.")


@app.route("/checkout", methods=["GET", "POST"])
@web.login_required
def checkout():
    user = web.current_user()
    lines = cart_lines(user["id"])
    if not lines:
        web.flash("Your cart is empty.", "error")
        return redirect("/cart")
    errors = []
    form = request.form if request.method == "POST" else {}
    if request.method == "POST":
        for field in ("name", "street", "city", "zip"):
            if not form.get(field, "").strip():
                errors.append(f"{field.capitalize()} is required.")
        zip_code = form.get("zip", "").strip()
        if zip_code and not (len(zip_code) == 5 and zip_code.isdigit()):
            errors.append("ZIP code must be exactly 5 digits.")
        for line in lines:
            if line["qty"] > line["stock"]:
                errors.append(f"Only {line['stock']} of {line['name']} left.")
        if not errors:
            subtotal, discount, code = totals(user["id"])
            db = web.db()
            with db:
                cursor = db.execute(
                    "INSERT INTO orders (user_id, status, subtotal_cents, discount_cents, "
                    "total_cents, coupon_code, ship_name, ship_street, ship_city, ship_zip) "
                    "VALUES (?, 'placed', ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        user["id"],
                        subtotal,
                        discount,
                        subtotal - discount,
                        code,
                        form["name"].strip(),
                        form["street"].strip(),
                        form["city"].strip(),
                        zip_code,
                    ),
                )
                order_id = cursor.lastrowid
                for line in lines:
                    db.execute(
                        "INSERT INTO order_items VALUES (?, ?, ?, ?)",
                        (order_id, line["id"], line["qty"], line["price_cents"]),
                    )
                    db.execute(
                        "UPDATE products SET stock = stock - ? WHERE id = ?",
                        (line["qty"], line["id"]),
                    )
                db.execute("DELETE FROM cart_items WHERE user_id = ?", (user["id"],))
                db.execute("DELETE FROM cart_coupons WHERE user_id = ?", (user["id"],))
                web.audit("place_order", order_id=order_id, total_cents=subtotal - discount)
            web.flash(f"Order #{order_id} placed.")
            return redirect(f"/orders/{order_id}")
    subtotal, discount, code = totals(user["id"])
    fields = text_inputs(
        form,
        (
            ("name", "Full name"),
            ("street", "Street"),
            ("city", "City"),
            ("zip", "ZIP code"),
        ),
    )
    body = (
        error_lines(errors)
        + f"<p>{len(lines)} product(s), total {money(subtotal - discount)}"
        + (f" with coupon {esc(code)}" if code else "")
        + "</p>"
        + f'<form method="post" action="/checkout">{web.csrf_field()}{fields}'
        '<button type="submit">Place order</button></form>'
    )
    return web.page("Checkout", body, status=400 if errors else 200)


@app.route("/orders")
@web.login_required
def orders():
    user = web.current_user()
    rows, pager = web.paginate(
        "SELECT * FROM orders WHERE user_id = ? ORDER BY id DESC", (user["id"],)
    )
    body = (
        bullets(
            f'<a href="/orders/{r["id"]}">Order #{r["id"]}</a> - {esc(r["status"])} - '
            f"{money(r['total_cents'])}"
            for r in rows
        )
        + pager
    )
    return web.page("My orders", body)


@app.route("/orders/<int:order_id>")
@web.login_required
def order(order_id: int):
    user = web.current_user()
    row = web.one_or_404(
        "SELECT * FROM orders WHERE id = ? AND user_id = ?", (order_id, user["id"]), "order"
    )
    items = web.query(
        "SELECT p.name, i.qty, i.price_cents FROM order_items i JOIN products p "
        "ON p.id = i.product_id WHERE i.order_id = ?",
        (order_id,),
    )
    body = (
        bullets(f"{i['qty']} x {esc(i['name'])} at {money(i['price_cents'])}" for i in items)
        + f"<p>Status: {esc(row['status'])}. Total {money(row['total_cents'])}"
        + (f" (coupon {esc(row['coupon_code'])})" if row["coupon_code"] else "")
        + "</p>"
        + f"<p>Ship to: {esc(row['ship_name'])}, {esc(row['ship_street'])}, "
        f"{esc(row['ship_city'])} {esc(row['ship_zip'])}</p>"
    )
    return web.page(f"Order #{order_id}", body)


if __name__ == "__main__":
    web.main()
