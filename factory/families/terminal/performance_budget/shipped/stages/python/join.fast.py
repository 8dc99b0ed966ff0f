def index_people(roster):
    index = {}
    for rec in roster:
        if rec[WHO] not in index:
            index[rec[WHO]] = rec[GROUP]
    return index


def group_of(index, who):
    """The group of a member: their first line in the roster wins."""
    return index.get(who, "unassigned")
