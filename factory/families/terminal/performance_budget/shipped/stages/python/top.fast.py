def rank_members(rows):
    totals = {}
    for rec in rows:
        totals[rec[WHO]] = totals.get(rec[WHO], 0) + int(rec[QTY]) * int(rec[PRICE])
    return totals


def top_member(members, ranking):
    """The member with the largest total (ties: the smallest name)."""
    return min(members, key=lambda name: (-ranking.get(name, 0), name))
