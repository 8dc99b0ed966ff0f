"""The parts of a banking request that only a human colleague may handle: each hands over with
the reason the policy gives (``transfer_to_human``)."""

from __future__ import annotations

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.tool.scenario import Call

from .data import money_text
from .plan import BankingPlan


def handover_loan(plan: BankingPlan) -> None:
    amount = float(plan.rng.randrange(5000, 40000, 500))
    purpose = plan.rng.choice(["a new car", "a kitchen renovation", "my daughter's tuition"])
    texts = [
        f"Also, I'd like to borrow {money_text(amount)} for {purpose} - can you set that up?",
        f"And could I get a loan of {money_text(amount)}? It's for {purpose}.",
    ]
    plan.hand_over("loan_request", texts, f"loan of {amount:.2f} for {purpose}")


def handover_bereavement(plan: BankingPlan) -> None:
    last = plan.me["name"].split()[-1]
    relative = plan.rng.choice(["father", "mother", "husband", "wife", "aunt"])
    first = plan.rng.choice(FIRST)
    texts = [
        f"Sadly my {relative}, {first} {last}, passed away last week. What happens to their "
        "accounts with you?",
        f"I also have to tell you that my {relative} {first} {last} died recently - they banked "
        "with you too.",
    ]
    plan.hand_over("bereavement", texts, f"the customer's {relative} {first} {last} has died")


def handover_closure(plan: BankingPlan) -> None:
    cid = plan.me["customer_id"]
    texts = [
        f"Please also close {plan._words(plan.savings)} for good - I'm moving my savings "
        "elsewhere.",
        f"And I want to close {plan._words(plan.savings)} permanently.",
    ]
    plan.hand_over(
        "account_closure",
        texts,
        f"close savings account {plan.savings['account_id']}",
        Call("list_accounts", {"customer_id": cid}),
    )


HANDOVERS = [handover_loan, handover_bereavement, handover_closure]
