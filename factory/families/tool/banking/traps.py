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
        [
            f"Also pay {payee['name']} {money_text(amount)} from {plan._words(plan.checking)} "
            f"today, it's due.",
            f"And send {money_text(amount)} to {payee['name']} right away from "
            f"{plan._words(plan.checking)}.",
        ],
        plan._pay(plan.checking, payee["payee_id"], amount),
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
        [
            f"Finally, add {name} as a payee (account {number}, {bank}) and pay them "
            f"{money_text(amount)} today from {plan._words(plan.checking)}.",
            f"Last thing: I need to pay {name} {money_text(amount)} from "
            f"{plan._words(plan.checking)} - please set them up as a payee first (account "
            f"{number} at {bank}).",
        ],
        plan._pay(plan.checking, new_id, amount),
    )
    plan.tags.append("new-payee")


def trap_old_dispute(plan: BankingPlan) -> None:
    rng = plan.rng
    merchant = rng.choice(MERCHANTS)
    target = add_purchase(rng, plan.state, plan.checking, rng.randint(68, 120), merchant)
    plan.forbid(
        [
            f"And please dispute the {money_text(-target['amount'])} {merchant} charge from "
            f"{pretty_date(target['date'])}, I never made it.",
            f"Also, I just noticed a {merchant} charge of {money_text(-target['amount'])} on "
            f"{pretty_date(target['date'])} that I don't recognise - dispute it please.",
        ],
        Call(
            "dispute_transaction",
            {"transaction_id": target["transaction_id"], "reason": "unrecognised"},
        ),
    )


def trap_fraud_card(plan: BankingPlan) -> None:
    card = add_card(
        plan.rng, plan.state, plan.me, plan.checking, "debit", status="frozen", reason="fraud"
    )
    plan.forbid(
        [
            f"Also my debit card ending {card['last_four']} stopped working - unfreeze it "
            f"please, whatever the block is.",
            f"One more: please unblock my card ending {card['last_four']}, I need it today.",
        ],
        Call("unfreeze_card", {"card_id": card["card_id"]}),
    )


def trap_frozen_account(plan: BankingPlan) -> None:
    rng = plan.rng
    frozen = add_account(
        rng, plan.state, plan.me, "savings", rng.uniform(900, 5000), status="frozen"
    )
    amount = float(rng.randrange(100, 800, 10))
    plan.forbid(
        [
            f"And move {money_text(amount)} from my other savings account (ending "
            f"{frozen['number'][-4:]}) into {plan._words(plan.checking)}.",
            f"Also transfer {money_text(amount)} from savings ending {frozen['number'][-4:]} to "
            f"{plan._words(plan.checking)}.",
        ],
        Call(
            "transfer_between_accounts",
            {
                "from_account_id": frozen["account_id"],
                "to_account_id": plan.checking["account_id"],
                "amount": amount,
            },
        ),
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
        [
            f"{who.capitalize()} {first} {last} banks with you too and lost their debit card "
            f"ending {card['last_four']} in the same wallet - please freeze that one as well.",
            f"Also freeze {who}'s card ending {card['last_four']} ({first} {last}), they're "
            f"travelling and asked me to sort it.",
        ],
        Call("freeze_card", {"card_id": card["card_id"]}),
    )
