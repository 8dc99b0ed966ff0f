def rank_members(rows):
    return rows


def top_member(members, ranking):
    """The member with the largest total (ties: the smallest name)."""
    best, best_total = None, -1
    for name in sorted(members):
        total = 0
        for rec in ranking:
            amount = int(rec[QTY]) * int(rec[PRICE])
            if rec[WHO] == name:
                total += amount
        if total > best_total:
            best, best_total = name, total
    return best
