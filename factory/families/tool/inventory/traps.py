"""The policy traps of hard inventory requests: a part of the request the policy forbids (each
must trip a rule of the domain)."""

from __future__ import annotations

from factory.toolenv.domains.inventory import DISCOUNT_CAP

from factory.families.tool.scenario import Call

from .data import units_text
from .plan import InventoryPlan

# --- traps -------------------------------------------------------------------------------


def trap_oversell(plan: InventoryPlan) -> None:
    rng = plan.rng
    order, _ = plan._pending(1)
    pool = [p for p in plan.state["products"] if p["sku"] not in plan.used | plan._mine()]
    product = rng.choice(pool)
    plan.used.add(product["sku"])
    have = rng.randint(0, 6)
    product["stock"][order["warehouse_id"]] = have
    want = have + rng.randint(3, 12)
    plan.forbid(
        "trap-oversell",
        Call("add_line", {"order_id": order["order_id"], "sku": product["sku"], "quantity": want}),
        units=lambda: units_text(plan.rng, want, product),
        order=order["order_id"],
        want=want,
        product=product["name"],
    )


def trap_cancel_shipped(plan: InventoryPlan) -> None:
    order, _ = plan._shipped(1, plan.rng.randint(1, 6))
    plan.forbid(
        "trap-cancel-shipped",
        Call("cancel_order", {"order_id": order["order_id"]}),
        order=order["order_id"],
    )


def trap_late_return(plan: InventoryPlan) -> None:
    order, products = plan._shipped(1, plan.rng.randint(38, 90), quantities=[1])
    plan.forbid(
        "trap-late-return",
        Call(
            "create_return",
            {
                "order_id": order["order_id"],
                "reason": "no_longer_needed",
                "lines": [{"sku": products[0]["sku"], "quantity": 1}],
            },
        ),
        product=products[0]["name"],
        order=order["order_id"],
    )


def trap_discount(plan: InventoryPlan) -> None:
    order, _ = plan._pending(1)
    percent = DISCOUNT_CAP[plan.me["tier"]] + plan.rng.choice([5, 10, 15])
    plan.forbid(
        "trap-discount",
        Call("apply_discount", {"order_id": order["order_id"], "percent": percent}),
        percent=percent,
        order=order["order_id"],
    )


def trap_edit_shipped(plan: InventoryPlan) -> None:
    order, _ = plan._shipped(1, plan.rng.randint(0, 3))
    product = plan._product()
    plan._stock(product, order["warehouse_id"], 2)
    plan.forbid(
        "trap-edit-shipped",
        Call("add_line", {"order_id": order["order_id"], "sku": product["sku"], "quantity": 1}),
        product=product["name"],
        order=order["order_id"],
    )
