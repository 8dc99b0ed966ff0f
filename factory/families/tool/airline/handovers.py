"""The parts of an airline request that only a human colleague may handle: each plants what it
needs and hands over with the reason the policy gives (``transfer_to_human``)."""

from __future__ import annotations

from factory.families.tool.scenario import Call

from .data import pretty_date
from .plan import WORDINGS, AirlinePlan
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
    plan.hand_over(
        "baggage_claim",
        WORDINGS.fill("handover-baggage", date=pretty_date(flight["date"]), code=code),
        f"baggage problem after the flight of reservation {code}",
        Call("get_reservation_details", {"reservation_id": code}),
    )


def handover_assistance(plan: AirlinePlan) -> None:
    res = plan._existing("economy", npax=2)
    code = res["reservation_id"]
    plan.hand_over(
        "special_assistance",
        WORDINGS.fill("handover-assistance", code=code),
        f"wheelchair assistance for a passenger of reservation {code}",
        Call("get_reservation_details", {"reservation_id": code}),
    )


def handover_group(plan: AirlinePlan) -> None:
    origin, destination = plan.rng.sample(sorted(plan.city), 2)
    size = plan.rng.randint(8, 30)
    group = plan.rng.choice(["choir", "football team", "hiking club", "class"])
    texts = WORDINGS.fill(
        "handover-group",
        group=group,
        size=size,
        origin=plan.city[origin],
        destination=plan.city[destination],
    )
    plan.hand_over("group_travel", texts, f"group of {size} from {origin} to {destination}")


HANDOVERS = [handover_baggage, handover_assistance, handover_group]
