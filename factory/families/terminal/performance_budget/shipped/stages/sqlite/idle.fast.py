    ordering = {cid for (cid,) in db.execute("SELECT DISTINCT cid FROM orders")}

    def has_orders(cid):
        return cid in ordering
