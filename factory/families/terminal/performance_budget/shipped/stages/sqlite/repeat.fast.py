    per_customer = dict(db.execute("SELECT cid, COUNT(*) FROM orders GROUP BY cid"))

    def order_count(cid):
        return per_customer.get(cid, 0)
