"""The policy traps of hard requests to a sales CRM: a part the policy forbids (each must trip a
rule of the domain)."""

from __future__ import annotations

from factory.toolenv.domains.crm import STAGES

from factory.families.tool.scenario import Call

from .book import Book, possessive
from .data import LABELS, PAIRS, WORDINGS


# --- policy traps -----------------------------------------------------------------------------
def trap_opted_out(b: Book) -> tuple[str, Call]:
    contact = b.add_contact(b.company(), unsubscribed=True)
    name, _ = b.rng.choice(PAIRS)
    template = b.template(name)
    key = template["fields"][0]
    value = b.value(key)
    text = b.rng.choice(
        WORDINGS.fill(
            "trap-opted-out",
            who=lambda: b.who(contact),
            name=name,
            label=LABELS[key],
            value=value,
        )
    )
    return text, Call(
        "send_email",
        {
            "contact_id": contact["contact_id"],
            "template_id": template["template_id"],
            "fields": {key: value},
        },
    )


def trap_discount(b: Book) -> tuple[str, Call]:
    company = b.company()
    deal = b.add_deal(company, b.rng.choice(["proposal", "negotiation"]), b.me["user_id"])
    pct = b.rng.choice([25, 30, 35, 40])
    manager = b.user_name(b.me["manager_id"])
    text = b.rng.choice(
        WORDINGS.fill(
            "trap-discount", company=company["name"], pct=pct, deal=deal["name"], manager=manager
        )
    )
    return text, Call("update_deal", {"deal_id": deal["deal_id"], "discount_pct": pct})


def trap_unsigned_win(b: Book) -> tuple[str, Call]:
    company = b.company()
    deal = b.add_deal(company, "negotiation", b.me["user_id"])
    text = b.rng.choice(
        WORDINGS.fill(
            "trap-unsigned-win",
            deal=deal["name"],
            company=company["name"],
            company_possessive=possessive(company["name"]),
        )
    )
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": "closed-won"})


def trap_colleague_deal(b: Book) -> tuple[str, Call]:
    company = b.company()
    rep = b.rng.choice(b.reps)
    deal = b.add_deal(company, b.rng.choice(["qualified", "proposal"]), rep["user_id"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    text = b.rng.choice(
        WORDINGS.fill(
            "trap-colleague-deal",
            rep=rep["name"],
            rep_possessive=possessive(rep["name"]),
            deal=deal["name"],
            company=company["name"],
            stage=new,
        )
    )
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": new})


def trap_skip_stage(b: Book) -> tuple[str, Call]:
    company = b.company()
    deal = b.add_deal(company, "qualified", b.me["user_id"])
    text = b.rng.choice(
        WORDINGS.fill("trap-skip-stage", deal=deal["name"], company=company["name"])
    )
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": "negotiation"})


TRAPS = [trap_opted_out, trap_discount, trap_unsigned_win, trap_colleague_deal, trap_skip_stage]
