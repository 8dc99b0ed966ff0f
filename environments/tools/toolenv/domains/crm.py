"""CRM and email: companies, contacts, deals moving through a pipeline, activities, tasks,
manager approvals for discounts, email templates and an outbox, worked by one sales rep."""

from __future__ import annotations

from ..core import JSON, Domain, ToolError, acting_user, find, finder, lookup, require

POLICY = """\
# Sales policy

1. You act for the acting user, a sales rep (see `get_account`). Deals (stage, amount,
   discount, signed flag) may only be changed on deals **they own**. Contacts, activities,
   tasks and emails are shared by the whole team.
2. Never email a contact who has unsubscribed (opted out), whatever the reason. Emails are sent
   only with `send_email` and a template.
3. Deals move forward **one stage at a time**: lead -> qualified -> proposal -> negotiation ->
   closed-won. Any open deal may be marked closed-lost. Closed deals are final: never move or
   edit them.
4. A deal may be marked closed-won only when it has an amount above zero and is flagged as
   signed.
5. A discount above 20% needs a manager's approval for that deal: pass the approval's token
   (see `list_approvals`) as `approval_token`; an approval covers discounts up to its
   `max_discount_pct`. Never apply a discount above 20% without one.
6. When a contact asks not to be emailed any more, unsubscribe them. Look records up with the
   tools; never guess an id.
"""

HANDOVERS = {
    "privacy_request": "a contact asks for a copy of the personal data we hold on them, or for "
    "it to be erased (the privacy team answers these)",
    "billing_dispute": "a customer disputes an invoice or asks for money back",
}

DOMAIN = Domain("crm", "Sales CRM", POLICY, handovers=HANDOVERS)

STAGES = ["lead", "qualified", "proposal", "negotiation", "closed-won", "closed-lost"]
OPEN = STAGES[:4]
_ID = {"type": "string"}
_DATE = {"type": "string", "description": "ISO date, YYYY-MM-DD"}


_company = finder("companies", "company_id", "company")
_contact = finder("contacts", "contact_id", "contact")
_deal = finder("deals", "deal_id", "deal")


def _contact_row(state: JSON, contact: JSON) -> JSON:
    company = lookup(state["companies"], "company_id", contact["company_id"]) or {}
    return {
        "contact_id": contact["contact_id"],
        "name": contact["name"],
        "email": contact["email"],
        "title": contact["title"],
        "company_id": contact["company_id"],
        "company": company.get("name", ""),
        "unsubscribed": contact["unsubscribed"],
    }


def _deal_row(state: JSON, deal: JSON) -> JSON:
    company = lookup(state["companies"], "company_id", deal["company_id"]) or {}
    return {
        "deal_id": deal["deal_id"],
        "name": deal["name"],
        "company_id": deal["company_id"],
        "company": company.get("name", ""),
        "stage": deal["stage"],
        "amount": deal["amount"],
        "discount_pct": deal["discount_pct"],
        "signed": deal["signed"],
        "owner": deal["owner"],
    }


def _check_date(value: str) -> str:
    import datetime

    try:
        return datetime.date.fromisoformat(value).isoformat()
    except ValueError:
        raise ToolError(f"bad date {value!r}: use YYYY-MM-DD") from None


def _next_id(state: JSON, counter: str, prefix: str) -> str:
    value = f"{prefix}-{state[counter]}"
    state[counter] += 1
    return value


# --- read-only tools ------------------------------------------------------------------------------
@DOMAIN.tool("The acting user (the rep you work for), their manager and today's date.")
def get_account(state: JSON) -> JSON:
    me = acting_user(state)
    return {"user": me, "today": state["today"]}


@DOMAIN.tool(
    "Contacts whose name, email or company name contains the query (case-insensitive).",
    {"query": {"type": "string"}},
)
def search_contacts(state: JSON, query: str) -> list[JSON]:
    q = query.lower().strip()
    rows = [_contact_row(state, c) for c in state["contacts"]]
    return [
        r for r in rows if q in r["name"].lower() or q in r["email"] or q in r["company"].lower()
    ]


