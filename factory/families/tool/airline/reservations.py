"""Existing reservations in a seeded airline state: what a customer already booked, with seat
counts, fees and payment history as the domain computes them."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.airline import (
    CODE_ALPHABET,
    fare_legs,
    new_reservation,
    reservation_code,
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
    if payment is None:
        payment = next(m for m in user["payment_methods"] if m["source"] == "credit_card")
    taken = {r["reservation_id"] for r in state["reservations"]}
    taken |= {reservation_code(state["next_reservation"] + i) for i in range(3)}
    code = reservation_code(state["next_reservation"])
    while code in taken:
        code = "".join(rng.choice(CODE_ALPHABET) for _ in range(6))
    now = datetime.datetime.fromisoformat(state["now"])
    created = (now - datetime.timedelta(hours=hours_ago, minutes=rng.randint(0, 59))).isoformat()
    reservation, price = new_reservation(
        code, user, fare_legs(flights, cabin), cabin, passengers, bags, insurance, created
    )
    reservation["payment_history"].append(
        {"payment_id": payment["payment_id"], "amount": float(price)}
    )
    state["reservations"].append(reservation)
    user["reservations"].append(code)
    return reservation
