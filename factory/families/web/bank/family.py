"""Web family: online banking (accounts with balances and daily transfer limits, payees,
transfers validated and confirmed with a one-time code shown on the page)."""

from __future__ import annotations

import random

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.web.webfamily import BROWSER, TEXT, WebFamily, WebScenario, app_user
from factory.vocabulary import Difficulty

BILLERS = [
    "City Power",
    "Metro Water",
    "Northside Gas",
    "FiberNet Internet",
    "Oakridge Rentals",
    "Harbor Insurance",
    "Civic Parking",
    "Greenleaf Dental",
    "Summit Gym",
    "Lakeside School",
]
NEW_PAYEES = [
    "Brightside Plumbing",
    "Maple Street Dental",
    "Rivera Tutoring",
    "Quartz Roofing",
    "Juniper Vet Clinic",
    "Alder Garden Care",
]
WORDS = ["amber", "birch", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "iris"]


def _number(rng: random.Random, used: set) -> str:
    while True:
        n = f"{rng.randrange(1000, 9999)}-{rng.randrange(1000, 9999)}-{rng.randrange(10, 99)}"
        if n not in used:
            used.add(n)
            return n


def _account(
    account_id: int, user_id: int, number: str, name: str, balance: int, limit: int
) -> dict:
    """An account row (amounts in cents)."""
    return {
        "id": account_id,
        "user_id": user_id,
        "number": number,
        "name": name,
        "balance_cents": balance,
        "daily_limit_cents": limit,
    }


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@register
class WebBank(WebFamily):
    """Pay bills in an online bank, each transfer confirmed with a one-time code shown on the
    confirmation page: easy pays one bill to an existing payee from the named account with
    the invoice reference; medium adds a payee first (the account number is given with spaces,
    the form wants dashes) and then pays them; hard pays an invoice bigger than what the
    checking account may still send today - as much as the remaining daily limit allows from
    checking, the rest from savings (the limit is read off the accounts page)."""

    name = "web-bank"
    title = "Pay bills and move money in an online bank with limits and confirmations"
    category = "web-finance"
    observations = (TEXT, BROWSER)

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        people = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 3)
        users = [app_user(rng, i + 1, p, "customer", WORDS) for i, p in enumerate(people)]
        me = users[0]
        used: set = set()
        today = f"2030-{rng.randint(1, 12):02d}-{rng.randint(10, 28):02d}"
        checking = _account(
            1,
            1,
            _number(rng, used),
            "Checking",
            rng.randrange(3000, 6000) * 100,
            rng.choice([1500, 2000, 2500]) * 100,
        )
        savings = _account(
            2, 1, _number(rng, used), "Savings", rng.randrange(8000, 15000) * 100, 5000 * 100
        )
        accounts = [
            checking,
            savings,
            _account(3, 2, _number(rng, used), "Checking", 250000, 200000),
        ]
        billers = rng.sample(BILLERS, 6)
        payees = [
            {"id": i + 1, "user_id": 1, "name": b, "account_number": _number(rng, used)}
            for i, b in enumerate(billers)
        ]
        transfers = []
        for day_offset in range(6):
            day = today if day_offset == 0 else f"{today[:8]}{int(today[8:]) - day_offset:02d}"
            for _ in range(rng.randint(1, 2)):
                p = rng.choice(payees)
                src = checking if rng.random() < 0.7 else savings
                transfers.append(
                    {
                        "id": len(transfers) + 1,
                        "from_account_id": src["id"],
                        "to_number": p["account_number"],
                        "to_name": p["name"],
                        "amount_cents": rng.randrange(20, 300) * 100 + rng.randrange(100),
                        "reference": f"INV-{rng.randrange(10000, 99999)}",
                        "day": day,
                    }
                )
        spent = {
            a["id"]: sum(
                t["amount_cents"]
                for t in transfers
                if t["from_account_id"] == a["id"] and t["day"] == today
            )
            for a in (checking, savings)
        }
        payee = rng.choice(payees)
        reference = f"INV-{rng.randrange(10000, 99999)}"
        add_payee = None
        ops: list[dict] = []
        near: dict[str, dict] = {}

        def pay(src, cents, to=None, ref=reference):
            return {
                "from": src["id"],
                "to": to or f"payee:{payee['id']}",
                "amount": _money(cents),
                "cents": cents,
                "reference": ref,
                "to_number": payee["account_number"],
            }

        if difficulty is Difficulty.EASY:
            cents = rng.randrange(40, 400) * 100 + rng.randrange(100)
            cents = min(cents, checking["daily_limit_cents"] - spent[1] - 100)
            ops = [pay(checking, cents)]
            near = {
                "from-savings": {"ops": [pay(savings, cents)]},
                "wrong-reference": {
                    "ops": [
                        pay(
                            checking,
                            cents,
                            ref=reference[:-1] + "0"
                            if reference[-1] != "0"
                            else reference[:-1] + "1",
                        )
                    ]
                },
                "wrong-amount": {"ops": [pay(checking, cents - 100)]},
            }
        elif difficulty is Difficulty.MEDIUM:
            name = rng.choice(NEW_PAYEES)
            number = _number(rng, used)
            payee = {"id": len(payees) + 1, "name": name, "account_number": number}
            add_payee = {"name": name, "number": number, "spaced": number.replace("-", " ")}
            cents = rng.randrange(80, 600) * 100 + rng.choice([0, 50, 99])
            cents = min(cents, checking["daily_limit_cents"] - spent[1] - 100)
            ops = [pay(checking, cents)]
            near = {
                "payee-only": {"ops": []},
                "wrong-amount": {"ops": [pay(checking, cents + 1000)]},
                "from-savings": {"ops": [pay(savings, cents)]},
            }
        else:
            left = checking["daily_limit_cents"] - spent[1]
            extra = rng.randrange(300, 1500) * 100 + rng.randrange(100)
            total = left + extra
            checking["balance_cents"] = max(checking["balance_cents"], left + 50000)
            savings["daily_limit_cents"] = max(
                savings["daily_limit_cents"], spent[2] + total + 10000
            )
            savings["balance_cents"] = max(savings["balance_cents"], total + 100000)
            ops = [pay(checking, left), pay(savings, extra)]
            near = {
                "all-from-savings": {"ops": [pay(savings, total)]},
                "checking-part-only": {"ops": [pay(checking, left)]},
                "wrong-reference": {
                    "ops": [
                        pay(checking, left, ref=reference.replace("INV", "REF")),
                        pay(savings, extra, ref=reference.replace("INV", "REF")),
                    ]
                },
            }
        total = sum(o["cents"] for o in ops)
        expected_balances = {
            checking["id"]: checking["balance_cents"],
            savings["id"]: savings["balance_cents"],
        }
        for o in ops:
            expected_balances[o["from"]] -= o["cents"]
        context = {
            "user": me,
            "payee": {"name": payee["name"], "number": payee["account_number"]},
            "reference": reference,
            "add_payee": add_payee,
            "ops": ops,
            "total": _money(total),
            "today": today,
            "expected_transfers": sorted(
                [o["from"], o["to_number"], o["cents"], o["reference"]] for o in ops
            ),
            "expected_balances": expected_balances,
            "max_transfer": len(transfers),
            "checking": {"id": 1, "number": checking["number"]},
            "savings": {"id": 2, "number": savings["number"]},
        }
        seed = {
            "users": users,
            "settings": [{"key": "today", "value": today}],
            "accounts": accounts,
            "payees": payees,
            "transfers": transfers,
        }
        tags = ["banking", "forms", "confirmation"] + (
            ["limits"] if difficulty is Difficulty.HARD else []
        )
        return WebScenario(seed=seed, context=context, near_misses=near, tags=tags)


@register
class WebBankBrowser(WebBank):
    """``web-bank`` in the browser observation mode: the same payments, made through a headless
    Chromium seen as an accessibility tree (``browse``); the app answers only the browser."""

    name = "web-bank-browser"
    title = "Pay bills in an online bank, through a real browser"
    default_params = {"observation": BROWSER}
