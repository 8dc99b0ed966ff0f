    counted = dict(db.execute("SELECT oid, COUNT(*) FROM refunds GROUP BY oid"))

    def refund_count(oid):
        return counted.get(oid, 0)
