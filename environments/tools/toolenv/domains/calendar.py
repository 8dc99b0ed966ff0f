"""Calendar and scheduling: people, meeting rooms and events, booked for one acting user."""

from __future__ import annotations

from ..core import JSON, Domain, ToolError, find, finder, lookup, require

POLICY = """\
# Scheduling policy

1. You act for the customer named in the state as the acting user. You may create events
   organised by them, and move, cancel or change attendees only of events **they organise**.
2. Events take place on weekdays (Monday to Friday) between 08:00 and 18:00, on or after today.
3. An event with a room needs a room whose capacity is at least the number of people in it
   (organiser plus attendees). Never book a room that is already taken at that time.
4. Look people up with `find_user`; never guess a user id.
"""

HANDOVERS = {
    "facilities": "a meeting room's equipment is broken, or the room needs cleaning or repairs",
    "visitor_access": "guests from outside the company need visitor badges to enter the building",
}

DOMAIN = Domain("calendar", "Calendar & Scheduling", POLICY, handovers=HANDOVERS)

_TIME = {"type": "string", "description": "24-hour time, HH:MM"}
_DATE = {"type": "string", "description": "ISO date, YYYY-MM-DD"}
_ID = {"type": "string"}
_user = finder("users", "user_id", "user")
_event = finder("events", "event_id", "event")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def weekday(date: str) -> str:
    """Day name of an ISO date (no clock, no locale)."""
    import datetime

    return _WEEKDAYS[datetime.date.fromisoformat(date).weekday()]


def _minutes(hhmm: str) -> int:
    try:
        hours, minutes = hhmm.split(":")
        return int(hours) * 60 + int(minutes)
    except ValueError:
        raise ToolError(f"bad time {hhmm!r}: use HH:MM") from None


def _overlaps(event: JSON, date: str, start: str, end: str) -> bool:
    return (
        event["date"] == date
        and _minutes(event["start"]) < _minutes(end)
        and _minutes(start) < _minutes(event["end"])
    )


def _room_free(state: JSON, room_id: str, date: str, start: str, end: str, skip: str = "") -> bool:
    return not any(
        e["room_id"] == room_id and e["event_id"] != skip and _overlaps(e, date, start, end)
        for e in state["events"]
    )


@DOMAIN.tool(
    "Find users whose name contains the query (case-insensitive).", {"query": {"type": "string"}}
)
def find_user(state: JSON, query: str) -> list[JSON]:
    return [u for u in state["users"] if query.lower() in u["name"].lower()]


DOMAIN.record_tool("get_user", "Details of one user.", "user_id", _user)


DOMAIN.table_tool("list_rooms", "All meeting rooms with their capacity.", "rooms")


@DOMAIN.tool(
    "Events on a date that the user organises or attends.",
    {"user_id": _ID, "date": _DATE},
)
def list_events(state: JSON, user_id: str, date: str) -> list[JSON]:
    return [
        e
        for e in state["events"]
        if e["date"] == date and (e["organizer"] == user_id or user_id in e["attendees"])
    ]


DOMAIN.record_tool("get_event", "One event by id.", "event_id", _event)


@DOMAIN.tool(
    "Rooms free for the whole slot with at least min_capacity seats.",
    {"date": _DATE, "start": _TIME, "end": _TIME, "min_capacity": {"type": "integer"}},
)
def find_free_rooms(state: JSON, date: str, start: str, end: str, min_capacity: int) -> list[JSON]:
    return [
        r
        for r in state["rooms"]
        if r["capacity"] >= min_capacity and _room_free(state, r["room_id"], date, start, end)
    ]


