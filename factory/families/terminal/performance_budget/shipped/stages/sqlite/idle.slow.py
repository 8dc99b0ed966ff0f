    def has_orders(cid):
        return db.execute("SELECT 1 FROM orders WHERE cid = ? LIMIT 1", (cid,)).fetchone() is not None
