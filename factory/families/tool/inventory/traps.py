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
        [
            f"Also add {units_text(plan.rng, want, product)} to order {order['order_id']} - I need exactly "
            f"{want}, for a workshop.",
            f"And on {order['order_id']} I need {want} x {product['name']}; all {want} or nothing.",
        ],
        Call("add_line", {"order_id": order["order_id"], "sku": product["sku"], "quantity": want}),
    )


def trap_cancel_shipped(plan: InventoryPlan) -> None:
    order, _ = plan._shipped(1, plan.rng.randint(1, 6))
    plan.forbid(
        [
            f"And please cancel order {order['order_id']}, I ordered it by mistake.",
            f"Also I no longer want order {order['order_id']} - cancel it please.",
        ],
        Call("cancel_order", {"order_id": order["order_id"]}),
    )


def trap_late_return(plan: InventoryPlan) -> None:
    order, products = plan._shipped(1, plan.rng.randint(38, 90), quantities=[1])
    plan.forbid(
        [
            f"Also I'd like to return the {products[0]['name']} from order "
            f"{order['order_id']}, I don't need it anymore.",
            f"And I want to send back the {products[0]['name']} I got with "
            f"{order['order_id']} - not needed after all.",
        ],
        Call(
            "create_return",
            {
                "order_id": order["order_id"],
                "reason": "no_longer_needed",
                "lines": [{"sku": products[0]["sku"], "quantity": 1}],
            },
        ),
    )


def trap_discount(plan: InventoryPlan) -> None:
    order, _ = plan._pending(1)
    percent = DISCOUNT_CAP[plan.me["tier"]] + plan.rng.choice([5, 10, 15])
    plan.forbid(
        [
            f"And since I'm a loyal customer, take {percent}% off order {order['order_id']}.",
            f"Could you also give me {percent}% off {order['order_id']}? A friend got that.",
        ],
        Call("apply_discount", {"order_id": order["order_id"], "percent": percent}),
    )


def trap_edit_shipped(plan: InventoryPlan) -> None:
    order, _ = plan._shipped(1, plan.rng.randint(0, 3))
    product = plan._product()
    plan._stock(product, order["warehouse_id"], 2)
    plan.forbid(
        [
            f"Oh, and please add 1 x {product['name']} to order {order['order_id']}.",
            f"Can you slip 1 x {product['name']} into order {order['order_id']} too?",
        ],
        Call("add_line", {"order_id": order["order_id"], "sku": product["sku"], "quantity": 1}),
    )
