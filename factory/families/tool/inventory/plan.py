"""The pieces of an order-desk request: each plants what it needs in the seeded state and adds
calls, words and near misses to the plan."""

from __future__ import annotations

import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.inventory import DISCOUNT_CAP, DOMAIN

from factory.families.tool.scenario import Call
from factory.families.tool.toolfamily import Plan, shift_date

from .data import WORDINGS, units_text


def add_order(
    rng: random.Random,
    state: JSON,
    customer: JSON,
    status: str,
    size: int,
    *,
    age: int,
    products: list[JSON] | None = None,
    quantities: list[int] | None = None,
    shipped_ago: int | None = None,
) -> JSON:
    """Add an existing order (the stock already accounts for it)."""
    products = products or rng.sample(state["products"], size)
    quantities = quantities or [rng.randint(1, 4) for _ in products]
    taken = {o["order_id"] for o in state["orders"]}
    order_id = f"SO-{rng.randint(10000, state['next_order'] - 1)}"
    while order_id in taken:
        order_id = f"SO-{rng.randint(10000, state['next_order'] - 1)}"
    lines = sorted(
        (
            {"sku": p["sku"], "quantity": q, "unit_price": p["price"]}
            for p, q in zip(products, quantities, strict=True)
        ),
        key=lambda x: x["sku"],
    )
    created = shift_date(state["today"], -age)
    shipped = None
    if status in ("shipped", "delivered"):
        ago = shipped_ago if shipped_ago is not None else rng.randint(0, max(0, age - 1))
        shipped = shift_date(state["today"], -min(ago, age))
    subtotal = round(sum(x["quantity"] * x["unit_price"] for x in lines), 2)
    order = {
        "order_id": order_id,
        "customer_id": customer["customer_id"],
        "warehouse_id": customer["home_warehouse"],
        "status": status,
        "created": created,
        "shipped_on": shipped,
        "lines": lines,
        "discount_pct": 0,
        "subtotal": subtotal,
        "total": subtotal,
    }
    state["orders"].append(order)
    return order


def item_of(product: JSON) -> str:
    """The item a product is a variant of ("Desk lamp" of "Desk lamp - black")."""
    return product["name"].split(" - ")[0]


def retotal(order: JSON) -> None:
    """An undiscounted order's subtotal and total, after its lines changed."""
    order["subtotal"] = order["total"] = round(
        sum(x["quantity"] * x["unit_price"] for x in order["lines"]), 2
    )