@DOMAIN.tool(
    "One contact with their company, phone, opt-out status and recent activities.",
    {"contact_id": _ID},
)
def get_contact(state: JSON, contact_id: str) -> JSON:
    contact = _contact(state, contact_id)
    activities = [a for a in state["activities"] if a["contact_id"] == contact_id]
    return {**contact, **_contact_row(state, contact), "activities": activities[-5:]}


@DOMAIN.tool(
    "Companies whose name contains the query (case-insensitive).", {"query": {"type": "string"}}
)
def search_companies(state: JSON, query: str) -> list[JSON]:
    q = query.lower().strip()
    return [c for c in state["companies"] if q in c["name"].lower()]


@DOMAIN.tool(
    "Deals, optionally only those of a company, in a stage, or owned by a user.",
    {"company_id": _ID, "stage": {"type": "string", "enum": STAGES}, "owner": _ID},
    required=[],
)
def list_deals(state: JSON, company_id: str = "", stage: str = "", owner: str = "") -> list[JSON]:
    return [
        _deal_row(state, d)
        for d in state["deals"]
        if (not company_id or d["company_id"] == company_id)
        and (not stage or d["stage"] == stage)
        and (not owner or d["owner"] == owner)
    ]


@DOMAIN.tool("One deal with its main contact and stage history.", {"deal_id": _ID})
def get_deal(state: JSON, deal_id: str) -> JSON:
    deal = _deal(state, deal_id)
    return {**deal, **_deal_row(state, deal)}


DOMAIN.rows_tool(
    "list_approvals", "Discount approvals managers gave for a deal.", "approvals", "deal_id", _deal
)


DOMAIN.rows_tool(
    "list_activities",
    "Activities (calls, meetings, notes) logged for a contact.",
    "activities",
    "contact_id",
    _contact,
)


@DOMAIN.tool("The acting user's open tasks.")
def list_tasks(state: JSON) -> list[JSON]:
    return [t for t in state["tasks"] if t["owner"] == state["acting_user"] and not t["done"]]


DOMAIN.table_tool(
    "list_templates",
    "Email templates with the fields send_email needs. first_name, company and sender_name are "
    "filled in automatically.",
    "templates",
)


