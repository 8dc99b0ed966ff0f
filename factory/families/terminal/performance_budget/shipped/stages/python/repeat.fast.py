def count_records(rows):
    counts = {}
    for rec in rows:
        counts[rec[WHO]] = counts.get(rec[WHO], 0) + 1
    return counts


def repeat_count(members, counts):
    """How many of the members have more than one record."""
    return sum(1 for name in members if counts.get(name, 0) > 1)
