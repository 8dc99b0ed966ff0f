"""The pieces of a banking request: each plants what it needs in the seeded state and adds
calls, words and near misses to the plan."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.banking import DOMAIN, NEW_PAYEE_CAP, get_transfer_limit

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import Call
from factory.families.tool.toolfamily import Plan, shift_date

from .data import BANKS, COMPANIES, MERCHANTS, WORDINGS, money_text, pretty_date


def random_dob(rng: random.Random) -> str:
    return datetime.date(
        rng.randint(1950, 2002), rng.randint(1, 12), rng.randint(1, 28)
    ).isoformat()


def add_account(
    rng: random.Random, state: JSON, customer: JSON, kind: str, balance: float, status: str = "open"
) -> JSON:
    account = {
        "account_id": f"A-{rng.randint(100000, 999999)}",
        "customer_id": customer["customer_id"],
        "type": kind,
        "number": f"{rng.randint(10000000, 99999999)}",
        "balance": round(balance, 2),
        "status": status,
    }
    while any(a["account_id"] == account["account_id"] for a in state["accounts"]):
        account["account_id"] = f"A-{rng.randint(100000, 999999)}"
    state["accounts"].append(account)
    return account


def add_card(
    rng: random.Random,
    state: JSON,
    customer: JSON,
    account: JSON,
    kind: str,
    status: str = "active",
    reason: str | None = None,
) -> JSON:
    taken = {c["last_four"] for c in state["cards"] if c["customer_id"] == customer["customer_id"]}
    last_four = f"{rng.randint(1000, 9999)}"
    while last_four in taken:
        last_four = f"{rng.randint(1000, 9999)}"
    card = {
        "card_id": f"card_{rng.randint(100000, 999999)}",
        "customer_id": customer["customer_id"],
        "account_id": account["account_id"],
        "kind": kind,
        "last_four": last_four,
        "status": status,
        "frozen_reason": reason,
    }
    state["cards"].append(card)
    return card


def post_transaction(
    state: JSON, account: JSON, amount: float, kind: str, description: str, date: str, **extra: str
) -> JSON:
    """A past transaction (the balance already reflects it)."""
    transaction = {
        **extra,
        "transaction_id": f"T-{len(state['transactions']) + 100001}",
        "account_id": account["account_id"],
        "date": date,
        "amount": round(amount, 2),
        "kind": kind,
        "description": description,
        "status": "posted",
    }
    state["transactions"].append(transaction)
    state["transactions"].sort(key=lambda t: (t["date"], t["transaction_id"]))
    return transaction


def add_purchase(
    rng: random.Random,
    state: JSON,
    account: JSON,
    days_ago: int,
    merchant: str | None = None,
    amount: float | None = None,
) -> JSON:
    amount = amount if amount is not None else round(rng.uniform(4, 180), 2)
    return post_transaction(
        state,
        account,
        -amount,
        "card",
        merchant or rng.choice(MERCHANTS),
        shift_date(state["today"], -days_ago),
    )


def _payee_names(state: JSON, customer: JSON) -> set[str]:
    return {p["name"] for p in state["payees"] if p["customer_id"] == customer["customer_id"]}


def fresh_name(rng: random.Random, state: JSON, customer: JSON, company: bool) -> str:
    """A payee name the customer does not have yet (names identify payees to customers)."""
    taken = _payee_names(state, customer)
    while True:
        name = rng.choice(COMPANIES) if company else f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name not in taken:
            return name


def add_payee(rng: random.Random, state: JSON, customer: JSON, name: str | None = None) -> JSON:
    if name is None:
        name = fresh_name(rng, state, customer, company=rng.random() < 0.5)
    payee = {
        "payee_id": f"P-{rng.randint(100, 2999)}",
        "customer_id": customer["customer_id"],
        "name": name,
        "account_number": f"{rng.randint(10000000, 99999999)}",
        "bank": rng.choice(BANKS),
        "added": shift_date(state["today"], -rng.randint(20, 700)),
    }
    while any(p["payee_id"] == payee["payee_id"] for p in state["payees"]):
        payee["payee_id"] = f"P-{rng.randint(100, 2999)}"
    state["payees"].append(payee)
    return payee


class BankingPlan(Plan):
    """The pieces of a banking request."""

    domain = DOMAIN
    wordings = WORDINGS

    def __init__(self, rng: random.Random, state: JSON, me: JSON, lookup: bool) -> None:
        super().__init__(rng, state, me)
        self.lookup = lookup
        if lookup:
            self.secrets.append(me["customer_id"])
        cid = me["customer_id"]
        mine = [a for a in state["accounts"] if a["customer_id"] == cid and a["status"] == "open"]
        self.checking = next(a for a in mine if a["type"] == "checking")
        self.savings = next(a for a in mine if a["type"] == "savings")
        # Money the reference takes out of each account, and what is left of the daily limit:
        # kept so that every requested change succeeds in any order.
        self.spent: dict[str, float] = {}
        # Payments the seed already made today count against the limit: leave room for the
        # request's own payments (raise the seeded limit when today's history ate it up).
        remaining = get_transfer_limit(state, me["customer_id"])["remaining"]
        if remaining < 1500:  # room for the largest payee payment plus a new payee (900 + 500)
            me["daily_limit"] = float(me["daily_limit"] + -(-(1500 - remaining) // 50) * 50)
            remaining = get_transfer_limit(state, me["customer_id"])["remaining"]
        self.budget = remaining
        if lookup:
            self.calls.append(Call("find_customer", {"query": me["name"]}))
        self.calls.append(
            Call(
                "verify_identity",
                {"customer_id": cid, "date_of_birth": me["dob"], "postcode": me["postcode"]},
            )
        )

    def intro(self) -> str:
        me, rng = self.me, self.rng
        dob = datetime.date.fromisoformat(me["dob"])
        dob_words = rng.choice(
            [
                f"{dob.strftime('%B')} {dob.day}, {dob.year}",
                f"{dob.day} {dob.strftime('%B')} {dob.year}",
                me["dob"],
            ]
        )
        who = (
            f"I'm {me['name']}"
            if self.lookup
            else f"I'm {me['name']}, customer number {me['customer_id']}"
        )
        return self.wording("hello", who=who, dob=dob_words, postcode=me["postcode"])

    def _spend(self, account: JSON, amount: float) -> None:
        self.spent[account["account_id"]] = self.spent.get(account["account_id"], 0) + amount
        account["balance"] = round(
            max(account["balance"], self.spent[account["account_id"]] + self.rng.randint(50, 900)),
            2,
        )

    def _amount(self, low: int, high: int) -> float:
        if self.rng.random() < 0.5:
            return float(self.rng.randrange(low, high, 5))
        return round(self.rng.uniform(low, high), 2)

    def _words(self, account: JSON) -> str:
        return self.wording("account", type=account["type"], last_four=account["number"][-4:])

    @staticmethod
    def _pay(account: JSON, payee_id: str, amount: float) -> Call:
        return Call(
            "pay_payee",
            {"from_account_id": account["account_id"], "payee_id": payee_id, "amount": amount},
        )

    # --- changes -----------------------------------------------------------------------------

    def freeze_card(self) -> None:
        rng, cid = self.rng, self.me["customer_id"]
        cards = [c for c in self.state["cards"] if c["customer_id"] == cid]
        if len(cards) < 2 or not any(c["status"] == "active" for c in cards):
            add_card(rng, self.state, self.me, self.checking, "credit")
            cards = [c for c in self.state["cards"] if c["customer_id"] == cid]
        card = rng.choice([c for c in cards if c["status"] == "active"])
        other = rng.choice([c for c in cards if c is not card])
        calls = [
            Call("list_cards", {"customer_id": cid}),
            Call("freeze_card", {"card_id": card["card_id"]}),
        ]
        self.change(calls, "freezes-another-card", calls[-1].but(card_id=other["card_id"]))
        self.secrets.append(card["card_id"])
        self.say("card-freeze", kind=card["kind"], last_four=card["last_four"])

    def unfreeze_card(self) -> None:
        rng, cid = self.rng, self.me["customer_id"]
        active = [
            c for c in self.state["cards"] if c["customer_id"] == cid and c["status"] == "active"
        ]
        card = rng.choice(active)
        card.update(status="frozen", frozen_reason="customer")
        other = add_card(
            rng,
            self.state,
            self.me,
            self.checking,
            "credit" if card["kind"] == "debit" else "debit",
            status="frozen",
            reason="customer",
        )
        calls = [
            Call("list_cards", {"customer_id": cid}),
            Call("unfreeze_card", {"card_id": card["card_id"]}),
        ]
        self.change(calls, "unfreezes-the-other-card", calls[-1].but(card_id=other["card_id"]))
        self.say("card-unfreeze", kind=card["kind"], last_four=card["last_four"])

    def transfer(self) -> None:
        rng, cid = self.rng, self.me["customer_id"]
        source, target = (
            (self.savings, self.checking) if rng.random() < 0.6 else (self.checking, self.savings)
        )
        amount = self._amount(100, 1500)
        self._spend(source, amount)
        calls = [
            Call("list_accounts", {"customer_id": cid}),
            Call(
                "transfer_between_accounts",
                {
                    "from_account_id": source["account_id"],
                    "to_account_id": target["account_id"],
                    "amount": amount,
                },
            ),
        ]
        swapped = calls[-1].but(
            from_account_id=target["account_id"], to_account_id=source["account_id"]
        )
        self.change(calls, "transfers-the-wrong-way", swapped)
        self.secrets += [source["account_id"], target["account_id"]]
        self.say(
            "transfer",
            amount=money_text(amount),
            source=lambda: self._words(source),
            target=lambda: self._words(target),
        )

    def pay_payee(self) -> None:
        rng, cid = self.rng, self.me["customer_id"]
        payees = [p for p in self.state["payees"] if p["customer_id"] == cid]
        payee = rng.choice(payees)
        amount = self._amount(40, int(min(900, self.budget - 150)))
        self.budget -= amount
        source = self.checking if rng.random() < 0.75 else self.savings
        other = self.savings if source is self.checking else self.checking
        self._spend(source, amount)
        calls = [
            Call("list_payees", {"customer_id": cid}),
            Call("list_accounts", {"customer_id": cid}),
            self._pay(source, payee["payee_id"], amount),
        ]
        wrong = calls[-1].but(from_account_id=other["account_id"])
        self.change(calls, "pays-from-the-other-account", wrong)
        self.secrets.append(payee["payee_id"])
        self.say(
            "payment",
            payee=payee["name"],
            amount=money_text(amount),
            account=lambda: self._words(source),
        )

    def add_and_pay(self) -> None:
        rng, cid = self.rng, self.me["customer_id"]
        taken = _payee_names(self.state, self.me)
        while True:
            last = rng.choice(LAST)
            first, old_first = rng.sample(FIRST, 2)
            if not {f"{first} {last}", f"{old_first} {last}"} & taken:
                break
        old = add_payee(rng, self.state, self.me, f"{old_first} {last}")
        number = f"{rng.randint(10000000, 99999999)}"
        bank = rng.choice(BANKS)
        amount = self._amount(25, NEW_PAYEE_CAP)
        self.budget -= amount
        self._spend(self.checking, amount)
        new_id = f"P-{self.state['next_payee']}"
        calls = [
            Call(
                "add_payee",
                {
                    "customer_id": cid,
                    "name": f"{first} {last}",
                    "account_number": number,
                    "bank": bank,
                },
            ),
            Call("list_accounts", {"customer_id": cid}),
            self._pay(self.checking, new_id, amount),
        ]
        self.change(calls, "pays-the-old-payee", calls[-1].but(payee_id=old["payee_id"]))
        pretty = f"{number[:4]} {number[4:]}" if rng.random() < 0.5 else number
        self.say(
            "new-payee",
            first=first,
            last=last,
            number=pretty,
            bank=bank,
            amount=money_text(amount),
            account=lambda: self._words(self.checking),
            old_first=old_first,
        )

    def dispute(self) -> None:
        rng = self.rng
        account = self.checking
        merchant = rng.choice(MERCHANTS)
        days = rng.randint(3, 55)
        amount = round(rng.uniform(15, 400), 2)
        target = add_purchase(rng, self.state, account, days, merchant, amount)
        twin = add_purchase(
            rng,
            self.state,
            account,
            days + rng.choice([-2, 7, 14, 30]),
            merchant,
            rng.choice([amount, round(amount * 0.5, 2)]),
        )
        reason, words = rng.choice(
            [
                ("unrecognised", "I never made that purchase"),
                ("unrecognised", "I don't recognise it at all"),
                ("not_received", "I paid but the order never arrived"),
                ("wrong_amount", f"the agreed price was {money_text(round(amount * 0.6, 2))}"),
            ]
        )
        calls = [
            Call("list_accounts", {"customer_id": self.me["customer_id"]}),
            Call("list_transactions", {"account_id": account["account_id"]}),
            Call(
                "dispute_transaction",
                {"transaction_id": target["transaction_id"], "reason": reason},
            ),
        ]
        wrong = calls[-1].but(transaction_id=twin["transaction_id"])
        self.change(calls, "disputes-the-similar-charge", wrong)
        self.secrets.append(target["transaction_id"])
        self.say(
            "dispute",
            amount=money_text(amount),
            merchant=merchant,
            date=pretty_date(target["date"]),
            account=lambda: self._words(account),
            why=words,
        )