# --- changes -------------------------------------------------------------------------------------
@DOMAIN.tool(
    "Change a contact's title, phone or email (give at least one).",
    {
        "contact_id": _ID,
        "title": {"type": "string"},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    required=["contact_id"],
    mutates=True,
)
def update_contact(
    state: JSON, contact_id: str, title: str = "", phone: str = "", email: str = ""
) -> JSON:
    contact = _contact(state, contact_id)
    require(bool(title or phone or email), "give a new title, phone or email")
    if email:
        email = email.strip().lower()
        require("@" in email and "." in email.rsplit("@", 1)[1], f'"{email}" is not an email')
        other = lookup(state["contacts"], "email", email)
        require(other is None or other is contact, f"{email} belongs to {other and other['name']}")
        contact["email"] = email
    if title:
        contact["title"] = title.strip()
    if phone:
        contact["phone"] = phone.strip()
    return _contact_row(state, contact)


@DOMAIN.tool("Stop all emails to a contact (they opted out).", {"contact_id": _ID}, mutates=True)
def unsubscribe(state: JSON, contact_id: str) -> JSON:
    contact = _contact(state, contact_id)
    require(not contact["unsubscribed"], f"{contact['name']} is already unsubscribed")
    contact["unsubscribed"] = True
    contact["unsubscribed_on"] = state["today"]
    return _contact_row(state, contact)


@DOMAIN.tool(
    "Move a deal to another stage.",
    {"deal_id": _ID, "stage": {"type": "string", "enum": STAGES}},
    mutates=True,
)
def update_deal_stage(state: JSON, deal_id: str, stage: str) -> JSON:
    deal = _deal(state, deal_id)
    require(deal["stage"] in OPEN, f"{deal_id} is {deal['stage']}: closed deals are final")
    require(deal["stage"] != stage, f"{deal_id} is already in {stage}")
    deal["stage"] = stage
    deal["stage_history"].append({"stage": stage, "date": state["today"]})
    if stage.startswith("closed"):
        deal["closed_on"] = state["today"]
    return _deal_row(state, deal)


@DOMAIN.tool(
    "Change a deal's amount (USD), discount (percent), or signed flag. A discount above 20% "
    "needs approval_token.",
    {
        "deal_id": _ID,
        "amount": {"type": "number"},
        "discount_pct": {"type": "number"},
        "signed": {"type": "boolean"},
        "approval_token": {"type": "string"},
    },
    required=["deal_id"],
    mutates=True,
)
def update_deal(
    state: JSON,
    deal_id: str,
    amount: float | None = None,
    discount_pct: float | None = None,
    signed: bool | None = None,
    approval_token: str = "",
) -> JSON:
    deal = _deal(state, deal_id)
    require(deal["stage"] in OPEN, f"{deal_id} is {deal['stage']}: closed deals are final")
    require(
        amount is not None or discount_pct is not None or signed is not None,
        "give a new amount, discount_pct or signed",
    )
    if approval_token:
        approval = lookup(state["approvals"], "token", approval_token)
        require(
            approval is not None and approval["deal_id"] == deal_id,
            f"no approval {approval_token!r} for {deal_id}",
        )
    if amount is not None:
        require(amount >= 0, "the amount cannot be negative")
        deal["amount"] = amount
    if discount_pct is not None:
        require(0 <= discount_pct <= 100, "discount_pct is a percentage, 0 to 100")
        deal["discount_pct"] = discount_pct
        deal["approval_token"] = approval_token if discount_pct > 20 else ""
    if signed is not None:
        deal["signed"] = signed
    return _deal_row(state, deal)


@DOMAIN.tool(
    "Log a call, meeting or note against a contact (and optionally one of their deals).",
    {
        "contact_id": _ID,
        "kind": {"type": "string", "enum": ["call", "meeting", "note"]},
        "summary": {"type": "string"},
        "deal_id": _ID,
    },
    required=["contact_id", "kind", "summary"],
    mutates=True,
)
def log_activity(state: JSON, contact_id: str, kind: str, summary: str, deal_id: str = "") -> JSON:
    _contact(state, contact_id)
    require(bool(summary.strip()), "the summary must not be empty")
    if deal_id:
        _deal(state, deal_id)
    activity = {
        "activity_id": _next_id(state, "next_activity", "act"),
        "contact_id": contact_id,
        "deal_id": deal_id,
        "kind": kind,
        "summary": summary.strip(),
        "date": state["today"],
        "by": state["acting_user"],
    }
    state["activities"].append(activity)
    return activity


@DOMAIN.tool(
    "Create a to-do for the acting user, optionally about a contact or deal.",
    {"title": {"type": "string"}, "due_date": _DATE, "contact_id": _ID, "deal_id": _ID},
    required=["title", "due_date"],
    mutates=True,
)
def create_task(
    state: JSON, title: str, due_date: str, contact_id: str = "", deal_id: str = ""
) -> JSON:
    require(bool(title.strip()), "the title must not be empty")
    due_date = _check_date(due_date)
    require(due_date >= state["today"], f"the due date {due_date} is in the past")
    if contact_id:
        _contact(state, contact_id)
    if deal_id:
        _deal(state, deal_id)
    task = {
        "task_id": _next_id(state, "next_task", "task"),
        "title": title.strip(),
        "due_date": due_date,
        "contact_id": contact_id,
        "deal_id": deal_id,
        "owner": state["acting_user"],
        "done": False,
        "created": state["today"],
    }
    state["tasks"].append(task)
    return task


@DOMAIN.tool("Mark one of your tasks done.", {"task_id": _ID}, mutates=True)
def complete_task(state: JSON, task_id: str) -> JSON:
    task = find(state["tasks"], "task_id", task_id, "task")
    require(task["owner"] == state["acting_user"], f"{task_id} is not your task")
    require(not task["done"], f"{task_id} is already done")
    task["done"] = True
    return task


@DOMAIN.tool(
    "Send a templated email to a contact (it goes to the outbox). fields gives a value for each "
    "of the template's fields.",
    {
        "contact_id": _ID,
        "template_id": _ID,
        "fields": {
            "type": "object",
            "description": "template field -> its text",
            "additionalProperties": {"type": "string"},
        },
    },
    mutates=True,
)
def send_email(state: JSON, contact_id: str, template_id: str, fields: JSON) -> JSON:
    contact = _contact(state, contact_id)
    template = find(state["templates"], "template_id", template_id, "template")
    wanted, given = set(template["fields"]), set(fields)
    require(
        not given - wanted,
        f"{template_id} has no field(s) {', '.join(sorted(given - wanted))}"
        f"; its fields: {', '.join(template['fields']) or 'none'}",
    )
    require(not wanted - given, f"{template_id} needs field(s) {', '.join(sorted(wanted - given))}")
    for key, value in fields.items():
        require(isinstance(value, str) and value.strip() != "", f"field {key} must be a text")
    me = acting_user(state)
    company = lookup(state["companies"], "company_id", contact["company_id"]) or {}
    values = {
        "first_name": contact["name"].split()[0],
        "company": company.get("name", ""),
        "sender_name": me["name"],
        **{k: v.strip() for k, v in fields.items()},
    }
    email = {
        "email_id": _next_id(state, "next_email", "em"),
        "contact_id": contact_id,
        "to": contact["email"],
        "from": me["email"],
        "template_id": template_id,
        "subject": template["subject"].format(**values),
        "body": template["body"].format(**values),
        "sent_on": state["today"],
    }
    state["outbox"].append(email)
    return email


# --- policy ---------------------------------------------------------------------------------------
@DOMAIN.rule_on("update_deal", "update_deal_stage")
def own_deals(state: JSON, tool: str, args: JSON) -> str | None:
    deal = lookup(state["deals"], "deal_id", args.get("deal_id"))
    if deal and deal["owner"] != state["acting_user"]:
        return f"{tool} on {deal['deal_id']} ({deal['name']}), which {deal['owner']} owns"
    return None


@DOMAIN.rule_on("send_email")
def no_email_to_opted_out(state: JSON, tool: str, args: JSON) -> str | None:
    contact = lookup(state["contacts"], "contact_id", args.get("contact_id"))
    if contact and contact["unsubscribed"]:
        return f"email to {contact['name']} ({contact['contact_id']}), who unsubscribed"
    return None


@DOMAIN.rule_on("update_deal_stage")
def one_stage_at_a_time(state: JSON, tool: str, args: JSON) -> str | None:
    deal = lookup(state["deals"], "deal_id", args.get("deal_id"))
    stage = args.get("stage")
    if deal is None or stage not in STAGES or deal["stage"] not in OPEN or stage == deal["stage"]:
        return None  # the tool explains these
    if stage == "closed-lost":
        return None
    if STAGES.index(stage) != STAGES.index(deal["stage"]) + 1:
        return f"moving {deal['deal_id']} from {deal['stage']} to {stage}"
    return None


@DOMAIN.rule_on("update_deal_stage")
def closed_won_needs_signature(state: JSON, tool: str, args: JSON) -> str | None:
    if args.get("stage") != "closed-won":
        return None
    deal = lookup(state["deals"], "deal_id", args.get("deal_id"))
    if deal and (not deal["signed"] or not deal["amount"] or deal["amount"] <= 0):
        missing = "a signature" if not deal["signed"] else "an amount"
        return f"closing {deal['deal_id']} as won without {missing}"
    return None


@DOMAIN.rule_on("update_deal")
def discount_approval(state: JSON, tool: str, args: JSON) -> str | None:
    pct = args.get("discount_pct")
    if not isinstance(pct, (int, float)) or isinstance(pct, bool) or pct <= 20:
        return None
    token = args.get("approval_token", "")
    approval = lookup(state["approvals"], "token", token) if token else None
    if approval is None or approval["deal_id"] != args.get("deal_id"):
        return f"a {pct}% discount on {args.get('deal_id')} without a manager's approval"
    if pct > approval["max_discount_pct"]:
        return (
            f"a {pct}% discount on {args.get('deal_id')}; the approval covers "
            f"{approval['max_discount_pct']}%"
        )
    return None
