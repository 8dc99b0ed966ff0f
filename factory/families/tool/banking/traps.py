"""The policy traps of hard banking requests: a part of the request the policy forbids (each
must trip a rule of the domain)."""

from __future__ import annotations

from factory.toolenv.domains.banking import NEW_PAYEE_CAP

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.tool.scenario import Call

from .data import BANKS, MERCHANTS, money_text, pretty_date
from .plan import (
    BankingPlan,
    add_account,
    add_card,
    add_payee,
    add_purchase,
    fresh_name,
    random_dob,
)

# --- traps -------------------------------------------------------------------------------


def trap_over_limit(plan: BankingPlan) -> None:
    rng = plan.rng
    payee = add_payee(rng, plan.state, plan.me, fresh_name(rng, plan.state, plan.me, True))
    amount = float(plan.me["daily_limit"] + rng.randrange(100, 1500, 50))
    plan.checking["balance"] = round(plan.checking["balance"] + amount, 2)
    plan.forbid(
        "trap-over-limit",
        plan._pay(plan.checking, payee["payee_id"], amount),
        payee=payee["name"],
        amount=money_text(amount),
        account=lambda: plan._words(plan.checking),
    )


def trap_new_payee(plan: BankingPlan) -> None:
    rng, cid = plan.rng, plan.me["customer_id"]
    name = fresh_name(rng, plan.state, plan.me, company=True)
    number = f"{rng.randint(10000000, 99999999)}"
    bank = rng.choice(BANKS)
    amount = float(rng.randrange(NEW_PAYEE_CAP + 100, 1800, 25))
    plan.checking["balance"] = round(plan.checking["balance"] + amount, 2)
    new_id = f"P-{plan.state['next_payee']}"
    plan.calls.append(
        Call(
            "add_payee",
            {"customer_id": cid, "name": name, "account_number": number, "bank": bank},
        )
    )
    plan.forbid(
        "trap-new-payee",
        plan._pay(plan.checking, new_id, amount),
        name=name,
        number=number,
        bank=bank,
        amount=money_text(amount),
        account=lambda: plan._words(plan.checking),
    )
    plan.tags.append("new-payee")


def trap_old_dispute(plan: BankingPlan) -> None:
    rng = plan.rng
    merchant = rng.choice(MERCHANTS)
    target = add_purchase(rng, plan.state, plan.checking, rng.randint(68, 120), merchant)
    plan.forbid(
        "trap-old-dispute",
        Call(
            "dispute_transaction",
            {"transaction_id": target["transaction_id"], "reason": "unrecognised"},
        ),
        amount=money_text(-target["amount"]),
        merchant=merchant,
        date=pretty_date(target["date"]),
    )


def trap_fraud_card(plan: BankingPlan) -> None:
    card = add_card(
        plan.rng, plan.state, plan.me, plan.checking, "debit", status="frozen", reason="fraud"
    )
    plan.forbid(
        "trap-fraud-card",
        Call("unfreeze_card", {"card_id": card["card_id"]}),
        last_four=card["last_four"],
    )


def trap_frozen_account(plan: BankingPlan) -> None:
    rng = plan.rng
    frozen = add_account(
        rng, plan.state, plan.me, "savings", rng.uniform(900, 5000), status="frozen"
    )
    amount = float(rng.randrange(100, 800, 10))
    plan.forbid(
        "trap-frozen-account",
        Call(
            "transfer_between_accounts",
            {
                "from_account_id": frozen["account_id"],
                "to_account_id": plan.checking["account_id"],
                "amount": amount,
            },
        ),
        amount=money_text(amount),
        last_four=frozen["number"][-4:],
        account=lambda: plan._words(plan.checking),
    )


def trap_relative_card(plan: BankingPlan) -> None:
    rng = plan.rng
    last = plan.me["name"].split()[-1]
    first = rng.choice([f for f in FIRST if f != plan.me["name"].split()[0]])
    relative = {
        "customer_id": f"C-{rng.randint(10000, 99999)}",
        "name": f"{first} {last}",
        "email": f"{first.lower()}.{last.lower()}@mail.example",
        "phone": f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        "dob": random_dob(rng),
        "postcode": plan.me["postcode"],
        "daily_limit": float(rng.choice([1000, 2000])),
    }
    plan.state["customers"].append(relative)
    account = add_account(rng, plan.state, relative, "checking", rng.uniform(300, 3000))
    card = add_card(rng, plan.state, relative, account, "debit")
    who = rng.choice(["my spouse", "my partner", "my sibling"])
    plan.forbid(
        "trap-relative-card",
        Call("freeze_card", {"card_id": card["card_id"]}),
        Who=who.capitalize(),
        first=first,
        last=last,
        last_four=card["last_four"],
        who=who,
    )
