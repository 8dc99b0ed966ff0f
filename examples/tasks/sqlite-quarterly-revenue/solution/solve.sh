#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
import sqlite3

db = sqlite3.connect("file:/data/shop.db?mode=ro", uri=True)
rows = db.execute(
    """
    SELECT c.id, c.name, COUNT(DISTINCT o.id) AS paid_orders,
           SUM(i.quantity * i.unit_price_cents) AS cents
    FROM customers c
    JOIN orders o ON o.customer_id = c.id
    JOIN order_items i ON i.order_id = o.id
    WHERE o.status = 'paid'
      AND o.placed_at >= '2024-01-01 00:00:00'
      AND o.placed_at <= '2024-03-31 23:59:59'
    GROUP BY c.id, c.name
    ORDER BY cents DESC, c.id ASC
    """
).fetchall()
with open("/app/q1_2024_revenue.csv", "w", newline="") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["customer_id", "customer_name", "paid_orders", "revenue"])
    for cid, name, n, cents in rows:
        writer.writerow([cid, name, n, f"{cents // 100}.{cents % 100:02d}"])
PY
