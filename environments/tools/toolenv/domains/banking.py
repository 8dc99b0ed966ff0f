"""Retail banking: customers with accounts, cards, payees and transactions; identity
verification, transfers, payments, card freezes and disputes."""

from __future__ import annotations

import hashlib

from ..core import JSON, Domain, ToolError, days_past, find, finder, lookup, require

NEW_PAYEE_CAP = 500
DISPUTE_WINDOW_DAYS = 60
DISPUTE_REASONS = ("unrecognised", "not_received", "wrong_amount", "duplicate")

POLICY = """\
# Banking support policy

You are the bank's support agent and act for the customer who writes to you.

1. **Identity first.** Before any change for a customer (anything beyond looking things up),
   verify their identity with `verify_identity`, using the date of birth and postcode they give
   you. Never change anything belonging to a customer who has not been verified in this
   session - not even for a family member of a verified customer.
2. **Transfers** move money only between open accounts of the same (verified) customer. Never
   move money out of a frozen or closed account, nor into a closed one. No account may go
   below zero.
3. **Payments to payees** count against the customer's daily payment limit: all their payments
   on one day together may not exceed it (`get_transfer_limit` shows what is left today).
   Transfers between the customer's own accounts do not count. A payee added today may
   receive at most $500 in total today. Payments are made only from open accounts.
4. **Cards.** A customer may freeze any of their own cards. A card frozen at the customer's
   request (`frozen_reason` "customer") may be unfrozen when they ask; a card frozen by the
   fraud team (`frozen_reason` "fraud") must never be unfrozen by you - the customer has to
   call the fraud team.
5. **Disputes.** Only debits (money that left the account) dated within the last 60 days,
   today included, can be disputed, and each transaction at most once. Use the reason that
   matches what the customer says: `unrecognised` (they did not make it), `not_received`
   (paid for goods or services that never came), `wrong_amount` (charged a different amount
   than agreed) or `duplicate` (charged twice).
6. Look customers, accounts, cards, payees and transactions up with the tools; never guess
   an id. Amounts are in US dollars.
"""

HANDOVERS = {
    "loan_request": "the customer asks for a loan, a mortgage or a higher overdraft",
    "bereavement": "the customer tells you an account holder has died",
    "account_closure": "the customer wants to close an account for good",
}

DOMAIN = Domain("banking", "Retail Banking", POLICY, handovers=HANDOVERS)

_ID = {"type": "string"}
_AMOUNT = {"type": "number", "description": "US dollars, e.g. 125.50"}


_customer = finder("customers", "customer_id", "customer")
_account = finder("accounts", "account_id", "account")
_card = finder("cards", "card_id", "card")
_payee = finder("payees", "payee_id", "payee")


def _amount(amount: float) -> float:
    require(amount > 0, "the amount must be positive")
    require(round(amount, 2) == round(amount, 6), "amounts have at most two decimals")
    return round(float(amount), 2)


def _post(
    state: JSON, account: JSON, amount: float, kind: str, description: str, **extra: str
) -> JSON:
    """Book a transaction. Its id derives from its content, and the list stays sorted, so the
    final state does not depend on the order in which independent changes were made."""
    account["balance"] = round(account["balance"] + amount, 2)
    transaction = {
        **extra,
        "account_id": account["account_id"],
        "date": state["today"],
        "amount": round(amount, 2),
        "kind": kind,
        "description": description,
        "status": "posted",
    }
    key = "|".join(f"{k}={transaction[k]}" for k in sorted(transaction))
    base = "T-" + state["today"].replace("-", "")[2:] + hashlib.sha256(key.encode()).hexdigest()[:4]
    taken = {t["transaction_id"] for t in state["transactions"]}
    number, tid = 1, base
    while tid in taken:
        number += 1
        tid = f"{base}{number}"
    transaction["transaction_id"] = tid
    state["transactions"].append(transaction)
    state["transactions"].sort(key=lambda t: (t["date"], t["transaction_id"]))
    return transaction


def paid_today(state: JSON, customer_id: str) -> float:
    """What a customer has paid to payees today."""
    accounts = {a["account_id"] for a in state["accounts"] if a["customer_id"] == customer_id}
    return round(
        -sum(
            t["amount"]
            for t in state["transactions"]
            if t["account_id"] in accounts
            and t["kind"] == "payment"
            and t["date"] == state["today"]
        ),
        2,
    )


