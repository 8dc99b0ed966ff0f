"""The parts of an order-desk request that only a human colleague may handle: each plants what
it needs and hands over with the reason the policy gives (``transfer_to_human``)."""

from __future__ import annotations

from factory.families.tool.scenario import Call

from .plan import WORDINGS, InventoryPlan, item_of


def handover_damaged(plan: InventoryPlan) -> None:
    order, products = plan._shipped(1, plan.rng.randint(2, 10), quantities=[1])
    code = order["order_id"]
    texts = WORDINGS.fill("handover-damaged", product=products[0]["name"], order=code)
    plan.hand_over(
        "damaged_delivery",
        texts,
        f"order {code} arrived damaged in transit",
        Call("get_order", {"order_id": code}),
    )


def handover_wholesale(plan: InventoryPlan) -> None:
    product = plan._product(need=False)
    units = plan.rng.choice([120, 150, 200, 250, 400, 500])
    texts = WORDINGS.fill("handover-wholesale", units=units, product=product["name"])
    plan.hand_over(
        "wholesale_quote",
        texts,
        f"quote for {units} units of {product['sku']}",
        Call("search_products", {"query": item_of(product)}),
    )


HANDOVERS = [handover_damaged, handover_wholesale]
