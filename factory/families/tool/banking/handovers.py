"""The parts of a banking request that only a human colleague may handle: each hands over with
the reason the policy gives (``transfer_to_human``)."""

from __future__ import annotations

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.tool.scenario import Call

from .data import money_text
from .plan import WORDINGS, BankingPlan


def handover_loan(plan: BankingPlan) -> None:
    amount = float(plan.rng.randrange(5000, 40000, 500))
    purpose = plan.rng.choice(["a new car", "a kitchen renovation", "my daughter's tuition"])
    texts = WORDINGS.fill("handover-loan", amount=money_text(amount), purpose=purpose)
    plan.hand_over("loan_request", texts, f"loan of {amount:.2f} for {purpose}")


def handover_bereavement(plan: BankingPlan) -> None:
    last = plan.me["name"].split()[-1]
    relative = plan.rng.choice(["father", "mother", "husband", "wife", "aunt"])
    first = plan.rng.choice(FIRST)
    texts = WORDINGS.fill("handover-bereavement", relative=relative, first=first, last=last)
    plan.hand_over("bereavement", texts, f"the customer's {relative} {first} {last} has died")


def handover_closure(plan: BankingPlan) -> None:
    cid = plan.me["customer_id"]
    texts = WORDINGS.fill("handover-closure", account=lambda: plan._words(plan.savings))
    plan.hand_over(
        "account_closure",
        texts,
        f"close savings account {plan.savings['account_id']}",
        Call("list_accounts", {"customer_id": cid}),
    )


HANDOVERS = [handover_loan, handover_bereavement, handover_closure]
