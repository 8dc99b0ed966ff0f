"""Tool family: retail banking support (verify identity, transfers, payments, payees, card
freezes, disputes) under a banking policy."""

from __future__ import annotations

import dataclasses
import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.banking import DOMAIN

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import SAY_CALL, Call, Scenario, Shape
from factory.families.tool.toolfamily import (
    ToolFamily,
    draw_pieces,
    draw_today,
    request_text,
    shift_date,
)
from factory.tasks.user_profile import ScriptRule
from factory.vocabulary import Difficulty

from .handovers import HANDOVERS
from .plan import (
    BankingPlan,
    add_account,
    add_card,
    add_payee,
    add_purchase,
    post_transaction,
    random_dob,
)
from .traps import (
    trap_fraud_card,
    trap_frozen_account,
    trap_new_payee,
    trap_old_dispute,
    trap_over_limit,
    trap_relative_card,
)

APPROVE_ASK = "I have sent a sign-in request to your banking app: please approve it there."
APPROVE_WHEN = r"\bapprov\w*\b.*\b(app|sign[\s-]?in)\b|\b(app|sign[\s-]?in)\b.*\bapprov"
"""What the scripted customer acts on: a message asking them to approve something in the app."""


def _asked_first(calls: list[Call], steps: list[Call]) -> list[Call]:
    """``calls`` with ``steps`` before the first ``verify_identity`` (unchanged without one)."""
    first = next((i for i, c in enumerate(calls) if c.name == "verify_identity"), None)
    return calls if first is None else [*calls[:first], *steps, *calls[first:]]


@register
class BankingRequests(ToolFamily):
    """Retail-banking support requests. Every change needs the customer's identity verified
    first (their date of birth and ZIP code are in the request). Easy: one change (freeze a
    lost card, move money between own accounts, unfreeze a found card). Medium: find the
    customer by name, then two changes among payments, new payees, disputes and transfers.
    Hard: three changes. Requests may add parts the policy forbids (none at easy, up to one at
    medium, up to three at hard: over the daily limit, over the new-payee cap, an old dispute,
    unfreezing a fraud block, moving money out of a frozen account, acting on a relative's
    card), be refused as a whole, or include a part for a human colleague (a loan, a
    bereavement, closing an account)."""

    name = "tool-banking"
    shapes = tuple(Shape)
    dual_control = True
    title = "Handle a bank customer's request with banking tools under a support policy"
    toolenv_domain = "banking"

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        today = draw_today(rng, datetime.date(2026, 2, 2))
        state: JSON = {
            "today": today.isoformat(),
            "session": {"verified": []},
            "customers": [],
            "accounts": [],
            "cards": [],
            "payees": [],
            "transactions": [],
            "disputes": [],
            "next_payee": rng.randrange(3000, 9000),
            "next_dispute": rng.randrange(100, 900),
        }
        names = rng.sample([(f, s) for f in FIRST for s in LAST], 9)
        ids = iter(rng.sample(range(10000, 99999), 60))
        for first, last in names:
            customer = {
                "customer_id": f"C-{next(ids)}",
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@mail.example",
                "phone": f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                "dob": random_dob(rng),
                "postcode": f"{rng.randint(10000, 99999)}",
                "daily_limit": float(rng.choice([1000, 1500, 2000, 2500, 3000])),
            }
            state["customers"].append(customer)
            add_account(rng, state, customer, "checking", rng.uniform(800, 6000))
            add_account(rng, state, customer, "savings", rng.uniform(1500, 20000))
            if rng.random() < 0.3:
                add_account(
                    rng,
                    state,
                    customer,
                    "checking",
                    rng.uniform(0, 400),
                    status=rng.choice(["closed", "frozen"]),
                )
            for account in [
                a for a in state["accounts"] if a["customer_id"] == customer["customer_id"]
            ]:
                if account["type"] == "checking" and account["status"] == "open":
                    add_card(rng, state, customer, account, "debit")
                    if rng.random() < 0.5:
                        add_card(rng, state, customer, account, "credit")
                    for _ in range(rng.randint(4, 10)):
                        add_purchase(rng, state, account, rng.randint(1, 110))
                    post_transaction(
                        state,
                        account,
                        rng.choice([2100.0, 2850.0, 3400.0, 4200.0]),
                        "deposit",
                        "Salary",
                        shift_date(state["today"], -rng.randint(1, 28)),
                    )
            for _ in range(rng.randint(1, 3)):
                add_payee(rng, state, customer)
        return state

    # --- dual control: the sign-in approved in the customer's app ------------------------------

    def dual_setup(self, state: JSON, scenario: Scenario) -> Scenario:
        """The customer's app (no sign-in yet) in ``state``; before the first
        ``verify_identity``, a sign-in request sent to the app and the customer asked to
        approve it."""
        first = next((i for i, c in enumerate(scenario.calls) if c.name == "verify_identity"), None)
        if first is None:
            raise ValueError("user: dual needs a request that verifies the customer's identity")
        customer = scenario.calls[first].arguments["customer_id"]
        state["app"] = {"customer_id": customer, "sign_in": "none"}
        steps = [
            Call("send_app_sign_in", {"customer_id": customer}),
            Call(SAY_CALL, {"message": APPROVE_ASK}),
        ]
        near = {name: _asked_first(wrong, steps) for name, wrong in scenario.near_misses.items()}
        return dataclasses.replace(
            scenario, calls=_asked_first(scenario.calls, steps), near_misses=near
        )

    def dual_rules(self) -> tuple[list[ScriptRule], dict[str, str]]:
        approve = ScriptRule(
            when=APPROVE_WHEN,
            reply="OK, I opened the app and tapped Approve on the sign-in request.",
            act="approve_sign_in",
        )
        return [approve], {"approve_sign_in": "approve the sign-in request shown in your app"}

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        me = rng.choice(state["customers"])
        plan = BankingPlan(rng, state, me, lookup=difficulty is not Difficulty.EASY)
        traps = [
            trap_over_limit,
            trap_old_dispute,
            trap_fraud_card,
            trap_frozen_account,
            trap_relative_card,
        ]

        def more() -> None:
            pieces = [
                plan.pay_payee,
                plan.add_and_pay,
                plan.dispute,
                plan.transfer,
                plan.freeze_card,
            ]
            first = rng.choice(pieces[:3])  # one that needs a lookup
            rest = [p for p in pieces if p != first]
            done = [first, *rng.sample(rest, 1 if difficulty is Difficulty.MEDIUM else 2)]
            for piece in done:
                piece()
            if plan.add_and_pay not in done:
                traps.append(trap_new_payee)

        easy = [plan.freeze_card, plan.transfer, plan.unfreeze_card]
        draw_pieces(plan, shape, difficulty, traps, HANDOVERS, easy, more)
        request = request_text(plan.intro(), plan.parts, plan.wording("bye"))
        return plan.scenario(DOMAIN, request, "banking")