def _public(customer: JSON) -> JSON:
    return {k: v for k, v in customer.items() if k not in ("dob", "postcode")}


# --- read-only tools -----------------------------------------------------------------------


@DOMAIN.tool(
    "Find customers whose name or email contains the query (case-insensitive).",
    {"query": {"type": "string"}},
)
def find_customer(state: JSON, query: str) -> list[JSON]:
    require(query.strip() != "", "give part of a name or an email")
    q = query.lower().strip()
    return [
        {"customer_id": c["customer_id"], "name": c["name"], "email": c["email"]}
        for c in state["customers"]
        if q in c["name"].lower() or q in c["email"].lower()
    ]


@DOMAIN.tool("A customer's profile (contact details, daily payment limit).", {"customer_id": _ID})
def get_customer(state: JSON, customer_id: str) -> JSON:
    customer = _customer(state, customer_id)
    return {**_public(customer), "verified": customer_id in state["session"]["verified"]}


DOMAIN.rows_tool(
    "list_accounts",
    "A customer's accounts with type, number, balance and status.",
    "accounts",
    "customer_id",
    _customer,
)


DOMAIN.record_tool("get_account", "One account, with its balance.", "account_id", _account)


@DOMAIN.tool(
    "Transactions of an account, newest first (optionally only those on or after a date).",
    {"account_id": _ID, "since": {"type": "string", "description": "YYYY-MM-DD"}},
    required=["account_id"],
)
def list_transactions(state: JSON, account_id: str, since: str = "") -> list[JSON]:
    _account(state, account_id)
    rows = [
        t
        for t in state["transactions"]
        if t["account_id"] == account_id and (not since or t["date"] >= since)
    ]
    return sorted(rows, key=lambda t: (t["date"], t["transaction_id"]), reverse=True)


DOMAIN.rows_tool(
    "list_cards",
    "A customer's cards (last four digits, account, status).",
    "cards",
    "customer_id",
    _customer,
)


DOMAIN.rows_tool("list_payees", "A customer's saved payees.", "payees", "customer_id", _customer)


@DOMAIN.tool(
    "A customer's daily payment limit, what they paid to payees today and what is left.",
    {"customer_id": _ID},
)
def get_transfer_limit(state: JSON, customer_id: str) -> JSON:
    customer = _customer(state, customer_id)
    used = paid_today(state, customer_id)
    return {
        "daily_limit": customer["daily_limit"],
        "paid_today": used,
        "remaining": round(customer["daily_limit"] - used, 2),
    }


# --- changes -------------------------------------------------------------------------------


@DOMAIN.tool(
    "Verify a customer's identity with their date of birth (YYYY-MM-DD) and postcode; "
    "success is remembered for this session.",
    {"customer_id": _ID, "date_of_birth": {"type": "string"}, "postcode": {"type": "string"}},
    mutates=True,
)
def verify_identity(state: JSON, customer_id: str, date_of_birth: str, postcode: str) -> JSON:
    customer = _customer(state, customer_id)
    same_postcode = postcode.replace(" ", "").upper() == customer["postcode"].replace(" ", "")
    if date_of_birth.strip() != customer["dob"] or not same_postcode:
        raise ToolError(f"identity of {customer_id} could not be verified: details do not match")
    if customer_id not in state["session"]["verified"]:
        state["session"]["verified"] = sorted([*state["session"]["verified"], customer_id])
    return {"customer_id": customer_id, "verified": True}


@DOMAIN.tool(
    "Move money between two accounts of the same customer.",
    {"from_account_id": _ID, "to_account_id": _ID, "amount": _AMOUNT},
    mutates=True,
)
def transfer_between_accounts(
    state: JSON, from_account_id: str, to_account_id: str, amount: float
) -> JSON:
    amount = _amount(amount)
    source = _account(state, from_account_id)
    target = _account(state, to_account_id)
    require(from_account_id != to_account_id, "the two accounts must differ")
    require(
        source["customer_id"] == target["customer_id"],
        "transfers are only between a customer's own accounts; pay others as payees",
    )
    require(source["status"] == "open", f"account {from_account_id} is {source['status']}")
    require(target["status"] != "closed", f"account {to_account_id} is closed")
    require(
        source["balance"] >= amount,
        f"insufficient funds: {from_account_id} holds {source['balance']:.2f}",
    )
    debit = _post(state, source, -amount, "transfer", f"Transfer to {target['number']}")
    _post(state, target, amount, "transfer", f"Transfer from {source['number']}")
    return {"transfer": debit["transaction_id"], "from_balance": source["balance"]}


