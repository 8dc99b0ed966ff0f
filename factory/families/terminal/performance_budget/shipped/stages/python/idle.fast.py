def idle_counts(roster, rows):
    """Roster members without any record, per group (their first line in the roster wins)."""
    active = {row[WHO] for row in rows}
    idle = {}
    seen = set()
    for rec in roster:
        who = rec[WHO]
        if who in seen:
            continue
        seen.add(who)
        if who not in active:
            idle[rec[GROUP]] = idle.get(rec[GROUP], 0) + 1
    return idle
