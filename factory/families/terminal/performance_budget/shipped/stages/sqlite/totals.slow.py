    spend = []
    for (cid,) in db.execute("SELECT DISTINCT cid FROM customers").fetchall():
        total = db.execute(
            "SELECT COALESCE(SUM(cents), 0) FROM orders WHERE cid = ?", (cid,)
        ).fetchone()[0]
        spend.append((total, cid))
