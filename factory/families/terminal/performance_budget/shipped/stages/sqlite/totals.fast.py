    sums = dict(db.execute("SELECT cid, SUM(cents) FROM orders GROUP BY cid"))
    spend = [(sums.get(cid, 0), cid) for (cid,) in db.execute("SELECT DISTINCT cid FROM customers")]
