"""The parts of an order-desk request that only a human colleague may handle: each plants what
it needs and hands over with the reason the policy gives (``transfer_to_human``)."""

from __future__ import annotations

from factory.families.tool.scenario import Call

from .plan import InventoryPlan, item_of


def handover_damaged(plan: InventoryPlan) -> None:
    order, products = plan._shipped(1, plan.rng.randint(2, 10), quantities=[1])
    code = order["order_id"]
    texts = [
        f"Also, the {products[0]['name']} from order {code} arrived smashed - the box was "
        "crushed in transit. I want this taken up with the courier.",
        f"One more thing: order {code} came with the {products[0]['name']} broken, the parcel "
        "was clearly dropped on the way.",
    ]
    plan.hand_over(
        "damaged_delivery",
        texts,
        f"order {code} arrived damaged in transit",
        Call("get_order", {"order_id": code}),
    )


def handover_wholesale(plan: InventoryPlan) -> None:
    product = plan._product(need=False)
    units = plan.rng.choice([120, 150, 200, 250, 400, 500])
    texts = [
        f"Also, our office wants {units} units of {product['name']} - what price can you do "
        "for that many?",
        f"And I'd need a quote for {units} x {product['name']} for my company.",
    ]
    plan.hand_over(
        "wholesale_quote",
        texts,
        f"quote for {units} units of {product['sku']}",
        Call("search_products", {"query": item_of(product)}),
    )


HANDOVERS = [handover_damaged, handover_wholesale]
