"""The parts of an airline request that only a human colleague may handle: each plants what it
needs and hands over with the reason the policy gives (``transfer_to_human``)."""

from __future__ import annotations

from factory.families.tool.scenario import Call

from .data import pretty_date
from .plan import AirlinePlan
from .reservations import plant_reservation


def handover_baggage(plan: AirlinePlan) -> None:
    pool = [
        f
        for f in plan.state["flights"]
        if f["date"] < plan.state["today"]
        and f["status"] == "landed"
        and (f["flight_number"], f["date"]) not in plan.used
    ]
    flight = plan.rng.choice(pool)
    plan.used.add((flight["flight_number"], flight["date"]))
    res = plant_reservation(
        plan.rng,
        plan.state,
        plan.me,
        [flight],
        "economy",
        bags=1,
        hours_ago=plan.rng.randint(200, 900),
    )
    code = res["reservation_id"]
    texts = [
        f"Also, my checked bag never showed up after my flight on {pretty_date(flight['date'])} "
        f"(reservation {code}). Can you sort that out?",
        f"One more thing: my suitcase came off the plane on {code} badly damaged - I want it "
        "looked into.",
    ]
    plan.hand_over(
        "baggage_claim",
        texts,
        f"baggage problem after the flight of reservation {code}",
        Call("get_reservation_details", {"reservation_id": code}),
    )


def handover_assistance(plan: AirlinePlan) -> None:
    res = plan._existing("economy", npax=2)
    code = res["reservation_id"]
    texts = [
        f"My father travels with me on {code} and needs a wheelchair at the airport - please "
        "arrange that.",
        f"Could you make sure there is assistance for my mother on reservation {code}? She "
        "uses a wheelchair.",
    ]
    plan.hand_over(
        "special_assistance",
        texts,
        f"wheelchair assistance for a passenger of reservation {code}",
        Call("get_reservation_details", {"reservation_id": code}),
    )


def handover_group(plan: AirlinePlan) -> None:
    origin, destination = plan.rng.sample(sorted(plan.city), 2)
    size = plan.rng.randint(8, 30)
    group = plan.rng.choice(["choir", "football team", "hiking club", "class"])
    texts = [
        f"Also, my {group} of {size} people wants to fly from {plan.city[origin]} to "
        f"{plan.city[destination]} next month - can you book us all?",
        f"And I need a quote for {size} of us ({group} trip) from {plan.city[origin]} to "
        f"{plan.city[destination]}.",
    ]
    plan.hand_over("group_travel", texts, f"group of {size} from {origin} to {destination}")


HANDOVERS = [handover_baggage, handover_assistance, handover_group]
