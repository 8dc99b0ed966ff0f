    def refund_count(oid):
        return db.execute("SELECT COUNT(*) FROM refunds WHERE oid = ?", (oid,)).fetchone()[0]
