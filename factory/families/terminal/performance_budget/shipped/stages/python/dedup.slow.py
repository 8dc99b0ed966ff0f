def unique(rows):
    """Drop repeated records: the first record with a given id wins."""
    out = []
    for rec in rows:
        if rec[ID] in [kept[ID] for kept in out]:
            continue
        out.append(rec)
    return out
