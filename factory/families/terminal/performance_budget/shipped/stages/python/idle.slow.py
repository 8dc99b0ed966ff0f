def idle_counts(roster, rows):
    """Roster members without any record, per group (their first line in the roster wins)."""
    idle = {}
    seen = []
    for rec in roster:
        who = rec[WHO]
        if who in seen:
            continue
        seen.append(who)
        if not any(row[WHO] == who for row in rows):
            idle[rec[GROUP]] = idle.get(rec[GROUP], 0) + 1
    return idle
