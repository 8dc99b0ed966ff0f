"""Tool family: sales CRM requests (contacts, deal pipeline, discounts, activities, emails)."""

from __future__ import annotations

import datetime
import random
from collections.abc import Callable

from factory.toolenv.core import JSON

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.names import MONTH_NAMES
from factory.families.tool.toolfamily import Call, Part, Scenario, ToolFamily, compose, draw_today
from factory.vocabulary import Difficulty

SELLERS = [
    ("Nimbus Analytics", "nimbus-analytics.com"),
    ("Brightpath Software", "brightpath.io"),
    ("Orbital Data", "orbitaldata.com"),
    ("Quillstack", "quillstack.com"),
    ("Tessellate Cloud", "tessellate.cloud"),
]
CUSTOMERS = [
    ("Acme Logistics", "Logistics"),
    ("Globex Retail", "Retail"),
    ("Initech Systems", "Software"),
    ("Umbrella Health", "Healthcare"),
    ("Hooli Media", "Media"),
    ("Stark Manufacturing", "Manufacturing"),
    ("Wayne Foods", "Food"),
    ("Tyrell Biotech", "Biotech"),
    ("Cyberdyne Robotics", "Robotics"),
    ("Vandelay Imports", "Wholesale"),
    ("Wonka Confectionery", "Food"),
    ("Soylent Farms", "Agriculture"),
    ("Pied Piper Labs", "Software"),
    ("Dunder Paper", "Wholesale"),
    ("Massive Dynamic", "Research"),
    ("Oscorp Energy", "Energy"),
]
PRODUCTS = [
    "Analytics Pro",
    "Data Hub",
    "Insights Suite",
    "Reporting Cloud",
    "Forecast AI",
    "Pipeline Sync",
]
DEAL_NAMES = [
    "{product} rollout",
    "{product} renewal",
    "{product} expansion",
    "{product} pilot",
    "Support upgrade",
    "Training package",
    "{seats} seats of {product}",
    "Enterprise licence",
    "{product} add-on",
]
TITLES = [
    "Head of Procurement",
    "VP of Operations",
    "IT Director",
    "CFO",
    "Purchasing Manager",
    "Chief Data Officer",
    "Operations Lead",
    "Head of Analytics",
    "COO",
    "Director of Finance",
    "Senior Buyer",
    "Head of IT",
]
SUMMARIES = [
    "Discussed the rollout timeline",
    "Asked for a revised quote",
    "Interested in the forecasting add-on",
    "Budget approved for next quarter",
    "Wants a security review before signing",
    "Needs SSO support confirmed",
    "Comparing us with two other vendors",
    "Legal is reviewing the contract",
    "Asked for customer references",
    "Wants to start with a smaller pilot",
]
TASK_TITLES = [
    "Call {first} about the renewal",
    "Send {first} the security questionnaire",
    "Follow up with {first} on pricing",
    "Check in with {first} after the demo",
    "Book a workshop with {first}",
    "Ask {first} for the signed order form",
]
TEMPLATES = [
    (
        "Quote follow-up",
        "Your quote {quote_number}",
        "Hi {first_name},\n\nI wanted to follow up on quote {quote_number} for {company}. Happy to "
        "walk you through it whenever suits you.\n\nBest,\n{sender_name}",
        ["quote_number"],
    ),
    (
        "Quote reminder",
        "Quote {quote_number} expires soon",
        "Hi {first_name},\n\nA quick reminder that quote {quote_number} for {company} expires at "
        "the end of the month.\n\nRegards,\n{sender_name}",
        ["quote_number"],
    ),
    (
        "Invoice reminder",
        "Invoice {invoice_number} is due",
        "Hi {first_name},\n\nInvoice {invoice_number} for {company} is due this week. Let me know "
        "if anything is unclear.\n\n{sender_name}",
        ["invoice_number"],
    ),
    (
        "Payment received",
        "Thank you for paying invoice {invoice_number}",
        "Hi {first_name},\n\nWe received the payment for invoice {invoice_number}. Thank you, "
        "{company}!\n\n{sender_name}",
        ["invoice_number"],
    ),
    (
        "Demo invite",
        "Your product demo",
        "Hi {first_name},\n\nLooking forward to showing {company} around. Join here: "
        "{meeting_link}\n\n{sender_name}",
        ["meeting_link"],
    ),
    (
        "Meeting recap",
        "Recap of our meeting",
        "Hi {first_name},\n\nThanks for your time today. The recording is at {meeting_link}.\n\n"
        "{sender_name}",
        ["meeting_link"],
    ),
    (
        "Welcome aboard",
        "Welcome aboard, {company}!",
        "Hi {first_name},\n\nWelcome aboard! I will be your contact for anything you need.\n\n"
        "{sender_name}",
        [],
    ),
]
PAIRS = [
    ("Quote follow-up", "Quote reminder"),
    ("Quote reminder", "Quote follow-up"),
    ("Invoice reminder", "Payment received"),
    ("Payment received", "Invoice reminder"),
    ("Demo invite", "Meeting recap"),
    ("Meeting recap", "Demo invite"),
]
LABELS = {"quote_number": "quote", "invoice_number": "invoice", "meeting_link": "link"}
STAGES = ["lead", "qualified", "proposal", "negotiation", "closed-won", "closed-lost"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class _Book:
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
        return self.rng.choice(
            [
                f"{contact['name']} from {company}",
                f"{contact['name']} at {company}",
                f"{contact['name']} ({company})",
            ]
        )

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


def _poss(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


# --- request parts: contacts ------------------------------------------------------------------
def unsubscribe_part(b: _Book) -> Part:
    target = b.contact()
    twin = b.add_contact(
        b.company([c for c in b.state["companies"] if c["company_id"] == target["company_id"]]),
        target["name"],
    )
    who = b.who(target)
    text = b.rng.choice(
        [
            f"{who} asked us to stop emailing them - please take them off our lists.",
            f"Please unsubscribe {who}; they don't want our emails any more.",
            f'{who} replied "please remove me from your mailing list". Can you take care of that?',
        ]
    )
    head = [Call("search_contacts", {"query": target["name"]})]
    return Part(
        text,
        [*head, Call("unsubscribe", {"contact_id": target["contact_id"]})],
        (
            "unsubscribes-the-namesake",
            [*head, Call("unsubscribe", {"contact_id": twin["contact_id"]})],
        ),
        [target["contact_id"]],
    )


def contact_update_part(b: _Book) -> Part:
    target = b.contact()
    twin = b.add_contact(
        b.company([c for c in b.state["companies"] if c["company_id"] == target["company_id"]]),
        target["name"],
    )
    who = b.who(target)
    if b.rng.random() < 0.6:
        title = b.rng.choice([t for t in TITLES if t not in (target["title"], twin["title"])])
        change = {"title": title}
        text = b.rng.choice(
            [
                f"{who} has a new role: {title}. Please update their contact record.",
                f"Heads-up: {who} is now {title} - can you update the CRM?",
                f"{who} got promoted to {title}, please change their title.",
            ]
        )
    else:
        first, last = target["name"].lower().split()
        domain = target["email"].split("@")[1]
        email = b.rng.choice(
            [f"{first[0]}.{last}@{domain}", f"{first}@{domain}", f"{last}.{first}@{domain}"]
        )
        change = {"email": email}
        text = b.rng.choice(
            [
                f"{who} has a new email address: {email}. Please update it.",
                f"Please change the email of {who} to {email}.",
            ]
        )
    head = [Call("search_contacts", {"query": target["name"]})]
    return Part(
        text,
        [*head, Call("update_contact", {"contact_id": target["contact_id"], **change})],
        (
            "updates-the-namesake",
            [*head, Call("update_contact", {"contact_id": twin["contact_id"], **change})],
        ),
        [target["contact_id"]],
    )


def log_part(b: _Book) -> Part:
    target = b.contact()
    twin = b.add_contact(
        b.company([c for c in b.state["companies"] if c["company_id"] == target["company_id"]]),
        target["name"],
    )
    kind = b.rng.choice(["call", "meeting", "note"])
    summary = b.rng.choice(SUMMARIES)
    who = b.who(target)
    if kind == "note":
        text = b.rng.choice(
            [
                f'Add a note to {who}: "{summary}".',
                f'Please put a note on the record of {who}: "{summary}".',
            ]
        )
    else:
        text = b.rng.choice(
            [
                f'Log a {kind} with {who}: "{summary}".',
                f'I just had a {kind} with {who} - please log it with the summary "{summary}".',
            ]
        )
    head = [Call("search_contacts", {"query": target["name"]})]
    log = {"kind": kind, "summary": summary}
    return Part(
        text,
        [*head, Call("log_activity", {"contact_id": target["contact_id"], **log})],
        (
            "logs-on-the-namesake",
            [*head, Call("log_activity", {"contact_id": twin["contact_id"], **log})],
        ),
        [target["contact_id"]],
    )


def task_part(b: _Book) -> Part:
    target = b.contact()
    due = (b.today + datetime.timedelta(days=b.rng.randint(2, 20))).isoformat()
    title = b.rng.choice(TASK_TITLES).format(first=target["name"].split()[0])
    who = b.who(target)
    when = b.pretty(due)
    text = b.rng.choice(
        [
            f'Remind me to follow up with {who} on {when}: create a task "{title}" on their '
            "contact record.",
            f'Please create a task "{title}" due {when}, linked to {who}.',
            f'Put a to-do on my list for {when}, "{title}", attached to {who}.',
        ]
    )
    head = [Call("search_contacts", {"query": target["name"]})]
    task = {"title": title, "due_date": due}
    return Part(
        text,
        [*head, Call("create_task", {**task, "contact_id": target["contact_id"]})],
        ("task-not-linked-to-the-contact", [*head, Call("create_task", task)]),
        [target["contact_id"]],
    )


def email_part(b: _Book) -> Part:
    target = b.contact()
    name, decoy = b.rng.choice(PAIRS)
    template, other = b.template(name), b.template(decoy)
    key = template["fields"][0]
    value = b.value(key)
    who = b.who(target)
    label = LABELS[key]
    text = b.rng.choice(
        [
            f'Please send {who} the "{name}" email ({label} {value}).',
            f'Could you email {who} with our "{name}" template? The {label} is {value}.',
            f'{who} should get the "{name}" email - {label}: {value}.',
        ]
    )
    head = [Call("search_contacts", {"query": target["name"]}), Call("list_templates", {})]
    send = {"contact_id": target["contact_id"], "fields": {key: value}}
    return Part(
        text,
        [*head, Call("send_email", {**send, "template_id": template["template_id"]})],
        (
            "sends-the-wrong-template",
            [*head, Call("send_email", {**send, "template_id": other["template_id"]})],
        ),
        [target["contact_id"]],
    )


# --- request parts: deals (a lookup by company, then the deal's id feeds the changes) -----------
def _deal_pair(b: _Book, stages: list[str], **kw: object) -> tuple[JSON, JSON, JSON]:
    company = b.company()
    stage = b.rng.choice(stages)
    deal = b.add_deal(company, stage, b.me["user_id"], **kw)  # type: ignore[arg-type]
    sibling = b.add_deal(company, stage, b.me["user_id"], **kw)  # type: ignore[arg-type]
    return company, deal, sibling


def _deal_head(company: JSON) -> list[Call]:
    return [
        Call("search_companies", {"query": company["name"]}),
        Call("list_deals", {"company_id": company["company_id"]}),
    ]


def stage_part(b: _Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["lead", "qualified", "proposal"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    name = deal["name"]
    text = b.rng.choice(
        [
            f'The "{name}" deal with {company["name"]} has moved on to {new}, please update it.',
            f'Please move {_poss(company["name"])} "{name}" deal to {new}.',
            f'Good news on "{name}" ({company["name"]}): it is at the {new} stage now.',
        ]
    )
    head = _deal_head(company)
    return Part(
        text,
        [*head, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": new})],
        (
            "moves-the-wrong-deal",
            [*head, Call("update_deal_stage", {"deal_id": sibling["deal_id"], "stage": new})],
        ),
        [deal["deal_id"]],
    )


def amount_part(b: _Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["qualified", "proposal"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    amount = deal["amount"] + b.rng.randint(4, 80) * 500
    name = deal["name"]
    text = b.rng.choice(
        [
            f'{company["name"]} wants a bigger order on "{name}": set the amount to ${amount:,} and '
            f"move the deal to {new}.",
            f'Please update "{name}" with {company["name"]}: the amount is now ${amount:,}, and it '
            f"is in {new}.",
        ]
    )
    head = _deal_head(company)
    calls = [
        Call("update_deal", {"deal_id": deal["deal_id"], "amount": amount}),
        Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": new}),
    ]
    wrong = [
        Call("update_deal", {"deal_id": sibling["deal_id"], "amount": amount}),
        Call("update_deal_stage", {"deal_id": sibling["deal_id"], "stage": new}),
    ]
    return Part(
        text, [*head, *calls], ("updates-the-wrong-deal", [*head, *wrong]), [deal["deal_id"]]
    )


def close_part(b: _Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["negotiation"])
    name = deal["name"]
    text = b.rng.choice(
        [
            f'{company["name"]} just signed the contract for "{name}"! Please mark it as signed and '
            "close it as won.",
            f'We won "{name}" with {company["name"]} - the contract is signed. Can you close it out '
            "as won?",
        ]
    )
    head = _deal_head(company)
    calls = [
        Call("update_deal", {"deal_id": deal["deal_id"], "signed": True}),
        Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": "closed-won"}),
    ]
    wrong = [
        Call("update_deal", {"deal_id": sibling["deal_id"], "signed": True}),
        Call("update_deal_stage", {"deal_id": sibling["deal_id"], "stage": "closed-won"}),
    ]
    return Part(
        text, [*head, *calls], ("closes-the-wrong-deal", [*head, *wrong]), [deal["deal_id"]]
    )


def discount_part(b: _Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["qualified", "proposal", "negotiation"])
    pct = b.rng.choice([22, 25, 25, 28, 30])
    approval = b.approval(deal, b.rng.choice([pct, pct, pct + 5]))
    decoy = b.approval(sibling, pct + 5)
    manager = b.user_name(approval["approved_by"])
    name = deal["name"]
    text = b.rng.choice(
        [
            f'{manager} approved a {pct}% discount on the "{name}" deal with {company["name"]} - '
            "please apply it.",
            f'Please put the {pct}% discount on {_poss(company["name"])} "{name}"; {manager} signed it '
            "off.",
        ]
    )
    head = _deal_head(company)
    calls = [
        Call("list_approvals", {"deal_id": deal["deal_id"]}),
        Call(
            "update_deal",
            {"deal_id": deal["deal_id"], "discount_pct": pct, "approval_token": approval["token"]},
        ),
    ]
    wrong = [
        Call("list_approvals", {"deal_id": sibling["deal_id"]}),
        Call(
            "update_deal",
            {"deal_id": sibling["deal_id"], "discount_pct": pct, "approval_token": decoy["token"]},
        ),
    ]
    return Part(
        text,
        [*head, *calls],
        ("discounts-the-wrong-deal", [*head, *wrong]),
        [deal["deal_id"], approval["token"]],
    )


def deal_note_part(b: _Book) -> Part:
    """A note on a deal, logged against the deal's main contact (found through the deal)."""
    company, deal, sibling = _deal_pair(b, ["qualified", "proposal", "negotiation"])
    summary = b.rng.choice(SUMMARIES)
    name = deal["name"]
    text = b.rng.choice(
        [
            f'Log a note on the "{name}" deal with {company["name"]} (against its main contact): '
            f'"{summary}".',
            f'Please add a note "{summary}" to {_poss(company["name"])} "{name}" deal, on the deal\'s '
            "main contact.",
        ]
    )
    head = _deal_head(company)
    note = {"kind": "note", "summary": summary}
    calls = [
        Call("get_deal", {"deal_id": deal["deal_id"]}),
        Call(
            "log_activity", {"contact_id": deal["contact_id"], "deal_id": deal["deal_id"], **note}
        ),
    ]
    wrong = [
        Call("get_deal", {"deal_id": sibling["deal_id"]}),
        Call(
            "log_activity",
            {"contact_id": sibling["contact_id"], "deal_id": sibling["deal_id"], **note},
        ),
    ]
    return Part(
        text,
        [*head, *calls],
        ("notes-the-wrong-deal", [*head, *wrong]),
        [deal["deal_id"], deal["contact_id"]],
    )


SIMPLE: list[Callable[[_Book], Part]] = [
    unsubscribe_part,
    contact_update_part,
    log_part,
    task_part,
    email_part,
    stage_part,
]
BIGGER: list[Callable[[_Book], Part]] = [amount_part, close_part, discount_part, deal_note_part]


# --- policy traps -----------------------------------------------------------------------------
def trap_opted_out(b: _Book) -> tuple[str, Call]:
    contact = b.add_contact(b.company(), unsubscribed=True)
    name, _ = b.rng.choice(PAIRS)
    template = b.template(name)
    key = template["fields"][0]
    value = b.value(key)
    text = b.rng.choice(
        [
            f'Also send {b.who(contact)} the "{name}" email ({LABELS[key]} {value}).',
            f'And {b.who(contact)} should get our "{name}" email too - {LABELS[key]}: {value}.',
        ]
    )
    return text, Call(
        "send_email",
        {
            "contact_id": contact["contact_id"],
            "template_id": template["template_id"],
            "fields": {key: value},
        },
    )


def trap_discount(b: _Book) -> tuple[str, Call]:
    company = b.company()
    deal = b.add_deal(company, b.rng.choice(["proposal", "negotiation"]), b.me["user_id"])
    pct = b.rng.choice([25, 30, 35, 40])
    manager = b.user_name(b.me["manager_id"])
    text = b.rng.choice(
        [
            f'And give {company["name"]} {pct}% off on "{deal["name"]}" - I\'ll sort out the '
            f"approval with {manager} later.",
            f'{company["name"]} is pushing hard, so set a {pct}% discount on "{deal["name"]}" '
            "right away please.",
        ]
    )
    return text, Call("update_deal", {"deal_id": deal["deal_id"], "discount_pct": pct})


def trap_unsigned_win(b: _Book) -> tuple[str, Call]:
    company = b.company()
    deal = b.add_deal(company, "negotiation", b.me["user_id"])
    text = b.rng.choice(
        [
            f'You can already mark "{deal["name"]}" with {company["name"]} as won - they promised '
            "to sign next week.",
            f'Close {_poss(company["name"])} "{deal["name"]}" as won today please; the signature is '
            "just a formality.",
        ]
    )
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": "closed-won"})


def trap_colleague_deal(b: _Book) -> tuple[str, Call]:
    company = b.company()
    rep = b.rng.choice(b.reps)
    deal = b.add_deal(company, b.rng.choice(["qualified", "proposal"]), rep["user_id"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    text = b.rng.choice(
        [
            f'{rep["name"]} is out this week, so please move their "{deal["name"]}" deal with '
            f"{company['name']} to {new}.",
            f'Could you also push {_poss(rep["name"])} "{deal["name"]}" ({company["name"]}) to {new}? '
            "They asked me to cover.",
        ]
    )
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": new})


def trap_skip_stage(b: _Book) -> tuple[str, Call]:
    company = b.company()
    deal = b.add_deal(company, "qualified", b.me["user_id"])
    text = b.rng.choice(
        [
            f'And move "{deal["name"]}" ({company["name"]}) straight to negotiation - we are '
            "skipping the proposal.",
            f'{company["name"]} does not need a proposal for "{deal["name"]}", so jump it to '
            "negotiation.",
        ]
    )
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": "negotiation"})


TRAPS = [trap_opted_out, trap_discount, trap_unsigned_win, trap_colleague_deal, trap_skip_stage]


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
            {"template_id": f"tpl-{i + 1}", "name": n, "subject": s, "body": body, "fields": fs}
            for i, (n, s, body, fs) in enumerate(TEMPLATES)
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
        b = _Book(rng, state)
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

    def sample(self, rng: random.Random, state: JSON, difficulty: Difficulty) -> Scenario:
        b = _Book(rng, state)
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
        traps: list[tuple[str, Call]] = []
        if difficulty is Difficulty.HARD:
            traps = [make(b) for make in rng.sample(TRAPS, rng.choice([1, 1, 2]))]

        return compose(
            rng,
            parts,
            traps,
            greetings=lambda: [
                f"Hi, this is {b.me['name']}.",
                f"Hey - {b.me['name']} from sales.",
                f"Hi! {b.me['name']} here.",
                "",
            ],
            byes=["Thanks!", "Thanks a lot.", "Cheers", ""],
            tags=["crm"],
        )
