"""Airline reservations: users with membership tiers and payment methods, direct flights with
seats and fares per cabin, and reservations (book, change, cancel, compensate)."""

from __future__ import annotations

import ast
import datetime
import operator

from ..core import JSON, Domain, ToolError, finder, lookup, require

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

_DATE = {"type": "string", "description": "ISO date, YYYY-MM-DD"}
_ID = {"type": "string"}
_CABIN = {"type": "string", "enum": list(CABINS)}
_FLIGHTS = {
    "type": "array",
    "description": "the flights, each {flight_number, date}",
    "items": {
        "type": "object",
        "properties": {"flight_number": {"type": "string"}, "date": {"type": "string"}},
    },
}
_PASSENGERS = {
    "type": "array",
    "description": "each {first_name, last_name, dob (YYYY-MM-DD)}",
    "items": {
        "type": "object",
        "properties": {
            "first_name": {"type": "string"},
            "last_name": {"type": "string"},
            "dob": {"type": "string", "description": "YYYY-MM-DD"},
        },
    },
}
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def reservation_code(number: int) -> str:
    """A six-character reservation code for a counter value (deterministic)."""
    value = (number * 2654435761) % (32**6)
    chars = []
    for _ in range(6):
        value, digit = divmod(value, 32)
        chars.append(_CODE_ALPHABET[digit])
    return "".join(chars)