@DOMAIN.tool(
    "Pay one of the customer's saved payees from one of their accounts.",
    {"from_account_id": _ID, "payee_id": _ID, "amount": _AMOUNT},
    mutates=True,
)
def pay_payee(state: JSON, from_account_id: str, payee_id: str, amount: float) -> JSON:
    amount = _amount(amount)
    source = _account(state, from_account_id)
    payee = _payee(state, payee_id)
    require(
        payee["customer_id"] == source["customer_id"],
        f"payee {payee_id} belongs to another customer",
    )
    require(source["status"] == "open", f"account {from_account_id} is {source['status']}")
    require(
        source["balance"] >= amount,
        f"insufficient funds: {from_account_id} holds {source['balance']:.2f}",
    )
    return _post(
        state, source, -amount, "payment", f"Payment to {payee['name']}", payee_id=payee_id
    )


@DOMAIN.tool(
    "Save a new payee for a customer; returns it with its payee_id.",
    {
        "customer_id": _ID,
        "name": {"type": "string"},
        "account_number": {"type": "string", "description": "8 digits"},
        "bank": {"type": "string"},
    },
    mutates=True,
)
def add_payee(state: JSON, customer_id: str, name: str, account_number: str, bank: str) -> JSON:
    _customer(state, customer_id)
    number = account_number.replace(" ", "").replace("-", "")
    require(number.isdigit() and len(number) == 8, "account_number must be 8 digits")
    require(name.strip() != "" and bank.strip() != "", "name and bank are required")
    require(
        not any(
            p["customer_id"] == customer_id and p["account_number"] == number
            for p in state["payees"]
        ),
        f"{customer_id} already has a payee with account number {number}",
    )
    payee = {
        "payee_id": f"P-{state['next_payee']}",
        "customer_id": customer_id,
        "name": " ".join(w.capitalize() for w in name.split()),
        "account_number": number,
        "bank": " ".join(w.capitalize() for w in bank.split()),
        "added": state["today"],
    }
    state["next_payee"] += 1
    state["payees"].append(payee)
    return payee


@DOMAIN.tool("Delete a saved payee.", {"payee_id": _ID}, mutates=True)
def remove_payee(state: JSON, payee_id: str) -> JSON:
    payee = _payee(state, payee_id)
    state["payees"].remove(payee)
    return {"removed": payee_id}


@DOMAIN.tool("Freeze a card at the customer's request.", {"card_id": _ID}, mutates=True)
def freeze_card(state: JSON, card_id: str) -> JSON:
    card = _card(state, card_id)
    require(card["status"] == "active", f"card {card_id} is {card['status']}")
    card.update(status="frozen", frozen_reason="customer")
    return card


@DOMAIN.tool("Unfreeze a frozen card.", {"card_id": _ID}, mutates=True)
def unfreeze_card(state: JSON, card_id: str) -> JSON:
    card = _card(state, card_id)
    require(card["status"] == "frozen", f"card {card_id} is {card['status']}, not frozen")
    card.update(status="active", frozen_reason=None)
    return card


@DOMAIN.tool(
    "Open a dispute on a transaction.",
    {"transaction_id": _ID, "reason": {"type": "string", "enum": list(DISPUTE_REASONS)}},
    mutates=True,
)
def dispute_transaction(state: JSON, transaction_id: str, reason: str) -> JSON:
    transaction = find(state["transactions"], "transaction_id", transaction_id, "transaction")
    require(transaction["status"] == "posted", f"{transaction_id} is {transaction['status']}")
    account = _account(state, transaction["account_id"])
    transaction["status"] = "disputed"
    dispute = {
        "dispute_id": f"D-{state['next_dispute']}",
        "transaction_id": transaction_id,
        "customer_id": account["customer_id"],
        "reason": reason,
        "opened": state["today"],
        "status": "open",
    }
    state["next_dispute"] += 1
    state["disputes"].append(dispute)
    return dispute


