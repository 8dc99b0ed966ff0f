import csv
import sqlite3
from pathlib import Path

DB = "/data/shop.db"
OUT = Path("/app/q1_2024_revenue.csv")
HEADER = ["customer_id", "customer_name", "paid_orders", "revenue"]


def _connect():
    return sqlite3.connect(f"file:{DB}?mode=ro", uri=True)


def _expected():
    """Recompute the answer in Python from the raw tables (integer cents, no SQL aggregation)."""
    db = _connect()
    names = dict(db.execute("SELECT id, name FROM customers"))
    qualifying = {
        oid: cid
        for oid, cid, placed, status in db.execute(
            "SELECT id, customer_id, placed_at, status FROM orders"
        )
        if status == "paid" and "2024-01-01 00:00:00" <= placed <= "2024-03-31 23:59:59"
    }
    cents, orders = {}, {}
    for oid, qty, price in db.execute("SELECT order_id, quantity, unit_price_cents FROM order_items"):
        if oid in qualifying:
            cid = qualifying[oid]
            cents[cid] = cents.get(cid, 0) + qty * price
    for oid, cid in qualifying.items():
        orders.setdefault(cid, set()).add(oid)
    ranked = sorted(orders, key=lambda cid: (-cents.get(cid, 0), cid))
    return [
        [str(cid), names[cid], str(len(orders[cid])),
         f"{cents.get(cid, 0) // 100}.{cents.get(cid, 0) % 100:02d}"]
        for cid in ranked
    ]


def _rows():
    assert OUT.is_file(), f"{OUT} does not exist"
    with OUT.open(newline="") as fh:
        rows = [row for row in csv.reader(fh) if row]
    assert rows, f"{OUT} is empty"
    return rows


def test_database_untouched():
    db = _connect()
    counts = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("customers", "products", "orders", "order_items")]
    assert counts == [40, 25, 608, 1522]
    paid = db.execute("SELECT COUNT(*) FROM orders WHERE status = 'paid'").fetchone()[0]
    assert paid == 427


def test_header():
    assert _rows()[0] == HEADER


def test_same_customers():
    got = {row[0] for row in _rows()[1:]}
    want = {row[0] for row in _expected()}
    assert len(want) > 30
    assert got == want


def test_rows_exact_and_ordered():
    assert _rows()[1:] == _expected()
