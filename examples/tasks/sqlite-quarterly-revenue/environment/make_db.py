"""Build /data/shop.db deterministically."""
import random
import sqlite3
from datetime import datetime, timedelta

rng = random.Random(4242)
db = sqlite3.connect("/data/shop.db")
db.executescript(
    """
    CREATE TABLE customers (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        country TEXT NOT NULL
    );
    CREATE TABLE products (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        category TEXT NOT NULL,
        list_price_cents INTEGER NOT NULL
    );
    CREATE TABLE orders (
        id INTEGER PRIMARY KEY,
        customer_id INTEGER NOT NULL REFERENCES customers(id),
        placed_at TEXT NOT NULL,          -- 'YYYY-MM-DD HH:MM:SS', UTC
        status TEXT NOT NULL CHECK (status IN ('paid', 'pending', 'cancelled', 'refunded'))
    );
    CREATE TABLE order_items (
        id INTEGER PRIMARY KEY,
        order_id INTEGER NOT NULL REFERENCES orders(id),
        product_id INTEGER NOT NULL REFERENCES products(id),
        quantity INTEGER NOT NULL,
        unit_price_cents INTEGER NOT NULL  -- price actually charged, per unit
    );
    """
)
first = ["Ada", "Grace", "Linus", "Margaret", "Ken", "Barbara", "Dennis", "Frances", "Alan",
         "Edsger", "Radia", "Guido", "Anita", "Donald", "Hedy", "Niklaus"]
last = ["Lovelace", "Hopper", "Torvalds", "Hamilton", "Thompson", "Liskov", "Ritchie", "Allen",
        "Turing", "Dijkstra", "Perlman", "van Rossum", "Borg", "Knuth", "Lamarr", "Wirth"]
customers = []
for cid in range(1, 41):
    name = f"{rng.choice(first)} {rng.choice(last)}"
    if cid % 9 == 0:
        name = f"{rng.choice(last)}, {rng.choice(first)}"  # some names contain a comma
    if cid == 17:
        name = 'Dana "DJ" O\'Neil'
    customers.append((cid, name, f"user{cid}@example.com", rng.choice(["DE", "FR", "US", "NL"])))
db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", customers)

products = [(pid, f"Product {pid:02d}", rng.choice(["books", "garden", "toys", "audio"]),
             rng.randint(199, 15999)) for pid in range(1, 26)]
db.executemany("INSERT INTO products VALUES (?, ?, ?, ?)", products)

orders, items = [], []
start = datetime(2023, 11, 1)
oid = iid = 0


def add_order(customer_id, placed, status, lines):
    global oid, iid
    oid += 1
    orders.append((oid, customer_id, placed.strftime("%Y-%m-%d %H:%M:%S"), status))
    for product_id, qty, price in lines:
        iid += 1
        items.append((iid, oid, product_id, qty, price))


for _ in range(600):
    placed = start + timedelta(seconds=rng.randint(0, 210 * 24 * 3600))
    status = rng.choices(["paid", "pending", "cancelled", "refunded"], [70, 10, 10, 10])[0]
    lines = []
    for _ in range(rng.randint(1, 4)):
        pid, _n, _c, price = rng.choice(products)
        lines.append((pid, rng.randint(1, 5), price - rng.choice([0, 0, 0, 50, 100])))
    # customers 35..37 only get the hand-made orders below; 38..40 never order
    add_order(rng.randint(1, 34), placed, status, lines)

# Edge cases around the quarter's boundaries.
add_order(3, datetime(2023, 12, 31, 23, 59, 59), "paid", [(4, 2, 1999)])
add_order(3, datetime(2024, 1, 1, 0, 0, 0), "paid", [(5, 1, 2500)])
add_order(8, datetime(2024, 3, 31, 23, 59, 59), "paid", [(6, 3, 1250)])
add_order(8, datetime(2024, 4, 1, 0, 0, 0), "paid", [(6, 3, 1250)])
add_order(12, datetime(2024, 3, 31, 12, 30, 0), "refunded", [(7, 10, 9999)])
# Two customers with identical Q1 revenue (ties are broken by customer id).
for cid in (36, 35):
    add_order(cid, datetime(2024, 2, 14, 10, 0, 0), "paid", [(9, 2, 4321), (10, 1, 1000)])
# A customer whose only Q1 orders are not paid.
add_order(37, datetime(2024, 2, 1, 9, 0, 0), "pending", [(11, 1, 5000)])

db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
db.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?, ?)", items)
db.commit()
db.execute("VACUUM")
db.close()