# --- policy --------------------------------------------------------------------------------


def _owner(state: JSON, tool: str, args: JSON) -> str | None:
    """The customer a change acts on (None when the record does not exist)."""
    if "customer_id" in args:
        return args["customer_id"]
    if "from_account_id" in args:
        account = lookup(state["accounts"], "account_id", args["from_account_id"])
        return account and account["customer_id"]
    if "payee_id" in args:
        payee = lookup(state["payees"], "payee_id", args["payee_id"])
        return payee and payee["customer_id"]
    if "card_id" in args:
        card = lookup(state["cards"], "card_id", args["card_id"])
        return card and card["customer_id"]
    if "transaction_id" in args:
        transaction = lookup(state["transactions"], "transaction_id", args["transaction_id"])
        account = transaction and lookup(state["accounts"], "account_id", transaction["account_id"])
        return account and account["customer_id"]
    return None


@DOMAIN.rule
def identity_verified(state: JSON, tool: str, args: JSON) -> str | None:
    if tool == "verify_identity" or not DOMAIN.tools[tool].mutates:
        return None
    owner = _owner(state, tool, args)
    if owner and owner not in state["session"]["verified"]:
        return f"{tool} for customer {owner}, whose identity has not been verified"
    return None


@DOMAIN.rule_on("transfer_between_accounts", "pay_payee")
def account_status(state: JSON, tool: str, args: JSON) -> str | None:
    source = lookup(state["accounts"], "account_id", args["from_account_id"])
    if source and source["status"] != "open":
        return f"{tool} out of {source['status']} account {source['account_id']}"
    target = lookup(state["accounts"], "account_id", args.get("to_account_id"))
    if target and target["status"] == "closed":
        return f"{tool} into closed account {target['account_id']}"
    return None


@DOMAIN.rule_on("pay_payee")
def payment_limits(state: JSON, tool: str, args: JSON) -> str | None:
    if not isinstance(args["amount"], (int, float)):
        return None
    source = lookup(state["accounts"], "account_id", args["from_account_id"])
    payee = lookup(state["payees"], "payee_id", args["payee_id"])
    if source is None or payee is None:
        return None
    customer = lookup(state["customers"], "customer_id", source["customer_id"])
    used = paid_today(state, source["customer_id"])
    if customer and used + args["amount"] > customer["daily_limit"] + 1e-9:
        return (
            f"paying {args['amount']:.2f} when {customer['customer_id']} has "
            f"{customer['daily_limit'] - used:.2f} of their daily limit left"
        )
    if payee["added"] == state["today"]:
        already = -sum(
            t["amount"]
            for t in state["transactions"]
            if t["date"] == state["today"] and t.get("payee_id") == payee["payee_id"]
        )
        if already + args["amount"] > NEW_PAYEE_CAP + 1e-9:
            return (
                f"paying {args['amount']:.2f} to payee {payee['payee_id']}, added today "
                f"(at most {NEW_PAYEE_CAP} on the day a payee is added)"
            )
    return None


@DOMAIN.rule_on("unfreeze_card")
def fraud_freeze(state: JSON, tool: str, args: JSON) -> str | None:
    card = lookup(state["cards"], "card_id", args["card_id"])
    if card and card["status"] == "frozen" and card["frozen_reason"] == "fraud":
        return f"unfreezing card {card['card_id']}, frozen by the fraud team"
    return None


@DOMAIN.rule_on("dispute_transaction")
def dispute_window(state: JSON, tool: str, args: JSON) -> str | None:
    transaction = lookup(state["transactions"], "transaction_id", args["transaction_id"])
    if transaction is None:
        return None
    if transaction["amount"] >= 0:
        return f"disputing {transaction['transaction_id']}, which is not a debit"
    age = days_past(transaction["date"], state["today"], DISPUTE_WINDOW_DAYS)
    if age is not None:
        return (
            f"disputing {transaction['transaction_id']} from {transaction['date']}, "
            f"{age} days ago (limit {DISPUTE_WINDOW_DAYS})"
        )
    return None
