def unique(rows):
    """Drop repeated records: the first record with a given id wins."""
    seen = set()
    out = []
    for rec in rows:
        if rec[ID] in seen:
            continue
        seen.add(rec[ID])
        out.append(rec)
    return out