class InventoryPlan(Plan):
    """The pieces of an order-desk request."""

    domain = DOMAIN
    wordings = WORDINGS

    def __init__(self, rng: random.Random, state: JSON, me: JSON) -> None:
        super().__init__(rng, state, me)
        self.used: set[str] = set()
        """SKUs a piece relies on (kept apart so that stock needs never interfere)."""
        self.home = me["home_warehouse"]

    def intro(self) -> str:
        return self.wording("hello", name=self.me["name"], email=self.me["email"])

    def _product(self, *, need: bool = True, avoid: set[str] = frozenset()) -> JSON:
        """A product none of whose variants a piece relies on yet. With ``need``, the piece
        relies on its stock: its whole item is reserved (so stock needs never interfere and a
        sibling variant stays free for near misses)."""
        by_item: dict[str, list[JSON]] = {}
        for p in self.state["products"]:
            by_item.setdefault(item_of(p), []).append(p)
        free = [
            p
            for ps in by_item.values()
            if not any(x["sku"] in self.used for x in ps)
            for p in ps
            if p["sku"] not in avoid
        ]
        product = self.rng.choice(free)
        if need:
            self.used.update(p["sku"] for p in by_item[item_of(product)])
        return product

    def _mine(self) -> set[str]:
        """SKUs in any order of the acting customer."""
        return {
            x["sku"]
            for o in self.state["orders"]
            if o["customer_id"] == self.me["customer_id"]
            for x in o["lines"]
        }

    def _sibling(self, product: JSON) -> JSON:
        item = item_of(product)
        return next(p for p in self.state["products"] if item_of(p) == item and p is not product)

    def _stock(self, product: JSON, warehouse: str, need: int) -> None:
        product["stock"][warehouse] = max(
            product["stock"].get(warehouse, 0), need + self.rng.randint(0, 12)
        )

    def _distinct_products(self, size: int, avoid: set[str] = frozenset()) -> list[JSON]:
        """``size`` different products the order's piece does not rely on the stock of."""
        products: list[JSON] = []
        while len(products) < size:
            product = self._product(need=False, avoid=avoid)
            if product not in products:
                products.append(product)
        return products

    def _pending(self, size: int = 2, avoid: set[str] = frozenset()) -> tuple[JSON, list[JSON]]:
        products = self._distinct_products(size, avoid)
        order = add_order(
            self.rng,
            self.state,
            self.me,
            "pending",
            size,
            age=self.rng.randint(0, 6),
            products=products,
            quantities=[self.rng.randint(1, 4) for _ in products],
        )
        return order, products

    def _shipped(
        self, size: int, shipped_ago: int, quantities: list[int] | None = None
    ) -> tuple[JSON, list[JSON]]:
        products = self._distinct_products(size)
        order = add_order(
            self.rng,
            self.state,
            self.me,
            self.rng.choice(["shipped", "delivered"]),
            size,
            age=shipped_ago + self.rng.randint(1, 4),
            products=products,
            quantities=quantities,
            shipped_ago=shipped_ago,
        )
        return order, products

    # --- changes -----------------------------------------------------------------------------

    def create(self) -> None:
        rng, cid = self.rng, self.me["customer_id"]
        products = [self._product() for _ in range(rng.randint(1, 2))]
        quantities = [rng.randint(1, 5) for _ in products]
        for product, quantity in zip(products, quantities, strict=True):
            self._stock(product, self.home, quantity)
        lines = [
            {"sku": p["sku"], "quantity": q} for p, q in zip(products, quantities, strict=True)
        ]
        calls = [Call("find_customer", {"query": self.me["name"]})]
        calls += [Call("search_products", {"query": item_of(p)}) for p in products]
        create = Call(
            "create_order", {"customer_id": cid, "warehouse_id": self.home, "lines": lines}
        )
        calls.append(create)
        wrong = [{**lines[0], "sku": self._sibling(products[0])["sku"]}, *lines[1:]]
        self.miss("orders-the-wrong-variant", calls, create.but(lines=wrong))
        other = next(
            w["warehouse_id"] for w in self.state["warehouses"] if w["warehouse_id"] != self.home
        )
        self.miss("ships-from-another-warehouse", calls, create.but(warehouse_id=other))
        self.calls += calls
        self.secrets += [cid, *(p["sku"] for p in products)]
        items = " and ".join(
            units_text(self.rng, q, p) for p, q in zip(products, quantities, strict=True)
        )
        self.say("new-order", items=items)

    def add_product(self) -> None:
        rng = self.rng
        order, _ = self._pending(rng.randint(1, 2))
        product = self._product()
        quantity = rng.randint(1, 4)
        self._stock(product, order["warehouse_id"], quantity)
        oid = order["order_id"]
        calls = [
            Call("get_order", {"order_id": oid}),
            Call("search_products", {"query": item_of(product)}),
            Call("add_line", {"order_id": oid, "sku": product["sku"], "quantity": quantity}),
        ]
        wrong = calls[-1].but(sku=self._sibling(product)["sku"])
        self.change(calls, "adds-the-wrong-variant", wrong)
        self.secrets.append(product["sku"])
        self.say("edit-order", units=lambda: units_text(self.rng, quantity, product), order=oid)

    def change_quantity(self) -> None:
        rng = self.rng
        product = self._product()
        order, products = self._pending(1, avoid={product["sku"]})
        order["lines"].append(
            {"sku": product["sku"], "quantity": rng.randint(1, 4), "unit_price": product["price"]}
        )
        order["lines"].sort(key=lambda x: x["sku"])
        line = next(x for x in order["lines"] if x["sku"] == product["sku"])
        oid = order["order_id"]
        if rng.random() < 0.5:
            more = rng.randint(1, 3)
            new = line["quantity"] + more
            self._stock(product, order["warehouse_id"], more)
            words = self.wording(
                "more-quantity",
                more=more,
                product=product["name"],
                order=oid,
                quantity=line["quantity"],
            )
            wrong = Call(
                "update_quantity", {"order_id": oid, "sku": product["sku"], "quantity": more}
            )
            self.near["sets-the-increase-as-quantity"] = [
                *self.calls,
                Call("get_order", {"order_id": oid}),
                wrong,
            ]
        else:
            line["quantity"] = max(line["quantity"], 2)
            new = rng.randint(1, line["quantity"] - 1)
            words = self.wording(
                "less-quantity",
                order=oid,
                new=new,
                product=product["name"],
                quantity=line["quantity"],
            )
            self.near["removes-the-line"] = [
                *self.calls,
                Call("get_order", {"order_id": oid}),
                Call("remove_line", {"order_id": oid, "sku": product["sku"]}),
            ]
        retotal(order)
        self.calls += [
            Call("get_order", {"order_id": oid}),
            Call("update_quantity", {"order_id": oid, "sku": product["sku"], "quantity": new}),
        ]
        self.parts.append(words)
        self.tags.append("edit-order")

    def return_items(self) -> None:
        rng = self.rng
        total = rng.randint(2, 4)
        order, products = self._shipped(rng.randint(1, 2), rng.randint(1, 25), quantities=None)
        product = products[0]
        line = next(x for x in order["lines"] if x["sku"] == product["sku"])
        line["quantity"] = total
        retotal(order)
        count = rng.randint(1, total - 1)
        reason, why = rng.choice(
            [
                ("damaged", "they arrived broken"),
                ("damaged", "they came damaged"),
                ("wrong_item", "you sent a different model than I ordered"),
                ("no_longer_needed", "I don't need them anymore"),
            ]
        )
        oid = order["order_id"]
        calls = [
            Call("get_order", {"order_id": oid}),
            Call(
                "create_return",
                {
                    "order_id": oid,
                    "reason": reason,
                    "lines": [{"sku": product["sku"], "quantity": count}],
                },
            ),
        ]
        whole = calls[-1].but(lines=[{"sku": product["sku"], "quantity": total}])
        self.change(calls, "returns-the-whole-line", whole)
        self.secrets.append(product["sku"])
        self.say("return", count=count, total=total, product=product["name"], order=oid, why=why)

    def cancel(self) -> None:
        cid = self.me["customer_id"]
        order, products = self._pending(1, avoid=self._mine())
        other, _ = self._pending(1, avoid={products[0]["sku"]})
        self.used.add(products[0]["sku"])  # no later order may hold it too
        calls = [
            Call("find_customer", {"query": self.me["name"]}),
            Call("list_orders", {"customer_id": cid, "status": "pending"}),
            Call("cancel_order", {"order_id": order["order_id"]}),
        ]
        wrong = calls[-1].but(order_id=other["order_id"])
        self.change(calls, "cancels-the-other-pending-order", wrong)
        self.secrets.append(order["order_id"])
        name = products[0]["name"]
        self.say("cancellation", product=name)

    def discount(self) -> None:
        rng = self.rng
        order, _ = self._pending(rng.randint(1, 2))
        cap = DISCOUNT_CAP[self.me["tier"]]
        percent = rng.choice([p for p in (5, 8, 10, 12) if p < cap])
        oid = order["order_id"]
        calls = [
            Call("find_customer", {"query": self.me["name"]}),
            Call("get_order", {"order_id": oid}),
            Call("apply_discount", {"order_id": oid, "percent": percent}),
        ]
        self.change(calls, "gives-the-maximum-discount", calls[-1].but(percent=cap))
        self.say("discount", percent=percent, order=oid)

    def ship(self) -> None:
        rng = self.rng
        order, _ = self._pending(rng.randint(1, 2))
        other, _ = self._pending(1)
        oid = order["order_id"]
        calls = [Call("get_order", {"order_id": oid}), Call("ship_order", {"order_id": oid})]
        both = calls[-1].but(order_id=other["order_id"])
        self.change(calls, "ships-both-pending-orders", both, reads=len(calls))
        self.say("shipping", order=oid)