def _date(text: str, what: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except (TypeError, ValueError):
        raise ToolError(f"{what}: bad date {text!r}, use YYYY-MM-DD") from None


def _name(text: object, what: str) -> str:
    require(isinstance(text, str) and text.strip() != "", f"{what} must be a non-empty string")
    return " ".join(part.capitalize() for part in str(text).split())


_user = finder("users", "user_id", "user")
_reservation = finder("reservations", "reservation_id", "reservation")


def _flight(state: JSON, number: str, date: str) -> JSON:
    for flight in state["flights"]:
        if flight["flight_number"] == number and flight["date"] == date:
            return flight
    raise ToolError(f"no flight {number} on {date}")


def _lookup(state: JSON, reservation_id: str) -> JSON | None:
    return lookup(state["reservations"], "reservation_id", reservation_id)


def _flight_of(state: JSON, leg: JSON) -> JSON | None:
    return next(
        (
            f
            for f in state["flights"]
            if f["flight_number"] == leg.get("flight_number") and f["date"] == leg.get("date")
        ),
        None,
    )


def _departed(state: JSON, reservation: JSON) -> bool:
    return any(leg["date"] < state["today"] for leg in reservation["flights"])


def _legs(state: JSON, flights: list[JSON], cabin: str, passengers: int) -> list[JSON]:
    """Resolve and check flights for booking; returns reservation legs with current fares."""
    require(flights, "give at least one flight")
    legs = []
    for i, item in enumerate(flights):
        require(
            isinstance(item, dict) and set(item) == {"flight_number", "date"},
            f"flights[{i}] must be {{flight_number, date}}",
        )
        _date(item["date"], f"flights[{i}].date")
        flight = _flight(state, item["flight_number"], item["date"])
        require(
            flight["status"] == "available",
            f"flight {flight['flight_number']} on {flight['date']} is {flight['status']}",
        )
        require(flight["date"] >= state["today"], f"flight {flight['flight_number']} has left")
        legs.append(flight)
    legs.sort(key=lambda f: (f["date"], f["departure"]))
    for a, b in zip(legs, legs[1:], strict=False):
        require(
            a["destination"] == b["origin"],
            f"flight {b['flight_number']} does not leave from {a['destination']}",
        )
    return [
        {
            "flight_number": f["flight_number"],
            "date": f["date"],
            "origin": f["origin"],
            "destination": f["destination"],
            "price": f["prices"][cabin],
        }
        for f in legs
    ]


def _passengers(passengers: list[JSON]) -> list[JSON]:
    require(passengers, "give at least one passenger")
    out = []
    for i, item in enumerate(passengers):
        require(
            isinstance(item, dict) and set(item) == {"first_name", "last_name", "dob"},
            f"passengers[{i}] must be {{first_name, last_name, dob}}",
        )
        _date(item["dob"], f"passengers[{i}].dob")
        out.append(
            {
                "first_name": _name(item["first_name"], f"passengers[{i}].first_name"),
                "last_name": _name(item["last_name"], f"passengers[{i}].last_name"),
                "dob": item["dob"],
            }
        )
    return sorted(out, key=lambda p: (p["last_name"], p["first_name"], p["dob"]))


def _take_seats(state: JSON, legs: list[JSON], cabin: str, count: int) -> None:
    for leg in legs:
        flight = _flight(state, leg["flight_number"], leg["date"])
        require(
            flight["seats"][cabin] >= count,
            f"flight {leg['flight_number']} on {leg['date']} has only "
            f"{flight['seats'][cabin]} {cabin} seats left",
        )
        flight["seats"][cabin] -= count


def _release_seats(state: JSON, legs: list[JSON], cabin: str, count: int) -> None:
    for leg in legs:
        flight = _flight_of(state, leg)
        if flight is not None:
            flight["seats"][cabin] += count


def _nonfree(user: JSON, cabin: str, passengers: int, bags: int) -> int:
    return max(0, bags - FREE_BAGS[user["membership"]][cabin] * passengers)


def _pay(state: JSON, user: JSON, reservation: JSON, payment_id: str, amount: float) -> None:
    """Charge (amount > 0) or refund (amount < 0) a payment method of the user."""
    amount = round(amount, 2)
    if amount == 0:
        return
    method = next((m for m in user["payment_methods"] if m["payment_id"] == payment_id), None)
    require(method is not None, f"{payment_id} is not a payment method of {user['user_id']}")
    if method["source"] != "credit_card":
        require(
            amount < 0 or method["balance"] >= amount,
            f"{payment_id} has a balance of {method['balance']}, the amount is {amount}",
        )
        method["balance"] = round(method["balance"] - amount, 2)
    reservation["payment_history"].append({"payment_id": payment_id, "amount": amount})


def _check_payment(user: JSON, payment_id: str) -> None:
    require(
        any(m["payment_id"] == payment_id for m in user["payment_methods"]),
        f"{payment_id} is not a payment method of {user['user_id']}",
    )


def _active(state: JSON, reservation: JSON) -> None:
    require(
        reservation["status"] == "active",
        f"reservation {reservation['reservation_id']} is {reservation['status']}",
    )
    require(
        not _departed(state, reservation),
        f"reservation {reservation['reservation_id']} has a flight that already departed",
    )


# --- read-only tools -----------------------------------------------------------------------


@DOMAIN.tool(
    "A user's profile: name, membership, payment methods and reservation codes.",
    {"user_id": _ID},
)
def get_user_details(state: JSON, user_id: str) -> JSON:
    return _user(state, user_id)


@DOMAIN.tool(
    "Direct flights from origin to destination (airport codes) on a date, with status, "
    "departure/arrival times, free seats and fares per cabin.",
    {"origin": _ID, "destination": _ID, "date": _DATE},
)
def search_direct_flight(state: JSON, origin: str, destination: str, date: str) -> list[JSON]:
    _date(date, "date")
    return [
        f
        for f in state["flights"]
        if f["origin"] == origin.upper()
        and f["destination"] == destination.upper()
        and f["date"] == date
    ]


@DOMAIN.tool("Status of one flight on a date.", {"flight_number": _ID, "date": _DATE})
def get_flight_status(state: JSON, flight_number: str, date: str) -> JSON:
    flight = _flight(state, flight_number, date)
    return {k: flight[k] for k in ("flight_number", "date", "status", "departure", "arrival")}


@DOMAIN.tool("All airports the airline serves (code and city).")
def list_all_airports(state: JSON) -> list[JSON]:
    return state["airports"]


@DOMAIN.tool("One reservation by its code.", {"reservation_id": _ID})
def get_reservation_details(state: JSON, reservation_id: str) -> JSON:
    return _reservation(state, reservation_id)


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    raise ToolError("only numbers, + - * / and parentheses are allowed")


@DOMAIN.tool(
    "Evaluate an arithmetic expression (numbers, + - * / and parentheses), rounded to cents.",
    {"expression": {"type": "string"}},
)
def calculate(state: JSON, expression: str) -> float:
    try:
        tree = ast.parse(expression, mode="eval")
        return round(_evaluate(tree), 2)
    except (SyntaxError, ZeroDivisionError) as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {exc}") from None


# --- changes -------------------------------------------------------------------------------


@DOMAIN.tool(
    "Book a reservation for a user and charge it to one payment method; returns it.",
    {
        "user_id": _ID,
        "flights": _FLIGHTS,
        "cabin": _CABIN,
        "passengers": _PASSENGERS,
        "payment_id": _ID,
        "total_baggages": {"type": "integer", "description": "checked bags, all passengers"},
        "insurance": {"type": "boolean"},
    },
    mutates=True,
)
def book_reservation(
    state: JSON,
    user_id: str,
    flights: list[JSON],
    cabin: str,
    passengers: list[JSON],
    payment_id: str,
    total_baggages: int,
    insurance: bool,
) -> JSON:
    user = _user(state, user_id)
    people = _passengers(passengers)
    require(total_baggages >= 0, "total_baggages cannot be negative")
    _check_payment(user, payment_id)
    legs = _legs(state, flights, cabin, len(people))
    _take_seats(state, legs, cabin, len(people))
    nonfree = _nonfree(user, cabin, len(people), total_baggages)
    price = sum(leg["price"] for leg in legs) * len(people)
    price += INSURANCE_FEE * len(people) * insurance + BAG_FEE * nonfree
    round_trip = len(legs) > 1 and legs[-1]["destination"] == legs[0]["origin"]
    reservation = {
        "reservation_id": reservation_code(state["next_reservation"]),
        "user_id": user_id,
        "origin": legs[0]["origin"],
        "destination": legs[0]["destination"] if round_trip else legs[-1]["destination"],
        "trip_type": "round_trip" if round_trip else "one_way",
        "cabin": cabin,
        "flights": legs,
        "passengers": people,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree,
        "insurance": insurance,
        "payment_history": [],
        "created_at": state["now"],
        "status": "active",
        "compensated": False,
    }
    state["next_reservation"] += 1
    _pay(state, user, reservation, payment_id, price)
    state["reservations"].append(reservation)
    user["reservations"].append(reservation["reservation_id"])
    return reservation


@DOMAIN.tool(
    "Change a reservation's flights and/or cabin (give the full new list of flights, the same "
    "ones to change only the cabin). The fare difference is charged or refunded to payment_id.",
    {"reservation_id": _ID, "cabin": _CABIN, "flights": _FLIGHTS, "payment_id": _ID},
    mutates=True,
)
def update_reservation_flights(
    state: JSON, reservation_id: str, cabin: str, flights: list[JSON], payment_id: str
) -> JSON:
    reservation = _reservation(state, reservation_id)
    _active(state, reservation)
    user = _user(state, reservation["user_id"])
    _check_payment(user, payment_id)
    count = len(reservation["passengers"])
    old = reservation["flights"]
    _release_seats(state, old, reservation["cabin"], count)
    legs = _legs(state, flights, cabin, count)
    # A flight kept in the same cabin keeps the fare it was booked at.
    for leg in legs:
        for before in old:
            same = (before["flight_number"], before["date"]) == (leg["flight_number"], leg["date"])
            if same and cabin == reservation["cabin"]:
                leg["price"] = before["price"]
    _take_seats(state, legs, cabin, count)
    difference = (sum(x["price"] for x in legs) - sum(x["price"] for x in old)) * count
    old_nonfree = reservation["nonfree_baggages"]
    nonfree = _nonfree(user, cabin, count, reservation["total_baggages"])
    require(
        (legs, cabin) != (old, reservation["cabin"]),
        "nothing to change: same flights and cabin",
    )
    reservation.update(flights=legs, cabin=cabin, nonfree_baggages=max(nonfree, old_nonfree))
    _pay(state, user, reservation, payment_id, difference)
    return reservation


@DOMAIN.tool(
    "Replace the passengers of a reservation (give the full new list).",
    {"reservation_id": _ID, "passengers": _PASSENGERS},
    mutates=True,
)
def update_reservation_passengers(state: JSON, reservation_id: str, passengers: list[JSON]) -> JSON:
    reservation = _reservation(state, reservation_id)
    _active(state, reservation)
    people = _passengers(passengers)
    require(
        len(people) == len(reservation["passengers"]),
        f"the reservation has {len(reservation['passengers'])} passengers",
    )
    require(people != reservation["passengers"], "nothing to change: same passengers")
    reservation["passengers"] = people
    return reservation


@DOMAIN.tool(
    "Set the total number of checked bags of a reservation; extra bags beyond the free "
    "allowance are charged to payment_id.",
    {"reservation_id": _ID, "total_baggages": {"type": "integer"}, "payment_id": _ID},
    mutates=True,
)
def update_reservation_baggages(
    state: JSON, reservation_id: str, total_baggages: int, payment_id: str
) -> JSON:
    reservation = _reservation(state, reservation_id)
    _active(state, reservation)
    user = _user(state, reservation["user_id"])
    _check_payment(user, payment_id)
    require(total_baggages >= 0, "total_baggages cannot be negative")
    require(total_baggages != reservation["total_baggages"], "nothing to change: same bags")
    count = len(reservation["passengers"])
    nonfree = _nonfree(user, reservation["cabin"], count, total_baggages)
    extra = max(0, nonfree - reservation["nonfree_baggages"])
    reservation.update(
        total_baggages=total_baggages, nonfree_baggages=reservation["nonfree_baggages"] + extra
    )
    _pay(state, user, reservation, payment_id, BAG_FEE * extra)
    return reservation


@DOMAIN.tool(
    "Cancel a reservation; everything paid is refunded to the original payment methods.",
    {"reservation_id": _ID},
    mutates=True,
)
def cancel_reservation(state: JSON, reservation_id: str) -> JSON:
    reservation = _reservation(state, reservation_id)
    require(reservation["status"] == "active", f"reservation {reservation_id} is cancelled")
    user = _user(state, reservation["user_id"])
    paid: dict[str, float] = {}
    for entry in reservation["payment_history"]:
        paid[entry["payment_id"]] = paid.get(entry["payment_id"], 0) + entry["amount"]
    for payment_id, amount in sorted(paid.items()):
        known = any(m["payment_id"] == payment_id for m in user["payment_methods"])
        if round(amount, 2) > 0 and known:
            _pay(state, user, reservation, payment_id, -amount)
    _release_seats(
        state, reservation["flights"], reservation["cabin"], len(reservation["passengers"])
    )
    reservation["status"] = "cancelled"
    return reservation


@DOMAIN.tool(
    "Send a travel certificate to a user as compensation for a cancelled or delayed flight of "
    "one of their reservations; the amount follows the policy. Returns the new certificate.",
    {
        "user_id": _ID,
        "reservation_id": _ID,
        "reason": {"type": "string", "enum": sorted(COMPENSATION)},
    },
    mutates=True,
)
def send_certificate(state: JSON, user_id: str, reservation_id: str, reason: str) -> JSON:
    user = _user(state, user_id)
    reservation = _reservation(state, reservation_id)
    require(reservation["user_id"] == user_id, f"{reservation_id} is not {user_id}'s reservation")
    require(not reservation["compensated"], f"{reservation_id} was already compensated")
    statuses = [(_flight_of(state, leg) or {}).get("status") for leg in reservation["flights"]]
    require(reason in statuses, f"no flight of {reservation_id} was {reason}")
    certificate = {
        "payment_id": f"certificate_{state['next_certificate']}",
        "source": "certificate",
        "balance": COMPENSATION[reason] * len(reservation["passengers"]),
    }
    state["next_certificate"] += 1
    user["payment_methods"].append(certificate)
    reservation["compensated"] = True
    return certificate


# --- policy --------------------------------------------------------------------------------


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
    resolved = [_flight_of(state, leg) for leg in args["flights"] if isinstance(leg, dict)]
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
    statuses = [(_flight_of(state, leg) or {}).get("status") for leg in reservation["flights"]]
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
