"""The airline's policy: the document the agent follows, the fees and limits it states, the
reasons to hand a request over, and the rules that refuse a call breaking it. The domain's tools
are in :mod:`.airline` (which serves this module's ``DOMAIN``)."""

from __future__ import annotations

import datetime

from ..core import JSON, Domain, lookup

CABINS = ("basic_economy", "economy", "business")
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
BAG_FEE = 50
INSURANCE_FEE = 30
MAX_PASSENGERS = 5
COMPENSATION = {"cancelled": 100, "delayed": 50}

POLICY = """\
# Airline reservation policy

You are the airline's customer service agent. The customer gives you their user id; look
everything else up with the tools and never guess ids, fares or payment methods. Prices are
in US dollars.

## Booking

1. A reservation belongs to one user and has one cabin (`basic_economy`, `economy` or
   `business`) for all its flights and between 1 and 5 passengers. Every passenger needs a
   first name, a last name and a date of birth (YYYY-MM-DD). The user need not fly.
2. Only flights whose status is `available`, on or after today, can be booked, and each needs
   a free seat in the cabin for every passenger.
3. The price is the cabin fare of every flight for every passenger, plus travel insurance
   ($30 per passenger) when the customer wants it, plus checked bags beyond the free
   allowance. It is paid with one payment method from the user's profile; a gift card or a
   travel certificate must cover the whole amount.
4. Free checked bags per passenger:

   | membership | basic economy | economy | business |
   |------------|---------------|---------|----------|
   | regular    | 0             | 1       | 2        |
   | silver     | 1             | 2       | 3        |
   | gold       | 2             | 3       | 4        |

   Each further bag costs $50.

## Changing a reservation

5. The flights of a **basic economy** reservation can never be changed. Other reservations may
   change flights, but every new flight must have the same origin and destination as the
   flight it replaces.
6. Any reservation, basic economy included, may change cabin for all its flights at once
   (keeping its flights). Fare differences are charged to, or refunded to, a payment method
   from the user's profile.
7. Passengers' names and dates of birth may be corrected, but the number of passengers can
   never change.
8. Checked bags can be added (extra bags are charged), never removed. Insurance cannot be
   added or removed after booking.
9. Cancelled reservations, and reservations with a flight that has already departed, cannot
   be changed.

## Cancelling

10. A reservation can be cancelled only when at least one of these holds: it was booked less
    than 24 hours ago, it has travel insurance, it is in business cabin, or the airline
    cancelled one of its flights. A reservation with a flight that has already been flown
    cannot be cancelled. The refund goes back to the original payment methods.

## Compensation

11. Only when the customer asks for it: a travel certificate for a reservation with a cancelled
    flight ($100 per passenger) or a delayed flight ($50 per passenger), and only when the user
    is a silver or gold member, or the reservation has insurance, or is in business cabin.
    At most one certificate per reservation.
"""

HANDOVERS = {
    "baggage_claim": "a checked bag was lost, damaged or arrived late (the baggage desk "
    "handles every claim)",
    "special_assistance": "a traveller needs a wheelchair, medical equipment or other "
    "assistance at the airport or on board",
    "group_travel": "a trip for more than five travellers (group bookings are quoted by the "
    "group desk)",
}

DOMAIN = Domain("airline", "Airline Reservations", POLICY, handovers=HANDOVERS)


def _lookup(state: JSON, reservation_id: str) -> JSON | None:
    return lookup(state["reservations"], "reservation_id", reservation_id)


def flight_of(state: JSON, leg: JSON) -> JSON | None:
    """The flight a leg (``flight_number``, ``date``) names, or None."""
    return next(
        (
            f
            for f in state["flights"]
            if f["flight_number"] == leg.get("flight_number") and f["date"] == leg.get("date")
        ),
        None,
    )


def flight_statuses(state: JSON, reservation: JSON) -> list[str | None]:
    """The status of each flight of the reservation (None for a flight not in the schedule)."""
    return [(flight_of(state, leg) or {}).get("status") for leg in reservation["flights"]]


# --- rules ---------------------------------------------------------------------------------


