def index_people(roster):
    return roster


def group_of(index, who):
    """The group of a member: their first line in the roster wins."""
    found = [rec[GROUP] for rec in index if rec[WHO] == who]
    return found[0] if found else "unassigned"
