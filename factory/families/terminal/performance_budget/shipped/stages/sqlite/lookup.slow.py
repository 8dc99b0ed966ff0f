    def customer(cid):
        row = db.execute(
            "SELECT name, region FROM customers WHERE cid = ? ORDER BY rowid LIMIT 1", (cid,)
        ).fetchone()
        return row if row else ("?", "unknown")
