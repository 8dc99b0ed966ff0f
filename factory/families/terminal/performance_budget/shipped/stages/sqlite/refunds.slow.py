    def refunded(oid):
        return db.execute(
            "SELECT COALESCE(SUM(cents), 0) FROM refunds WHERE oid = ?", (oid,)
        ).fetchone()[0]
