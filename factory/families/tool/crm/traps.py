"""The policy traps of hard requests to a sales CRM: a part the policy forbids (each must trip a
rule of the domain)."""

from __future__ import annotations

from factory.toolenv.domains.crm import STAGES

from factory.families.tool.scenario import Call
from factory.families.tool.wordings import possessive

from .book import Book
from .data import LABELS, PAIRS, WORDINGS


# --- policy traps -----------------------------------------------------------------------------
def trap_opted_out(b: Book) -> tuple[str, Call]:
    contact = b.add_contact(b.company(), unsubscribed=True)
    name, _ = b.rng.choice(PAIRS)
    template = b.template(name)
    key = template["fields"][0]
    value = b.value(key)
    text = WORDINGS.draw(
        b.rng,
        "trap-opted-out",
        who=lambda: b.who(contact),
        name=name,
        label=LABELS[key],
        value=value,
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
    text = WORDINGS.draw(
        b.rng, "trap-discount", **b.deal_words(company, deal), pct=pct, manager=manager
    )
    return text, Call("update_deal", {"deal_id": deal["deal_id"], "discount_pct": pct})


def _move_my_deal(b: Book, stage: str, target: str, wording: str) -> tuple[str, Call]:
    """A trap that asks (in ``wording``) to move a deal of mine from ``stage`` to ``target``."""
    company = b.company()
    deal = b.add_deal(company, stage, b.me["user_id"])
    text = WORDINGS.draw(b.rng, wording, **b.deal_words(company, deal))
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": target})


def trap_unsigned_win(b: Book) -> tuple[str, Call]:
    return _move_my_deal(b, "negotiation", "closed-won", "trap-unsigned-win")


def trap_colleague_deal(b: Book) -> tuple[str, Call]:
    company = b.company()
    rep = b.rng.choice(b.reps)
    deal = b.add_deal(company, b.rng.choice(["qualified", "proposal"]), rep["user_id"])
    new = STAGES[STAGES.index(deal["stage"]) + 1]
    text = WORDINGS.draw(
        b.rng,
        "trap-colleague-deal",
        **b.deal_words(company, deal),
        rep=rep["name"],
        rep_possessive=possessive(rep["name"]),
        stage=new,
    )
    return text, Call("update_deal_stage", {"deal_id": deal["deal_id"], "stage": new})


def trap_skip_stage(b: Book) -> tuple[str, Call]:
    return _move_my_deal(b, "qualified", "negotiation", "trap-skip-stage")


TRAPS = [trap_opted_out, trap_discount, trap_unsigned_win, trap_colleague_deal, trap_skip_stage]
