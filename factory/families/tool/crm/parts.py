"""The parts a request to a sales CRM is made of: each adds the records it needs and returns its
words, its calls and a plausible wrong version of them."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from factory.toolenv.core import JSON

from factory.families.tool.scenario import Call, Part, near_swap

from .book import Book, possessive
from .data import LABELS, PAIRS, STAGES, SUMMARIES, TASK_TITLES, TITLES


# --- request parts: contacts ------------------------------------------------------------------
def unsubscribe_part(b: Book) -> Part:
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
    return near_swap(
        text,
        head,
        Call("unsubscribe", {"contact_id": target["contact_id"]}),
        "contact_id",
        twin["contact_id"],
        "unsubscribes-the-namesake",
        [target["contact_id"]],
    )


def contact_update_part(b: Book) -> Part:
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
    return near_swap(
        text,
        head,
        Call("update_contact", {"contact_id": target["contact_id"], **change}),
        "contact_id",
        twin["contact_id"],
        "updates-the-namesake",
        [target["contact_id"]],
    )


def log_part(b: Book) -> Part:
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
    return near_swap(
        text,
        head,
        Call("log_activity", {"contact_id": target["contact_id"], **log}),
        "contact_id",
        twin["contact_id"],
        "logs-on-the-namesake",
        [target["contact_id"]],
    )


def task_part(b: Book) -> Part:
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


def email_part(b: Book) -> Part:
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
    return near_swap(
        text,
        head,
        Call("send_email", {**send, "template_id": template["template_id"]}),
        "template_id",
        other["template_id"],
        "sends-the-wrong-template",
        [target["contact_id"]],
    )


# --- request parts: deals (a lookup by company, then the deal's id feeds the changes) -----------
def _deal_pair(b: Book, stages: list[str], **kw: object) -> tuple[JSON, JSON, JSON]:
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


def stage_part(b: Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["lead", "qualified", "proposal"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    name = deal["name"]
    text = b.rng.choice(
        [
            f'The "{name}" deal with {company["name"]} has moved on to {new}, please update it.',
            f'Please move {possessive(company["name"])} "{name}" deal to {new}.',
            f'Good news on "{name}" ({company["name"]}): it is at the {new} stage now.',
        ]
    )
    head = _deal_head(company)
    return near_swap(
        text,
        head,
        Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": new}),
        "deal_id",
        sibling["deal_id"],
        "moves-the-wrong-deal",
        [deal["deal_id"]],
    )


def amount_part(b: Book) -> Part:
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


def close_part(b: Book) -> Part:
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


def discount_part(b: Book) -> Part:
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
            f'Please put the {pct}% discount on {possessive(company["name"])} "{name}"; {manager} signed it '
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


def deal_note_part(b: Book) -> Part:
    """A note on a deal, logged against the deal's main contact (found through the deal)."""
    company, deal, sibling = _deal_pair(b, ["qualified", "proposal", "negotiation"])
    summary = b.rng.choice(SUMMARIES)
    name = deal["name"]
    text = b.rng.choice(
        [
            f'Log a note on the "{name}" deal with {company["name"]} (against its main contact): '
            f'"{summary}".',
            f'Please add a note "{summary}" to {possessive(company["name"])} "{name}" deal, on the deal\'s '
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


SIMPLE: list[Callable[[Book], Part]] = [
    unsubscribe_part,
    contact_update_part,
    log_part,
    task_part,
    email_part,
    stage_part,
]
BIGGER: list[Callable[[Book], Part]] = [amount_part, close_part, discount_part, deal_note_part]
