"""The parts a request to a sales CRM is made of: each adds the records it needs and returns its
words, its calls and a plausible wrong version of them."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from factory.toolenv.core import JSON
from factory.toolenv.domains.crm import STAGES

from factory.families.tool.scenario import Call, Part, near_swap, near_twin

from .book import Book
from .data import LABELS, PAIRS, SUMMARIES, TASK_TITLES, TITLES, WORDINGS


# --- request parts: contacts ------------------------------------------------------------------
def _namesakes(b: Book) -> tuple[JSON, JSON]:
    """A contact, and a namesake of theirs at another company."""
    target = b.contact()
    same = [c for c in b.state["companies"] if c["company_id"] == target["company_id"]]
    return target, b.add_contact(b.company(same), target["name"])


def unsubscribe_part(b: Book) -> Part:
    target, twin = _namesakes(b)
    who = b.who(target)
    text = WORDINGS.draw(b.rng, "unsubscribe", who=who)
    head = [Call("search_contacts", {"query": target["name"]})]
    return near_twin(
        text, head, "unsubscribe", "contact_id", target, twin, "unsubscribes-the-namesake"
    )


def contact_update_part(b: Book) -> Part:
    target, twin = _namesakes(b)
    who = b.who(target)
    if b.rng.random() < 0.6:
        title = b.rng.choice([t for t in TITLES if t not in (target["title"], twin["title"])])
        change = {"title": title}
        text = WORDINGS.draw(b.rng, "contact-title", who=who, title=title)
    else:
        first, last = target["name"].lower().split()
        domain = target["email"].split("@")[1]
        email = b.rng.choice(
            [f"{first[0]}.{last}@{domain}", f"{first}@{domain}", f"{last}.{first}@{domain}"]
        )
        change = {"email": email}
        text = WORDINGS.draw(b.rng, "contact-email", who=who, email=email)
    head = [Call("search_contacts", {"query": target["name"]})]
    return near_twin(
        text, head, "update_contact", "contact_id", target, twin, "updates-the-namesake", **change
    )


def log_part(b: Book) -> Part:
    target, twin = _namesakes(b)
    kind = b.rng.choice(["call", "meeting", "note"])
    summary = b.rng.choice(SUMMARIES)
    who = b.who(target)
    if kind == "note":
        text = WORDINGS.draw(b.rng, "log-note", who=who, summary=summary)
    else:
        text = WORDINGS.draw(b.rng, "log-activity", kind=kind, who=who, summary=summary)
    head = [Call("search_contacts", {"query": target["name"]})]
    log = {"kind": kind, "summary": summary}
    return near_twin(
        text, head, "log_activity", "contact_id", target, twin, "logs-on-the-namesake", **log
    )


def task_part(b: Book) -> Part:
    target = b.contact()
    due = (b.today + datetime.timedelta(days=b.rng.randint(2, 20))).isoformat()
    title = b.rng.choice(TASK_TITLES).format(first=target["name"].split()[0])
    who = b.who(target)
    when = b.pretty(due)
    text = WORDINGS.draw(b.rng, "task", who=who, when=when, title=title)
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
    text = WORDINGS.draw(b.rng, "email", who=who, name=name, label=label, value=value)
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


def _deal_swap(
    text: str,
    company: JSON,
    deal: JSON,
    sibling: JSON,
    calls: Callable[[JSON], list[Call]],
    miss: str,
    secrets: list[str],
) -> Part:
    """A part that looks up the company's deals and then makes ``calls(deal)``; its near miss
    ``miss`` makes them on the ``sibling`` deal."""
    head = _deal_head(company)
    return Part(text, [*head, *calls(deal)], (miss, [*head, *calls(sibling)]), secrets)


def stage_part(b: Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["lead", "qualified", "proposal"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    text = WORDINGS.draw(b.rng, "stage", **b.deal_words(company, deal), stage=new)
    head = _deal_head(company)
    return near_twin(
        text, head, "update_deal_stage", "deal_id", deal, sibling, "moves-the-wrong-deal", stage=new
    )


def amount_part(b: Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["qualified", "proposal"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    amount = deal["amount"] + b.rng.randint(4, 80) * 500
    text = WORDINGS.draw(b.rng, "amount", **b.deal_words(company, deal), amount=amount, stage=new)

    def calls(d: JSON) -> list[Call]:
        return [
            Call("update_deal", {"deal_id": d["deal_id"], "amount": amount}),
            Call("update_deal_stage", {"deal_id": d["deal_id"], "stage": new}),
        ]

    miss = "updates-the-wrong-deal"
    return _deal_swap(text, company, deal, sibling, calls, miss, [deal["deal_id"]])


def close_part(b: Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["negotiation"])
    text = WORDINGS.draw(b.rng, "close", **b.deal_words(company, deal))

    def calls(d: JSON) -> list[Call]:
        return [
            Call("update_deal", {"deal_id": d["deal_id"], "signed": True}),
            Call("update_deal_stage", {"deal_id": d["deal_id"], "stage": "closed-won"}),
        ]

    miss = "closes-the-wrong-deal"
    return _deal_swap(text, company, deal, sibling, calls, miss, [deal["deal_id"]])


def discount_part(b: Book) -> Part:
    company, deal, sibling = _deal_pair(b, ["qualified", "proposal", "negotiation"])
    pct = b.rng.choice([22, 25, 25, 28, 30])
    approval = b.approval(deal, b.rng.choice([pct, pct, pct + 5]))
    decoy = b.approval(sibling, pct + 5)
    manager = b.user_name(approval["approved_by"])
    text = WORDINGS.draw(b.rng, "discount", **b.deal_words(company, deal), manager=manager, pct=pct)
    tokens = {deal["deal_id"]: approval["token"], sibling["deal_id"]: decoy["token"]}

    def calls(d: JSON) -> list[Call]:
        apply = {
            "deal_id": d["deal_id"],
            "discount_pct": pct,
            "approval_token": tokens[d["deal_id"]],
        }
        return [Call("list_approvals", {"deal_id": d["deal_id"]}), Call("update_deal", apply)]

    miss = "discounts-the-wrong-deal"
    return _deal_swap(
        text, company, deal, sibling, calls, miss, [deal["deal_id"], approval["token"]]
    )


def deal_note_part(b: Book) -> Part:
    """A note on a deal, logged against the deal's main contact (found through the deal)."""
    company, deal, sibling = _deal_pair(b, ["qualified", "proposal", "negotiation"])
    summary = b.rng.choice(SUMMARIES)
    text = WORDINGS.draw(b.rng, "deal-note", **b.deal_words(company, deal), summary=summary)
    note = {"kind": "note", "summary": summary}

    def calls(d: JSON) -> list[Call]:
        on = {"contact_id": d["contact_id"], "deal_id": d["deal_id"], **note}
        return [Call("get_deal", {"deal_id": d["deal_id"]}), Call("log_activity", on)]

    miss = "notes-the-wrong-deal"
    return _deal_swap(
        text, company, deal, sibling, calls, miss, [deal["deal_id"], deal["contact_id"]]
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
