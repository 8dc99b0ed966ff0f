"""Tool family: store orders and inventory (new orders, order edits, cancellations, returns,
discounts) under a no-oversell store policy."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.inventory import DOMAIN

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import Scenario, Shape
from factory.families.tool.toolfamily import ToolFamily, draw_pieces, draw_today, request_text
from factory.vocabulary import Difficulty

from .data import ITEMS, WAREHOUSES
from .handovers import HANDOVERS
from .plan import InventoryPlan, add_order
from .traps import (
    trap_cancel_shipped,
    trap_discount,
    trap_edit_shipped,
    trap_late_return,
    trap_oversell,
)


@register
class InventoryRequests(ToolFamily):
    """Online-store requests over a seeded catalogue, stock per warehouse and order book.
    Easy: one change to an order the customer names (add a product, change a quantity,
    return damaged units, ship it). Medium: a new order (customer, home warehouse and SKUs
    found by lookup) plus one change. Hard: a new order and two changes. Requests may add parts
    the policy forbids (none at easy, up to one at medium, up to three at hard: overselling
    stock, cancelling a shipped order, a late return, a discount over the cap, editing a
    shipped order), be refused as a whole, or include a part for a human colleague (goods
    damaged in transit, a wholesale quote)."""

    name = "tool-inventory"
    shapes = tuple(Shape)
    title = "Handle an online-store customer's request with order and inventory tools"
    toolenv_domain = "inventory"

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        today = draw_today(rng, datetime.date(2026, 2, 2))
        warehouses = [
            {"warehouse_id": w, "name": f"{city} fulfilment centre", "city": city}
            for w, city in rng.sample(WAREHOUSES, 3)
        ]
        wids = [w["warehouse_id"] for w in warehouses]
        products = []
        for item in rng.sample(ITEMS, 9):
            for variant in item.variants:
                code = variant.replace("Size ", "").replace(" ", "").upper()[:5]
                products.append(
                    {
                        "sku": f"{item.sku_prefix}-{code}-{rng.randint(10, 99)}",
                        "name": f"{item.name} - {variant}",
                        "category": item.category,
                        "price": round(
                            item.base_price * rng.choice([0.9, 1.0, 1.0, 1.1, 1.2]) - 0.01, 2
                        ),
                        "stock": {
                            w: rng.choice([0, rng.randint(1, 8), rng.randint(5, 60)]) for w in wids
                        },
                    }
                )
        state: JSON = {
            "today": today.isoformat(),
            "warehouses": warehouses,
            "products": products,
            "customers": [],
            "orders": [],
            "returns": [],
            "next_order": rng.randrange(20000, 80000),
            "next_return": rng.randrange(500, 5000),
        }
        for first, last in rng.sample([(f, s) for f in FIRST for s in LAST], 8):
            customer = {
                "customer_id": f"CU-{rng.randint(1000, 9999)}",
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}@shopper.example",
                "tier": rng.choice(["standard", "standard", "vip"]),
                "home_warehouse": rng.choice(wids),
            }
            state["customers"].append(customer)
            for _ in range(rng.randint(1, 3)):
                status = rng.choice(["pending", "shipped", "delivered", "delivered", "cancelled"])
                add_order(rng, state, customer, status, rng.randint(1, 3), age=rng.randint(2, 120))
        return state

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        me = rng.choice(state["customers"])
        plan = InventoryPlan(rng, state, me)
        traps = [
            trap_oversell,
            trap_cancel_shipped,
            trap_late_return,
            trap_discount,
            trap_edit_shipped,
        ]

        def more() -> None:
            plan.create()
            pieces = [
                plan.add_product,
                plan.change_quantity,
                plan.return_items,
                plan.cancel,
                plan.discount,
                plan.ship,
            ]
            for piece in rng.sample(pieces, 1 if difficulty is Difficulty.MEDIUM else 2):
                piece()

        easy = [plan.add_product, plan.change_quantity, plan.return_items, plan.ship]
        draw_pieces(plan, shape, difficulty, traps, HANDOVERS, easy, more)
        request = request_text(plan.intro(), plan.parts, plan.wording("bye"))
        return plan.scenario(DOMAIN, request, "orders")
