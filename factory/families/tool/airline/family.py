"""Tool family: airline customer service (book, change cabin or flights, bags, passengers,
cancel, compensation) under a tau-bench-like airline policy."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.airline import (
    DOMAIN,
    FREE_BAGS,
)

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import Scenario, Shape
from factory.families.tool.toolfamily import ToolFamily, draw_pieces, draw_today, request_text
from factory.tasks.user_profile import RequiredFact
from factory.vocabulary import Difficulty

from .data import AIRPORTS, BRANDS, TIMES, random_dob
from .handovers import HANDOVERS
from .plan import AirlinePlan
from .reservations import plant_reservation
from .traps import (
    trap_add_passenger,
    trap_basic_flight,
    trap_cancel,
    trap_compensation,
    trap_remove_bags,
)


@register
class AirlineRequests(ToolFamily):
    """Airline customer-service requests over a seeded schedule and customer base. Easy: one
    change to an existing reservation (add bags, fix a passenger's name, change cabin, cancel
    a fresh booking). Medium: book a new trip (airport, flight and payment method found by
    lookup) plus one change. Hard: a booking and two more changes. Requests may add parts the
    policy forbids (none at easy, up to one at medium, up to three at hard: cancelling a
    non-refundable trip, moving a basic economy flight, removing bags, adding a passenger, or
    compensation the member is not entitled to); a request may be one to refuse as a whole, or
    include a part for a human colleague (a baggage claim, assistance at the airport, a group
    trip)."""

    name = "tool-airline"
    shapes = tuple(Shape)
    title = "Handle an airline customer's request with reservation tools under an airline policy"
    toolenv_domain = "airline"
    toolenv_modules = ("domains/airline_policy.py",)

    # --- seeding -----------------------------------------------------------------------------

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        today = draw_today(rng, datetime.date(2026, 2, 2))
        now = f"{today.isoformat()}T{rng.randint(7, 19):02d}:{rng.choice(['05', '20', '40']):s}:00"
        airports = rng.sample(AIRPORTS, 7)
        codes = [code for code, _ in airports]
        pairs: list[tuple[str, str]] = []
        while len(pairs) < 5:
            a, b = rng.sample(codes, 2)
            if (a, b) not in pairs and (b, a) not in pairs:
                pairs.append((a, b))
        numbers = rng.sample(range(100, 1000), 40)
        flights = []
        dates = [(today + datetime.timedelta(days=d)).isoformat() for d in range(-3, 10)]
        for a, b in pairs:
            base = rng.randrange(90, 380, 5)
            hours = rng.randint(1, 5)
            for origin, destination in ((a, b), (b, a)):
                for departure in sorted(rng.sample(TIMES, rng.randint(2, 3))):
                    number = f"HAT{numbers.pop()}"
                    factor = rng.choice([0.85, 0.9, 1.0, 1.1, 1.2, 1.3])
                    h, m = map(int, departure.split(":"))
                    arrival = f"{(h + hours) % 24:02d}:{(m + rng.choice([0, 15, 30])) % 60:02d}"
                    for date in dates:
                        economy = int(base * factor * rng.choice([0.9, 1.0, 1.0, 1.15]))
                        if date < today.isoformat():
                            status = rng.choices(["landed", "delayed", "cancelled"], [8, 1, 1])[0]
                        else:
                            status = rng.choices(["available", "cancelled"], [14, 1])[0]
                        flights.append(
                            {
                                "flight_number": number,
                                "origin": origin,
                                "destination": destination,
                                "date": date,
                                "departure": departure,
                                "arrival": arrival,
                                "status": status,
                                "seats": {
                                    "basic_economy": rng.randint(0, 9),
                                    "economy": rng.randint(0, 16),
                                    "business": rng.randint(0, 5),
                                },
                                "prices": {
                                    "basic_economy": int(economy * 0.62),
                                    "economy": economy,
                                    "business": int(economy * 2.7),
                                },
                            }
                        )
        users = []
        names = rng.sample([(f, s) for f in FIRST for s in LAST], 10)
        ids = rng.sample(range(1000000, 9999999), 40)
        for first, last in names:
            methods = [
                {
                    "payment_id": f"credit_card_{ids.pop()}",
                    "source": "credit_card",
                    "brand": brand,
                    "last_four": f"{rng.randint(1000, 9999)}",
                }
                for brand in rng.sample(BRANDS, rng.randint(1, 2))
            ]
            if rng.random() < 0.6:
                methods.append(
                    {
                        "payment_id": f"gift_card_{ids.pop()}",
                        "source": "gift_card",
                        "balance": float(rng.randrange(50, 600, 10)),
                    }
                )
            if rng.random() < 0.3:
                methods.append(
                    {
                        "payment_id": f"certificate_{ids.pop()}",
                        "source": "certificate",
                        "balance": float(rng.choice([100, 150, 200, 250])),
                    }
                )
            users.append(
                {
                    "user_id": f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}",
                    "name": {"first_name": first, "last_name": last},
                    "email": f"{first.lower()}.{last.lower()}@example.com",
                    "dob": random_dob(rng),
                    "membership": rng.choice(["regular", "regular", "silver", "gold"]),
                    "payment_methods": methods,
                    "reservations": [],
                }
            )
        state = {
            "today": today.isoformat(),
            "now": now,
            "airports": [{"code": c, "city": city} for c, city in airports],
            "flights": flights,
            "users": users,
            "reservations": [],
            "next_reservation": rng.randrange(1000, 90000),
            "next_certificate": rng.randrange(7000000, 9000000),
        }
        for user in users:
            for _ in range(rng.randint(0, 2)):
                flight = rng.choice(flights)
                plant_reservation(
                    rng,
                    state,
                    user,
                    [flight],
                    rng.choice(list(FREE_BAGS["regular"])),
                    hours_ago=rng.randint(30, 900),
                )
        return state

    # --- a simulated customer ----------------------------------------------------------------

    def customer_facts(self, state: JSON, scenario: Scenario) -> dict[str, str]:
        """The customer's user id (the request names it), given when asked."""
        ids = [u["user_id"] for u in state["users"] if u["user_id"] in scenario.request]
        return {"user id": ids[0]} if ids else {}

    def facts_to_tell(self, state: JSON, expected: JSON) -> list[RequiredFact]:
        """The code of every reservation the request books: the customer needs it."""
        before = {r["reservation_id"] for r in state["reservations"]}
        return [
            RequiredFact(fact="new reservation code", any_of=[r["reservation_id"]])
            for r in expected["reservations"]
            if r["reservation_id"] not in before
        ]

    # --- sampling ----------------------------------------------------------------------------

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        me = rng.choice(state["users"])
        plan = AirlinePlan(rng, state, me)
        traps = [trap_cancel, trap_basic_flight, trap_remove_bags, trap_add_passenger]
        if me["membership"] == "regular":
            traps.append(trap_compensation)

        def more() -> None:
            plan.book(round_trip=difficulty is Difficulty.HARD and rng.random() < 0.5)
            extras = [plan.add_bags, plan.fix_passenger, plan.change_cabin, plan.change_flight]
            if difficulty is Difficulty.HARD:
                if me["membership"] != "regular":
                    extras.append(plan.compensate)
                for extra in rng.sample(extras, 2):
                    extra()
            else:
                rng.choice(extras)()

        easy = [plan.add_bags, plan.fix_passenger, plan.change_cabin, plan.cancel_fresh]
        draw_pieces(plan, shape, difficulty, traps, HANDOVERS, easy, more)
        greeting = plan.wording(
            "hello",
            first=me["name"]["first_name"],
            last=me["name"]["last_name"],
            user=me["user_id"],
        )
        bye = plan.wording("bye") if difficulty is not Difficulty.EASY else ""
        request = request_text(greeting, plan.parts, bye)
        return plan.scenario(DOMAIN, request, "airline")
