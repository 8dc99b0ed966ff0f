"""Airline reservations: users with membership tiers and payment methods, direct flights with
seats and fares per cabin, and reservations (book, change, cancel, compensate). The policy, its
fees and limits and the rules that enforce it are in :mod:`.airline_policy`."""

from __future__ import annotations

import ast
import datetime
import operator

from ..core import JSON, ToolError, finder, lookup, require
from .airline_policy import (
    BAG_FEE,
    CABINS,
    COMPENSATION,
    DOMAIN,
    FREE_BAGS,
    INSURANCE_FEE,
    flight_of,
    flight_statuses,
)

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
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""The characters of a reservation code."""


def reservation_code(number: int) -> str:
    """A six-character reservation code for a counter value (deterministic)."""
    value = (number * 2654435761) % (32**6)
    chars = []
    for _ in range(6):
        value, digit = divmod(value, 32)
        chars.append(CODE_ALPHABET[digit])
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
    flight = flight_of(state, {"flight_number": number, "date": date})
    require(flight is not None, f"no flight {number} on {date}")
    return flight


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
    return fare_legs(legs, cabin)


def fare_legs(flights: list[JSON], cabin: str) -> list[JSON]:
    """A reservation's legs: each of ``flights`` with its current fare in ``cabin``."""
    return [
        {
            "flight_number": f["flight_number"],
            "date": f["date"],
            "origin": f["origin"],
            "destination": f["destination"],
            "price": f["prices"][cabin],
        }
        for f in flights
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
        flight = flight_of(state, leg)
        if flight is not None:
            flight["seats"][cabin] += count


def _nonfree(user: JSON, cabin: str, passengers: int, bags: int) -> int:
    return max(0, bags - FREE_BAGS[user["membership"]][cabin] * passengers)


def _pay(state: JSON, user: JSON, reservation: JSON, payment_id: str, amount: float) -> None:
    """Charge (amount > 0) or refund (amount < 0) a payment method of the user."""
    amount = round(amount, 2)
    if amount == 0:
        return
    method = _method(user, payment_id)
    if method["source"] != "credit_card":
        require(
            amount < 0 or method["balance"] >= amount,
            f"{payment_id} has a balance of {method['balance']}, the amount is {amount}",
        )
        method["balance"] = round(method["balance"] - amount, 2)
    reservation["payment_history"].append({"payment_id": payment_id, "amount": amount})


def _method(user: JSON, payment_id: str) -> JSON:
    method = lookup(user["payment_methods"], "payment_id", payment_id)
    require(method is not None, f"{payment_id} is not a payment method of {user['user_id']}")
    return method


def _active(state: JSON, reservation_id: str) -> JSON:
    """The reservation, which must be active with no flight departed (only then may it change)."""
    reservation = _reservation(state, reservation_id)
    require(
        reservation["status"] == "active",
        f"reservation {reservation['reservation_id']} is {reservation['status']}",
    )
    require(
        all(leg["date"] >= state["today"] for leg in reservation["flights"]),
        f"reservation {reservation['reservation_id']} has a flight that already departed",
    )
    return reservation


# --- read-only tools -----------------------------------------------------------------------


DOMAIN.record_tool(
    "get_user_details",
    "A user's profile: name, membership, payment methods and reservation codes.",
    "user_id",
    _user,
)


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


DOMAIN.table_tool(
    "list_all_airports", "All airports the airline serves (code and city).", "airports"
)


DOMAIN.record_tool(
    "get_reservation_details", "One reservation by its code.", "reservation_id", _reservation
)


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
    _method(user, payment_id)
    legs = _legs(state, flights, cabin, len(people))
    _take_seats(state, legs, cabin, len(people))
    code = reservation_code(state["next_reservation"])
    reservation, price = new_reservation(
        code, user, legs, cabin, people, total_baggages, insurance, state["now"]
    )
    state["next_reservation"] += 1
    _pay(state, user, reservation, payment_id, price)
    state["reservations"].append(reservation)
    user["reservations"].append(reservation["reservation_id"])
    return reservation


def new_reservation(
    code: str,
    user: JSON,
    legs: list[JSON],
    cabin: str,
    passengers: list[JSON],
    bags: int,
    insurance: bool,
    created_at: str,
) -> tuple[JSON, int]:
    """A new active reservation of ``user`` (nothing paid yet) and its price: the fares and the
    insurance per passenger, and the fee of each bag over the free allowance."""
    count = len(passengers)
    nonfree = _nonfree(user, cabin, count, bags)
    price = sum(leg["price"] for leg in legs) * count
    price += INSURANCE_FEE * count * insurance + BAG_FEE * nonfree
    round_trip = len(legs) > 1 and legs[-1]["destination"] == legs[0]["origin"]
    reservation = {
        "reservation_id": code,
        "user_id": user["user_id"],
        "origin": legs[0]["origin"],
        "destination": legs[0]["destination"] if round_trip else legs[-1]["destination"],
        "trip_type": "round_trip" if round_trip else "one_way",
        "cabin": cabin,
        "flights": legs,
        "passengers": passengers,
        "total_baggages": bags,
        "nonfree_baggages": nonfree,
        "insurance": insurance,
        "payment_history": [],
        "created_at": created_at,
        "status": "active",
        "compensated": False,
    }
    return reservation, price


@DOMAIN.tool(
    "Change a reservation's flights and/or cabin (give the full new list of flights, the same "
    "ones to change only the cabin). The fare difference is charged or refunded to payment_id.",
    {"reservation_id": _ID, "cabin": _CABIN, "flights": _FLIGHTS, "payment_id": _ID},
    mutates=True,
)
def update_reservation_flights(
    state: JSON, reservation_id: str, cabin: str, flights: list[JSON], payment_id: str
) -> JSON:
    reservation = _active(state, reservation_id)
    user = _user(state, reservation["user_id"])
    _method(user, payment_id)
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
    reservation = _active(state, reservation_id)
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
    reservation = _active(state, reservation_id)
    user = _user(state, reservation["user_id"])
    _method(user, payment_id)
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
    statuses = flight_statuses(state, reservation)
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
