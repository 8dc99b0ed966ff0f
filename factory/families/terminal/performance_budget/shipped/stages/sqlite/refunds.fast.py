    back = dict(db.execute("SELECT oid, SUM(cents) FROM refunds GROUP BY oid"))

    def refunded(oid):
        return back.get(oid, 0)
