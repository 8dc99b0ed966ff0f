"""Tool family: calendar & scheduling requests (book, move, invite, cancel)."""

from __future__ import annotations

import datetime
import random
from pathlib import Path

from factory.toolenv.core import JSON
from pydantic import BaseModel, ConfigDict, Field

from factory.datafiles import load_toml_model
from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.slots import CapWord, Slots, text
from factory.families.tool.scenario import Call, Scenario, Shape
from factory.families.tool.toolfamily import ToolFamily, draw_today
from factory.families.tool.wordings import Wordings
from factory.vocabulary import Difficulty


class _Meetings(BaseModel):
    """meetings.toml: the calendar's default room names and meeting topics, and the meeting
    slots (start, end)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rooms: list[str]
    topics: list[str]
    slots: list[tuple[str, str]]


_MEETINGS = load_toml_model(
    Path(__file__).parent / "meetings.toml", _Meetings, "the calendar's meetings"
)
ROOMS = _MEETINGS.rooms
TOPICS = _MEETINGS.topics
SLOTS = _MEETINGS.slots

WORDINGS = Wordings(
    Path(__file__).parent / "wordings.toml", "hello", "move", "book", "trap-colleague-meeting"
)
"""How a colleague words each part of a scheduling request (wordings.toml beside this module)."""


def _weekdays(start: datetime.date, count: int) -> list[str]:
    days, day = [], start
    while len(days) < count:
        day += datetime.timedelta(days=1)
        if day.weekday() < 5:
            days.append(day.isoformat())
    return days


def _pretty(date: str) -> str:
    day = datetime.date.fromisoformat(date)
    return f"{day.strftime('%A')} {day.strftime('%B')} {day.day}"


class CalendarSlots(Slots):
    """A company's shared calendar: the names of its meeting rooms and the topics of its
    meetings."""

    rooms: list[CapWord] = Field(
        min_length=6,
        max_length=9,
        description="names of the meeting rooms, one capitalised word each",
        examples=[["Anchor", "Buoy", "Compass", "Dock", "Galley", "Keel"]],
    )
    topics: list[text(r"^[a-z][a-z0-9]{1,11}( [a-z][a-z0-9]{1,11}){0,2}$")] = Field(  # type: ignore[valid-type]
        min_length=4,
        max_length=8,
        description="topics of its meetings, one to three lowercase words each",
        examples=[["tide planning", "crew rota", "hull inspection", "budget sync"]],
    )


@register
class CalendarRequests(ToolFamily):
    """Scheduling requests over a seeded company calendar. Easy: book one meeting (look people
    up, find a free room big enough, create). Medium: move one of my meetings and invite
    someone. Hard: medium plus a booking, and a request to cancel a colleague's meeting,
    which the policy forbids."""

    name = "tool-calendar"
    title = "Handle a scheduling request with calendar tools under a booking policy"
    toolenv_domain = "calendar"
    slots = CalendarSlots

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        today = draw_today(rng)
        days = _weekdays(today, 5)
        names = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 12)
        users = [
            {
                "user_id": f"u-{100 + i}",
                "name": n,
                "email": n.lower().replace(" ", ".") + "@corp.example",
            }
            for i, n in enumerate(names)
        ]
        rooms = [
            {"room_id": f"r-{i + 1}", "name": n, "capacity": rng.choice([2, 4, 6, 8, 12])}
            for i, n in enumerate(rng.sample(self.filled("rooms", ROOMS), 6))
        ]
        events, next_id = [], rng.randrange(200, 900)
        for _ in range(rng.randint(10, 16)):
            organizer = rng.choice(users)["user_id"]
            others = [u["user_id"] for u in users if u["user_id"] != organizer]
            start, end = rng.choice(SLOTS)
            events.append(
                {
                    "event_id": f"ev-{next_id}",
                    "title": rng.choice(self.filled("topics", TOPICS)).capitalize(),
                    "organizer": organizer,
                    "attendees": sorted(rng.sample(others, rng.randint(1, 3))),
                    "room_id": rng.choice(["", *[r["room_id"] for r in rooms]]),
                    "date": rng.choice(days),
                    "start": start,
                    "end": end,
                }
            )
            next_id += 1
        return {
            "today": today.isoformat(),
            "acting_user": users[0]["user_id"],
            "users": users,
            "rooms": rooms,
            "events": _drop_clashes(events),
            "next_event": next_id,
        }

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        """Task-shaped requests only (:attr:`ToolFamily.shapes`)."""
        me = state["acting_user"]
        days = sorted(
            {e["date"] for e in state["events"]}
            | set(_weekdays(datetime.date.fromisoformat(state["today"]), 5))
        )
        calls: list[Call] = []
        parts: list[str] = []
        traps: list[Call] = []
        near: dict[str, list[Call]] = {}
        people = [u for u in state["users"] if u["user_id"] != me]
        if difficulty is not Difficulty.EASY:
            mine = _own_event(rng, state, me, days, self.filled("topics", TOPICS))
            state["events"].append(mine)
            state["events"] = _drop_clashes(state["events"], keep=mine["event_id"])
            new_day = rng.choice([d for d in days if d != mine["date"]])
            start, end = _free_slot(rng, state, mine.get("room_id", ""), new_day, mine["event_id"])
            guest = rng.choice([p for p in people if p["user_id"] not in mine["attendees"]])
            calls += [
                Call("list_events", {"user_id": me, "date": mine["date"]}),
                Call(
                    "move_event",
                    {"event_id": mine["event_id"], "date": new_day, "start": start, "end": end},
                ),
                Call("find_user", {"query": guest["name"]}),
                Call("add_attendee", {"event_id": mine["event_id"], "user_id": guest["user_id"]}),
            ]
            parts.append(
                WORDINGS.only(
                    "move",
                    title=mine["title"],
                    day=_pretty(mine["date"]),
                    at=mine["start"],
                    new_day=_pretty(new_day),
                    start=start,
                    end=end,
                    guest=guest["name"],
                )
            )
            near["invites-wrong-person"] = [
                *calls[:3],
                Call(
                    "add_attendee",
                    {
                        "event_id": mine["event_id"],
                        "user_id": next(
                            p["user_id"]
                            for p in people
                            if p["user_id"] not in mine["attendees"]
                            and p["user_id"] != guest["user_id"]
                        ),
                    },
                ),
            ]
        if difficulty is not Difficulty.MEDIUM:
            invited = rng.sample(people, {Difficulty.EASY: 2, Difficulty.HARD: 3}[difficulty])
            size = len(invited) + 1
            day = rng.choice(days)
            for _ in range(50):
                start, end = rng.choice(SLOTS)
                free = [
                    r
                    for r in state["rooms"]
                    if r["capacity"] >= size
                    and all(
                        not (
                            e["room_id"] == r["room_id"]
                            and e["date"] == day
                            and e["start"] < end
                            and start < e["end"]
                        )
                        for e in state["events"]
                    )
                ]
                if free:
                    break
            else:
                raise AssertionError("calendar: no free room found")
            title = rng.choice(self.filled("topics", TOPICS)).capitalize()
            calls += [Call("find_user", {"query": p["name"]}) for p in invited]
            calls.append(
                Call(
                    "find_free_rooms",
                    {"date": day, "start": start, "end": end, "min_capacity": size},
                )
            )
            create = Call(
                "create_event",
                {
                    "title": title,
                    "attendees": sorted(p["user_id"] for p in invited),
                    "date": day,
                    "start": start,
                    "end": end,
                    "room_id": free[0]["room_id"],
                },
            )
            calls.append(create)
            parts.append(
                WORDINGS.only(
                    "book",
                    title=title,
                    day=_pretty(day),
                    start=start,
                    end=end,
                    guests=", ".join(p["name"] for p in invited[:-1]),
                    last_guest=invited[-1]["name"],
                )
            )
            near["forgets-a-guest"] = [
                *calls[:-1],
                Call(
                    "create_event",
                    {**create.arguments, "attendees": sorted(p["user_id"] for p in invited[:-1])},
                ),
            ]
        if difficulty is Difficulty.HARD:
            theirs = rng.choice([e for e in state["events"] if e["organizer"] != me])
            owner = next(u for u in state["users"] if u["user_id"] == theirs["organizer"])
            parts.append(
                WORDINGS.only(
                    "trap-colleague-meeting",
                    owner=owner["name"],
                    title=theirs["title"],
                    event=theirs["event_id"],
                    day=_pretty(theirs["date"]),
                )
            )
            traps.append(Call("cancel_event", {"event_id": theirs["event_id"]}))
        hello = WORDINGS.only("hello", name=state["users"][0]["name"], user=me)
        request = " ".join([hello, *parts])
        return Scenario(
            request=request, calls=calls, traps=traps, near_misses=near, tags=["scheduling"]
        )


def new_event(
    state: JSON, title: str, organizer: str, attendees: list[str], day: str, slot: tuple[str, str]
) -> JSON:
    """An event without a room, with the calendar's next id (not added to its events)."""
    event = {
        "event_id": f"ev-{state['next_event']}",
        "title": title,
        "organizer": organizer,
        "attendees": sorted(attendees),
        "room_id": "",
        "date": day,
        "start": slot[0],
        "end": slot[1],
    }
    state["next_event"] += 1
    return event


