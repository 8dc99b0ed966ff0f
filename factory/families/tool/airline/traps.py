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
        [
            f"And please cancel reservation {code} and refund me, my plans changed.",
            f"Finally, I won't need {code} ({plan._trip_words(res)}) anymore - cancel it with "
            f"a full refund please.",
        ],
        Call("cancel_reservation", {"reservation_id": code}),
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
        [
            f"Also move my reservation {code} to {pretty_date(later['date'])}, the "
            f"{later['departure']} flight - I'll pay any difference with "
            f"{plan._card_words(card)}.",
            f"And could you push {code} to {pretty_date(later['date'])} "
            f"({later['departure']} departure)? Charge {plan._card_words(card)} if needed.",
        ],
        plan._update_flights(
            code,
            "basic_economy",
            [{"flight_number": later["flight_number"], "date": later["date"]}],
            card,
        ),
    )


def trap_remove_bags(plan: AirlinePlan) -> None:
    bags = plan.rng.randint(2, 4)
    res = plan._existing("economy", npax=1, bags=bags)
    card = plan._card()
    code = res["reservation_id"]
    plan.forbid(
        [
            f"Also, on {code} we're travelling lighter now: take it down to {bags - 1} "
            f"checked bag{'s' if bags > 2 else ''} and refund the difference to "
            f"{plan._card_words(card)}.",
            f"And please remove one checked bag from reservation {code} (so {bags - 1} "
            f"instead of {bags}); refund {plan._card_words(card)}.",
        ],
        Call(
            "update_reservation_baggages",
            {
                "reservation_id": code,
                "total_baggages": bags - 1,
                "payment_id": card["payment_id"],
            },
        ),
    )


def trap_add_passenger(plan: AirlinePlan) -> None:
    res = plan._existing(plan.rng.choice(["economy", "business"]), npax=1)
    ((relation, extra),) = plan._companions(1)
    code = res["reservation_id"]
    plan.forbid(
        [
            f"Also add {relation} {extra['first_name']} {extra['last_name']} (born "
            f"{dob_words(plan.rng, extra['dob'])}) to reservation {code}.",
            f"Oh, and {relation} {extra['first_name']} {extra['last_name']}, born "
            f"{dob_words(plan.rng, extra['dob'])}, is joining me on {code} - please add them.",
        ],
        Call(
            "update_reservation_passengers",
            {"reservation_id": code, "passengers": [*res["passengers"], extra]},
        ),
    )


def trap_compensation(plan: AirlinePlan) -> None:
    flight = plan._past_flight("delayed")
    res = plant_reservation(
        plan.rng, plan.state, plan.me, [flight], "economy", hours_ago=plan.rng.randint(200, 900)
    )
    code = res["reservation_id"]
    plan.forbid(
        [
            f"Also, my flight on {code} was delayed by three hours - I want a travel "
            f"certificate for that.",
            f"Lastly, booking {code} was delayed badly on {pretty_date(flight['date'])}. Please "
            f"send me a compensation certificate.",
        ],
        Call(
            "send_certificate",
            {"user_id": plan.me["user_id"], "reservation_id": code, "reason": "delayed"},
        ),
    )