@DOMAIN.rule
def passenger_limit(state: JSON, tool: str, args: JSON) -> str | None:
    if tool == "book_reservation" and len(args["passengers"]) > MAX_PASSENGERS:
        return f"book_reservation with {len(args['passengers'])} passengers (max {MAX_PASSENGERS})"
    return None


@DOMAIN.rule_on("update_reservation_flights")
def flight_changes(state: JSON, tool: str, args: JSON) -> str | None:
    reservation = _lookup(state, args["reservation_id"])
    if reservation is None:
        return None
    old = [(leg["flight_number"], leg["date"]) for leg in reservation["flights"]]
    new = [
        (leg.get("flight_number"), leg.get("date"))
        for leg in args["flights"]
        if isinstance(leg, dict)
    ]
    if sorted(old) == sorted(new):
        return None
    if reservation["cabin"] == "basic_economy":
        return f"changing the flights of basic economy reservation {reservation['reservation_id']}"
    if len(new) != len(old):
        return f"changing the number of flights of {reservation['reservation_id']}"
    resolved = [flight_of(state, leg) for leg in args["flights"] if isinstance(leg, dict)]
    if any(f is None for f in resolved):
        return None  # the tool reports the unknown flight
    resolved.sort(key=lambda f: (f["date"], f["departure"]))
    for before, after in zip(reservation["flights"], resolved, strict=True):
        if (before["origin"], before["destination"]) != (after["origin"], after["destination"]):
            return (
                f"replacing {before['origin']}-{before['destination']} with "
                f"{after['origin']}-{after['destination']} in {reservation['reservation_id']}"
            )
    return None


@DOMAIN.rule_on("update_reservation_passengers")
def passenger_count(state: JSON, tool: str, args: JSON) -> str | None:
    reservation = _lookup(state, args["reservation_id"])
    if reservation and len(args["passengers"]) != len(reservation["passengers"]):
        return (
            f"changing the number of passengers of {reservation['reservation_id']} from "
            f"{len(reservation['passengers'])} to {len(args['passengers'])}"
        )
    return None


@DOMAIN.rule_on("update_reservation_baggages")
def bags_only_added(state: JSON, tool: str, args: JSON) -> str | None:
    reservation = _lookup(state, args["reservation_id"])
    if reservation and args["total_baggages"] < reservation["total_baggages"]:
        return (
            f"removing checked bags from {reservation['reservation_id']} "
            f"({reservation['total_baggages']} -> {args['total_baggages']})"
        )
    return None


def _hours_since(state: JSON, stamp: str) -> float:
    try:
        now = datetime.datetime.fromisoformat(state["now"])
        then = datetime.datetime.fromisoformat(stamp)
    except ValueError:
        return float("inf")
    return (now - then).total_seconds() / 3600


@DOMAIN.rule_on("cancel_reservation")
def cancellation(state: JSON, tool: str, args: JSON) -> str | None:
    reservation = _lookup(state, args["reservation_id"])
    if reservation is None or reservation["status"] != "active":
        return None
    code = reservation["reservation_id"]
    statuses = flight_statuses(state, reservation)
    flown = any(
        leg["date"] < state["today"] and status != "cancelled"
        for leg, status in zip(reservation["flights"], statuses, strict=True)
    )
    if flown:
        return f"cancelling {code}, which has a flight already flown"
    if (
        _hours_since(state, reservation["created_at"]) < 24
        or reservation["insurance"]
        or reservation["cabin"] == "business"
        or "cancelled" in statuses
    ):
        return None
    return (
        f"cancelling {code}: booked {reservation['created_at']}, more than 24 hours ago, "
        f"without insurance, not business, no flight cancelled by the airline"
    )


@DOMAIN.rule_on("send_certificate")
def compensation(state: JSON, tool: str, args: JSON) -> str | None:
    reservation = _lookup(state, args["reservation_id"])
    user = lookup(state["users"], "user_id", args["user_id"])
    if reservation is None or user is None:
        return None
    if (
        user["membership"] in ("silver", "gold")
        or reservation["insurance"]
        or reservation["cabin"] == "business"
    ):
        return None
    return (
        f"a certificate for {reservation['reservation_id']}: {user['user_id']} is a "
        f"{user['membership']} member and the reservation has no insurance and is not business"
    )