def room_busy(
    events: list[JSON], room: str, day: str, start: str, end: str, skip: str = ""
) -> bool:
    """Whether one of ``events`` (but ``skip``) holds ``room`` on ``day`` between ``start`` and
    ``end``."""
    return any(
        e["room_id"] == room
        and e["event_id"] != skip
        and e["date"] == day
        and e["start"] < end
        and start < e["end"]
        for e in events
    )


def _own_event(
    rng: random.Random, state: JSON, me: str, days: list[str], topics: list[str]
) -> JSON:
    slot = rng.choice(SLOTS)
    others = [u["user_id"] for u in state["users"] if u["user_id"] != me]
    title = rng.choice(topics).capitalize()
    return new_event(state, title, me, rng.sample(others, 2), rng.choice(days), slot)


def _free_slot(rng: random.Random, state: JSON, room: str, day: str, skip: str) -> tuple[str, str]:
    slots = list(SLOTS)
    rng.shuffle(slots)
    for start, end in slots:
        if not room or not room_busy(state["events"], room, day, start, end, skip):
            return start, end
    raise AssertionError("calendar: no free slot")


def _drop_clashes(events: list[JSON], keep: str = "") -> list[JSON]:
    """Keep events whose room is free (the seeded calendar must itself be consistent)."""
    kept: list[JSON] = []
    for event in sorted(events, key=lambda e: e["event_id"] != keep):
        if event["room_id"] and room_busy(
            kept, event["room_id"], event["date"], event["start"], event["end"]
        ):
            continue
        kept.append(event)
    return sorted(kept, key=lambda e: e["event_id"])
