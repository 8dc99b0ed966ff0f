"""The policy traps of hard airline requests: a part of the request the policy forbids (each
must trip a rule of the domain)."""

from __future__ import annotations

from factory.families.tool.scenario import Call

from .data import dob_words, pretty_date
from .plan import AirlinePlan
from .reservations import plant_reservation

# --- traps ------------------------------------------------------------------------------


def trap_cancel(plan: AirlinePlan) -> None:
    res = plan._existing(
        plan.rng.choice(["economy", "basic_economy"]),
        npax=plan.rng.randint(1, 2),
        hours_ago=plan.rng.randint(60, 600),
    )
    code = res["reservation_id"]
    plan.forbid(
        "trap-cancel",
        Call("cancel_reservation", {"reservation_id": code}),
        code=code,
        trip=plan._trip_words(res),
    )


def trap_basic_flight(plan: AirlinePlan) -> None:
    res = plan._existing("basic_economy", npax=1, bags=0)
    leg = res["flights"][0]
    later = next(
        (
            f
            for f in plan.state["flights"]
            if (f["origin"], f["destination"]) == (leg["origin"], leg["destination"])
            and f["date"] > leg["date"]
            and f["status"] == "available"
        ),
        None,
    )
    if later is None:
        later = next(
            f
            for f in plan.state["flights"]
            if (f["origin"], f["destination"]) == (leg["origin"], leg["destination"])
            and f["date"] != leg["date"]
            and f["date"] > plan.state["today"]
        )
    card = plan._card()
    code = res["reservation_id"]
    plan.forbid(
        "trap-basic-flight",
        plan._update_flights(
            code,
            "basic_economy",
            [{"flight_number": later["flight_number"], "date": later["date"]}],
            card,
        ),
        code=code,
        date=pretty_date(later["date"]),
        departure=later["departure"],
        card=lambda: plan._card_words(card),
    )


def trap_remove_bags(plan: AirlinePlan) -> None:
    bags = plan.rng.randint(2, 4)
    res = plan._existing("economy", npax=1, bags=bags)
    card = plan._card()
    code = res["reservation_id"]
    plan.forbid(
        "trap-remove-bags",
        Call(
            "update_reservation_baggages",
            {
                "reservation_id": code,
                "total_baggages": bags - 1,
                "payment_id": card["payment_id"],
            },
        ),
        code=code,
        fewer_bags=f"{bags - 1} checked bag{'s' if bags > 2 else ''}",
        card=lambda: plan._card_words(card),
        fewer=bags - 1,
        bags=bags,
    )


def trap_add_passenger(plan: AirlinePlan) -> None:
    res = plan._existing(plan.rng.choice(["economy", "business"]), npax=1)
    ((relation, extra),) = plan._companions(1)
    code = res["reservation_id"]
    plan.forbid(
        "trap-add-passenger",
        Call(
            "update_reservation_passengers",
            {"reservation_id": code, "passengers": [*res["passengers"], extra]},
        ),
        relation=relation,
        first=extra["first_name"],
        last=extra["last_name"],
        dob=lambda: dob_words(plan.rng, extra["dob"]),
        code=code,
    )


def trap_compensation(plan: AirlinePlan) -> None:
    flight = plan._past_flight("delayed")
    res = plant_reservation(
        plan.rng, plan.state, plan.me, [flight], "economy", hours_ago=plan.rng.randint(200, 900)
    )
    code = res["reservation_id"]
    plan.forbid(
        "trap-compensation",
        Call(
            "send_certificate",
            {"user_id": plan.me["user_id"], "reservation_id": code, "reason": "delayed"},
        ),
        code=code,
        date=pretty_date(flight["date"]),
    )
