    def order_count(cid):
        return db.execute("SELECT COUNT(*) FROM orders WHERE cid = ?", (cid,)).fetchone()[0]