@DOMAIN.tool(
    "Create an event organised by the acting user; returns the new event.",
    {
        "title": {"type": "string"},
        "attendees": {"type": "array", "items": {"type": "string"}},
        "date": _DATE,
        "start": _TIME,
        "end": _TIME,
        "room_id": {"type": "string"},
    },
    required=["title", "attendees", "date", "start", "end"],
    mutates=True,
)
def create_event(
    state: JSON,
    title: str,
    attendees: list[str],
    date: str,
    start: str,
    end: str,
    room_id: str = "",
) -> JSON:
    require(_minutes(start) < _minutes(end), "the event must end after it starts")
    for user_id in attendees:
        _user(state, user_id)
    if room_id:
        find(state["rooms"], "room_id", room_id, "room")
        require(_room_free(state, room_id, date, start, end), f"room {room_id} is taken then")
    event = {
        "event_id": f"ev-{state['next_event']}",
        "title": title,
        "organizer": state["acting_user"],
        "attendees": sorted(set(attendees)),
        "room_id": room_id,
        "date": date,
        "start": start,
        "end": end,
    }
    state["next_event"] += 1
    state["events"].append(event)
    return event


@DOMAIN.tool(
    "Move an event to a new slot (its room must be free then).",
    {"event_id": _ID, "date": _DATE, "start": _TIME, "end": _TIME},
    mutates=True,
)
def move_event(state: JSON, event_id: str, date: str, start: str, end: str) -> JSON:
    event = _event(state, event_id)
    require(_minutes(start) < _minutes(end), "the event must end after it starts")
    if event["room_id"]:
        require(
            _room_free(state, event["room_id"], date, start, end, skip=event_id),
            f"room {event['room_id']} is taken then",
        )
    event.update(date=date, start=start, end=end)
    return event


@DOMAIN.tool("Cancel (delete) an event.", {"event_id": _ID}, mutates=True)
def cancel_event(state: JSON, event_id: str) -> JSON:
    event = _event(state, event_id)
    state["events"].remove(event)
    return {"cancelled": event_id}


@DOMAIN.tool(
    "Add a person to an event.",
    {"event_id": _ID, "user_id": _ID},
    mutates=True,
)
def add_attendee(state: JSON, event_id: str, user_id: str) -> JSON:
    event = _event(state, event_id)
    _user(state, user_id)
    require(user_id not in event["attendees"], f"{user_id} already attends {event_id}")
    event["attendees"] = sorted([*event["attendees"], user_id])
    return event


@DOMAIN.tool(
    "Remove a person from an event.",
    {"event_id": _ID, "user_id": _ID},
    mutates=True,
)
def remove_attendee(state: JSON, event_id: str, user_id: str) -> JSON:
    event = _event(state, event_id)
    require(user_id in event["attendees"], f"{user_id} does not attend {event_id}")
    event["attendees"] = [a for a in event["attendees"] if a != user_id]
    return event


@DOMAIN.rule
def only_own_events(state: JSON, tool: str, args: JSON) -> str | None:
    if tool in ("move_event", "cancel_event", "add_attendee", "remove_attendee"):
        event = lookup(state["events"], "event_id", args["event_id"])
        if event and event["organizer"] != state["acting_user"]:
            return f"{tool} on {event['event_id']}, which {event['organizer']} organises"
    return None


@DOMAIN.rule_on("create_event", "move_event")
def business_hours(state: JSON, tool: str, args: JSON) -> str | None:
    date, start, end = args["date"], args["start"], args["end"]
    try:
        day = weekday(date)
    except ValueError:
        return None  # the tool itself rejects the date
    if day in ("Saturday", "Sunday"):
        return f"{tool} on a {day} ({date})"
    if date < state["today"]:
        return f"{tool} in the past ({date})"
    if ":" in start and ":" in end and (_minutes(start) < 8 * 60 or _minutes(end) > 18 * 60):
        return f"{tool} outside 08:00-18:00 ({start}-{end})"
    return None


@DOMAIN.rule
def room_capacity(state: JSON, tool: str, args: JSON) -> str | None:
    if tool == "create_event" and args.get("room_id"):
        room = lookup(state["rooms"], "room_id", args["room_id"])
        people = len(set(args["attendees"]) | {state["acting_user"]})
        if room and room["capacity"] < people:
            return f"room {room['room_id']} seats {room['capacity']}, the event has {people}"
    if tool == "add_attendee":
        event = lookup(state["events"], "event_id", args["event_id"])
        if event and event["room_id"]:
            room = next(r for r in state["rooms"] if r["room_id"] == event["room_id"])
            if len(event["attendees"]) + 2 > room["capacity"]:
                return f"room {room['room_id']} is full for {event['event_id']}"
    return None
