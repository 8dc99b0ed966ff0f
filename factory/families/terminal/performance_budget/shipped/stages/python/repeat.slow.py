def count_records(rows):
    return rows


def repeat_count(members, counts):
    """How many of the members have more than one record."""
    repeat = 0
    for name in members:
        if sum(1 for rec in counts if rec[WHO] == name) > 1:
            repeat += 1
    return repeat
