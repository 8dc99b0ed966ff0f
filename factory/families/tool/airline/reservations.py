"""Existing reservations in a seeded airline state: what a customer already booked, with seat
counts, fees and payment history as the domain computes them."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.airline import (
    BAG_FEE,
    FREE_BAGS,
    INSURANCE_FEE,
    reservation_code,
)

from .data import (
    CODE_ALPHABET,
)


def plant_reservation(
    rng: random.Random,
    state: JSON,
    user: JSON,
    flights: list[JSON],
    cabin: str,
    *,
    passengers: list[JSON] | None = None,
    bags: int = 0,
    insurance: bool = False,
    hours_ago: int = 72,
    payment: JSON | None = None,
) -> JSON:
    """Add an existing reservation (seat counts already account for it)."""
    if passengers is None:
        passengers = [
            {
                "first_name": user["name"]["first_name"],
                "last_name": user["name"]["last_name"],
                "dob": user["dob"],
            }
        ]
    passengers = sorted(passengers, key=lambda p: (p["last_name"], p["first_name"], p["dob"]))
    count = len(passengers)
    legs = [
        {
            "flight_number": f["flight_number"],
            "date": f["date"],
            "origin": f["origin"],
            "destination": f["destination"],
            "price": f["prices"][cabin],
        }
        for f in flights
    ]
    nonfree = max(0, bags - FREE_BAGS[user["membership"]][cabin] * count)
    price = sum(leg["price"] for leg in legs) * count + INSURANCE_FEE * count * insurance
    price += BAG_FEE * nonfree
    if payment is None:
        payment = next(m for m in user["payment_methods"] if m["source"] == "credit_card")
    taken = {r["reservation_id"] for r in state["reservations"]}
    taken |= {reservation_code(state["next_reservation"] + i) for i in range(3)}
    code = reservation_code(state["next_reservation"])
    while code in taken:
        code = "".join(rng.choice(CODE_ALPHABET) for _ in range(6))
    now = datetime.datetime.fromisoformat(state["now"])
    created = (now - datetime.timedelta(hours=hours_ago, minutes=rng.randint(0, 59))).isoformat()
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
        "payment_history": [{"payment_id": payment["payment_id"], "amount": float(price)}],
        "created_at": created,
        "status": "active",
        "compensated": False,
    }
    state["reservations"].append(reservation)
    user["reservations"].append(code)
    return reservation
