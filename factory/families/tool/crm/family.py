"""Tool family: sales CRM requests (contacts, deal pipeline, discounts, activities, emails)."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.crm import STAGES

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import Scenario, Shape
from factory.families.tool.toolfamily import ToolFamily, compose, draw_today, hard_traps
from factory.vocabulary import Difficulty

from .book import Book
from .data import (
    CUSTOMERS,
    SELLERS,
    SUMMARIES,
    TASK_TITLES,
    TEMPLATES,
    WORDINGS,
)
from .parts import BIGGER, SIMPLE, amount_part, close_part
from .traps import TRAPS


@register
class CrmRequests(ToolFamily):
    """Requests to a sales CRM (companies, contacts, a deal pipeline, discount approvals,
    activities, tasks, templated email). Easy: one change found by lookup (unsubscribe, update a
    contact, log an activity, create a task, send a template, advance a deal) with a same-named
    decoy. Medium: two changes, or a deal found through its company whose id feeds two changes
    (amount and stage, signed and won, an approved discount with its token). Hard: more of both
    plus a part the policy forbids (emailing an opted-out contact, an unapproved discount, an
    unsigned win, a colleague's deal, skipping a stage)."""

    name = "tool-crm"
    title = "Handle a sales rep's request with CRM and email tools under a sales policy"
    toolenv_domain = "crm"

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        today = draw_today(rng)
        seller, seller_domain = rng.choice(SELLERS)
        names = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 8)
        users = []
        for i, name in enumerate(names):
            role = "manager" if i >= 6 else "rep"
            users.append(
                {
                    "user_id": f"u-{10 + i}",
                    "name": name,
                    "role": role,
                    "email": name.lower().replace(" ", ".") + f"@{seller_domain}",
                    "manager_id": f"u-{16 + i % 2}" if role == "rep" else "",
                }
            )
        companies = []
        for i, (cname, industry) in enumerate(rng.sample(CUSTOMERS, 9)):
            slug = cname.split()[0].lower()
            companies.append(
                {
                    "company_id": f"co-{100 + i}",
                    "name": cname,
                    "industry": industry,
                    "domain": f"{slug}.com",
                    "owner": rng.choice(users[:6])["user_id"],
                }
            )
        templates = [
            {"template_id": f"tpl-{i + 1}", **t.model_dump()} for i, t in enumerate(TEMPLATES)
        ]
        rng.shuffle(templates)
        state: JSON = {
            "today": today.isoformat(),
            "seller": seller,
            "seller_domain": seller_domain,
            "acting_user": users[0]["user_id"],
            "users": users,
            "companies": companies,
            "contacts": [],
            "deals": [],
            "approvals": [],
            "activities": [],
            "tasks": [],
            "templates": templates,
            "outbox": [],
            "next_contact": rng.randrange(100, 700),
            "next_deal": rng.randrange(100, 700),
            "next_activity": rng.randrange(1000, 5000),
            "next_task": rng.randrange(10, 90),
            "next_email": rng.randrange(100, 900),
        }
        b = Book(rng, state)
        for company in companies:
            for _ in range(rng.randint(2, 3)):
                b.add_contact(company, unsubscribed=rng.random() < 0.12)
            for _ in range(rng.randint(1, 3)):
                b.add_deal(company, rng.choice(STAGES))
        for deal in rng.sample(state["deals"], 2):
            if deal["stage"] not in ("closed-won", "closed-lost"):
                b.approval(deal, rng.choice([25, 30]))
        for contact in rng.sample(state["contacts"], 6):
            state["activities"].append(
                {
                    "activity_id": f"act-{state['next_activity']}",
                    "contact_id": contact["contact_id"],
                    "deal_id": "",
                    "kind": rng.choice(["call", "meeting", "note"]),
                    "summary": rng.choice(SUMMARIES),
                    "date": b.day(rng.randint(1, 60)),
                    "by": rng.choice(users[:6])["user_id"],
                }
            )
            state["next_activity"] += 1
        for contact in rng.sample(state["contacts"], 3):
            state["tasks"].append(
                {
                    "task_id": f"task-{state['next_task']}",
                    "title": rng.choice(TASK_TITLES).format(first=contact["name"].split()[0]),
                    "due_date": (today + datetime.timedelta(days=rng.randint(1, 15))).isoformat(),
                    "contact_id": contact["contact_id"],
                    "deal_id": "",
                    "owner": rng.choice(users[:3])["user_id"],
                    "done": False,
                    "created": b.day(rng.randint(1, 20)),
                }
            )
            state["next_task"] += 1
        return state

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        """Task-shaped requests only (:attr:`ToolFamily.shapes`)."""
        b = Book(rng, state)
        if difficulty is Difficulty.EASY:
            parts = [rng.choice(SIMPLE)(b)]
        elif difficulty is Difficulty.MEDIUM:
            if rng.random() < 0.5:
                parts = [rng.choice([amount_part, close_part])(b)]
            else:
                makers = rng.sample(SIMPLE, 2)
                parts = [make(b) for make in makers]
        else:
            parts = [make(b) for make in rng.sample(BIGGER, 2)]
            parts += [make(b) for make in rng.sample(SIMPLE, rng.randint(1, 2))]
            rng.shuffle(parts)
        traps = hard_traps(rng, difficulty, TRAPS, b)

        return compose(
            rng,
            parts,
            traps,
            greetings=lambda: WORDINGS.fill("hello", me=b.me["name"]),
            byes=WORDINGS.fill("bye"),
            tags=["crm"],
        )
