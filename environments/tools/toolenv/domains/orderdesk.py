"""An account manager's order desk: the CRM and the store's order system, two apps with their
own ids and policies behind one tool server (:mod:`..suite`), tied together by the desk's own
rule: the store's orders of a company are worked only by the rep who owns its account in the
CRM."""

from __future__ import annotations

from ..core import JSON, lookup
from ..suite import App, compose
from . import crm, inventory

CONFIRMATION_TEMPLATE = "Order confirmation"
"""The CRM email template that confirms a store order (its order number)."""

POLICY = """\
# Order desk policy

You work for the acting user, an account manager, in two apps: the CRM (`crm_*` tools) and the
store's order system (`store_*`). A customer company has an account in each, under the same
company name; their ids differ, so match companies across the apps by name, never by id.

1. Work on the store's orders only for **your own accounts**: companies whose owner in the CRM
   is the acting user. Creating, changing, discounting, cancelling, shipping or returning an
   order of a colleague's account is theirs to do, whoever asks.
2. Order numbers are also invoice numbers. Emails about an order (a confirmation, an invoice
   reminder) go to the company's contacts with the CRM's templates, the order number in the
   template's field.
3. A request that spans both apps is done only when both show its part. When the policy forbids
   a part, change nothing for that part in either app.
"""

DOMAIN = compose(
    "orderdesk",
    "Order Desk (CRM, Store)",
    POLICY,
    [
        App("crm", crm.DOMAIN, crm.POLICY),
        App("store", inventory.DOMAIN, inventory.POLICY),
    ],
)

ORDER_CHANGES = (
    "store_create_order",
    "store_add_line",
    "store_update_quantity",
    "store_remove_line",
    "store_apply_discount",
    "store_cancel_order",
    "store_ship_order",
    "store_create_return",
)


def account_of(state: JSON, customer_id: str) -> JSON | None:
    """The CRM company whose name is the store customer's (None: not a company account)."""
    customer = lookup(state["store"]["customers"], "customer_id", customer_id)
    if customer is None:
        return None
    return lookup(state["crm"]["companies"], "name", customer["name"])


@DOMAIN.rule_on(*ORDER_CHANGES)
def own_accounts(state: JSON, tool: str, args: JSON) -> str | None:
    customer_id = args.get("customer_id")
    if customer_id is None:
        order_id = args.get("order_id")
        order = lookup(state["store"]["orders"], "order_id", order_id)
        customer_id = order["customer_id"] if order else None
    company = account_of(state, str(customer_id)) if customer_id else None
    if company is None or company["owner"] == state["crm"]["acting_user"]:
        return None
    return f"{tool} for {company['name']}, an account {company['owner']} owns in the CRM"
