"""The seeded state of a sales CRM plus the bookkeeping the request parts need to add records to it."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.crm import STAGES

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.names import MONTH_NAMES
from factory.families.tool.wordings import possessive

from .data import DEAL_NAMES, PRODUCTS, TITLES, WEEKDAYS, WORDINGS


class Book:
    """The seeded CRM plus helpers that add the records a request needs."""

    def __init__(self, rng: random.Random, state: JSON) -> None:
        self.rng = rng
        self.state = state
        self.me = next(u for u in state["users"] if u["user_id"] == state["acting_user"])
        self.reps = [u for u in state["users"] if u["role"] == "rep" and u is not self.me]
        self.managers = [u for u in state["users"] if u["role"] == "manager"]
        self.names = {c["name"] for c in state["contacts"]} | {u["name"] for u in state["users"]}
        self.today = datetime.date.fromisoformat(state["today"])

    def day(self, back: int) -> str:
        return (self.today - datetime.timedelta(days=back)).isoformat()

    def company(self, exclude: list[JSON] | tuple[JSON, ...] = ()) -> JSON:
        return self.rng.choice([c for c in self.state["companies"] if c not in exclude])

    def company_name(self, company_id: str) -> str:
        return next(c["name"] for c in self.state["companies"] if c["company_id"] == company_id)

    def fresh_person(self) -> str:
        for _ in range(500):
            name = f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"
            if name not in self.names:
                self.names.add(name)
                return name
        raise AssertionError("crm: ran out of names")

    def add_contact(self, company: JSON, name: str = "", unsubscribed: bool = False) -> JSON:
        name = name or self.fresh_person()
        first, last = name.lower().split()
        emails = {c["email"] for c in self.state["contacts"]}
        email = f"{first}.{last}@{company['domain']}"
        if email in emails:
            email = f"{first[0]}{last}@{company['domain']}"
        contact = {
            "contact_id": f"c-{self.state['next_contact']}",
            "name": name,
            "email": email,
            "phone": f"+1 555 {self.rng.randint(100, 999)} {self.rng.randint(1000, 9999)}",
            "title": self.rng.choice(TITLES),
            "company_id": company["company_id"],
            "owner": self.rng.choice([self.me, *self.reps])["user_id"],
            "unsubscribed": unsubscribed,
            "unsubscribed_on": self.day(self.rng.randint(5, 300)) if unsubscribed else "",
        }
        self.state["next_contact"] += 1
        self.state["contacts"].append(contact)
        return contact

    def contact(self, company: JSON | None = None) -> JSON:
        """A new, subscribed contact (at a new or given company)."""
        return self.add_contact(company or self.company())

    def add_deal(
        self, company: JSON, stage: str, owner: str = "", *, amount: int = -1, signed: bool = False
    ) -> JSON:
        taken = {d["name"] for d in self.state["deals"] if d["company_id"] == company["company_id"]}
        for _ in range(200):
            name = self.rng.choice(DEAL_NAMES).format(
                product=self.rng.choice(PRODUCTS), seats=self.rng.choice([25, 50, 100, 250])
            )
            if name not in taken:
                break
        else:
            raise AssertionError("crm: ran out of deal names")
        people = [c for c in self.state["contacts"] if c["company_id"] == company["company_id"]]
        contact = self.rng.choice(people) if people else self.add_contact(company)
        index = STAGES.index(stage) if stage != "closed-lost" else self.rng.randint(1, 3)
        steps = [*STAGES[: index + 1]] if stage != "closed-lost" else [*STAGES[:index], stage]
        backs = sorted(self.rng.sample(range(1, 200), len(steps)), reverse=True)
        if amount < 0:
            amount = (
                0
                if stage == "lead" and self.rng.random() < 0.5
                else (self.rng.randint(8, 400) * 500)
            )
        deal = {
            "deal_id": f"d-{self.state['next_deal']}",
            "name": name,
            "company_id": company["company_id"],
            "contact_id": contact["contact_id"],
            "owner": owner or self.rng.choice([self.me, self.me, *self.reps])["user_id"],
            "stage": stage,
            "amount": amount,
            "discount_pct": self.rng.choice([0, 0, 5, 10, 15]),
            "approval_token": "",
            "signed": signed or stage == "closed-won",
            "stage_history": [
                {"stage": s, "date": self.day(b)} for s, b in zip(steps, backs, strict=True)
            ],
            "closed_on": self.day(backs[-1]) if stage.startswith("closed") else "",
        }
        self.state["next_deal"] += 1
        self.state["deals"].append(deal)
        return deal

    def approval(self, deal: JSON, max_pct: int) -> JSON:
        letters = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        row = {
            "token": "APR-" + "".join(self.rng.choice(letters) for _ in range(6)),
            "deal_id": deal["deal_id"],
            "approved_by": self.rng.choice(self.managers)["user_id"],
            "max_discount_pct": max_pct,
            "issued_on": self.day(self.rng.randint(0, 10)),
        }
        self.state["approvals"].append(row)
        return row

    def user_name(self, user_id: str) -> str:
        return next(u["name"] for u in self.state["users"] if u["user_id"] == user_id)

    def who(self, contact: JSON) -> str:
        company = self.company_name(contact["company_id"])
        return WORDINGS.draw(self.rng, "contact", name=contact["name"], company=company)

    def deal_words(self, company: JSON, deal: JSON) -> dict[str, object]:
        """How a wording names ``deal`` of ``company``: {deal}, {company} and
        {company_possessive}."""
        return {
            "deal": deal["name"],
            "company": company["name"],
            "company_possessive": possessive(company["name"]),
        }

    def contact_words(self, contact: JSON) -> dict[str, object]:
        """How a wording names ``contact``: {who} (:meth:`who`, drawn afresh wherever a wording
        says it), {contact}, and their {company} and {company_possessive}."""
        company = self.company_name(contact["company_id"])
        return {
            "who": lambda: self.who(contact),
            "contact": contact["name"],
            "company": company,
            "company_possessive": possessive(company),
        }

    def template(self, name: str) -> JSON:
        return next(t for t in self.state["templates"] if t["name"] == name)

    def value(self, field_name: str) -> str:
        r = self.rng
        if field_name == "quote_number":
            return f"Q-{r.randint(1000, 9999)}"
        if field_name == "invoice_number":
            return f"INV-{r.randint(10000, 99999)}"
        slug = "".join(r.choice("abcdefghijkmnopqrstuvwxyz") for _ in range(3))
        tail = "".join(r.choice("abcdefghijkmnopqrstuvwxyz") for _ in range(4))
        return f"https://meet.{self.state['seller_domain']}/{slug}-{tail}"

    def pretty(self, date: str) -> str:
        day = datetime.date.fromisoformat(date)
        text = f"{WEEKDAYS[day.weekday()]}, {MONTH_NAMES[day.month - 1]} {day.day}"
        return text if day.year == self.today.year else f"{text}, {day.year}"
