"""Tool family: an account manager's requests across two apps at once (CRM, store orders)."""

from __future__ import annotations

import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.orderdesk import CONFIRMATION_TEMPLATE, DOMAIN

from factory.families.base import register
from factory.families.tool.crm.family import CrmRequests
from factory.families.tool.inventory.family import InventoryRequests
from factory.families.tool.scenario import Scenario, Shape
from factory.families.tool.suite import add_template, move_to
from factory.families.tool.toolfamily import ToolFamily
from factory.tasks.user_profile import RequiredFact
from factory.vocabulary import Difficulty

from .plan import OrderDeskPlan


@register
class OrderDeskRequests(ToolFamily):
    """An account manager's requests across the CRM and the store's order system, served as one
    tool server (:mod:`factory.toolenv.domains.orderdesk`) whose apps keep their own ids and
    policies; a company has an account in each, under the same name. Every part spans both
    apps: close a signed deal, place its order and email the order number; remind a contact of
    the latest delivered order's invoice; ship a pending order and note its number in the CRM;
    set a deal's amount to an order's discounted total. Easy: one such part; medium: two; hard:
    three, and more traps. Traps break a rule of one app or of the desk (an order for a
    colleague's account, overselling, a discount over the cap, cancelling a shipped order, a
    CRM rule); requests may be refused as a whole or include a part for a human (goods
    damaged in transit, a wholesale quote, a disputed invoice). The verifier diffs both apps'
    full state."""

    name = "tool-orderdesk"
    title = (
        "Handle an account manager's request across CRM and store-order apps under their policies"
    )
    toolenv_domain = "orderdesk"
    toolenv_modules = ("suite.py", "domains/crm.py", "domains/inventory.py")
    shapes = tuple(Shape)

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        crm = CrmRequests().seed_state(rng, difficulty)
        store = move_to(InventoryRequests().seed_state(rng, difficulty), crm["today"])
        # the store's seeder may draw one customer id twice: one account per id (the orders of
        # the id stay with the first)
        ids: set[str] = set()
        store["customers"] = [
            c
            for c in store["customers"]
            if not (c["customer_id"] in ids or ids.add(c["customer_id"]))
        ]
        for customer, company in zip(store["customers"], crm["companies"], strict=False):
            customer["name"] = company["name"]
            customer["email"] = f"orders@{company['domain']}"
        add_template(
            rng,
            crm,
            CONFIRMATION_TEMPLATE,
            "Order {order_number} confirmed",
            "Hi {first_name},\n\nThank you for order {order_number} from {company}; "
            "we will let you know when it ships.\n\n{sender_name}",
            ["order_number"],
        )
        return {"crm": crm, "store": store}

    def facts_to_tell(self, state: JSON, expected: JSON) -> list[RequiredFact]:
        """A simulated rep is told the number of every order the request places."""
        before = {o["order_id"] for o in state["store"]["orders"]}
        return [
            RequiredFact(fact="new order number", any_of=[o["order_id"]])
            for o in expected["store"]["orders"]
            if o["order_id"] not in before
        ]

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        plan = OrderDeskPlan(rng, state)
        parts = [plan.won_deal_order, plan.invoice_reminder, plan.ship_and_log, plan.deal_amount]
        plan.draw(shape, difficulty, parts)
        return plan.request_scenario(DOMAIN)
