"""Inventory and orders: products with stock per warehouse, customer orders with lines and a
status, and returns."""

from __future__ import annotations

from ..core import JSON, Domain, days_past, finder, lookup, require

RETURN_WINDOW_DAYS = 30
DISCOUNT_CAP = {"standard": 10, "vip": 15}
RETURN_REASONS = ("damaged", "wrong_item", "no_longer_needed", "other")

POLICY = """\
# Store operations policy

You handle customer requests for an online store through its order-management tools.

1. Find customers with `find_customer` and products with `search_products`; never guess an id
   or a SKU. Customers name products; several products can share a name with different
   variants (colour, size), so pick exactly the variant asked for.
2. **Never oversell.** An order line may never ask for more units than the order's warehouse
   has in stock (`get_product` shows stock per warehouse; units already in an order are no
   longer in stock). When stock is short, do not sell a smaller quantity or use another
   warehouse: tell the customer instead.
3. New orders are fulfilled from the customer's home warehouse.
4. Only **pending** orders can be changed (lines, quantities, discount), cancelled or shipped.
   Shipped or delivered orders cannot be cancelled; the customer may return items instead, but
   create a return only when they ask for one.
5. **Returns** are possible for shipped or delivered orders within 30 days of the shipping date,
   for at most the quantity bought (less what was already returned). Use the reason that
   matches what the customer says. The refund is computed by the system.
6. **Discounts**: one percentage for the whole order, at most 10% for standard customers and
   15% for VIP customers. Apply only a discount the customer asks for, and never a smaller one
   in place of one the policy refuses.
7. Ship an order (`ship_order`) only when its customer asks for it. `restock` records supplier
   deliveries; never use it to serve a customer's request.
"""

HANDOVERS = {
    "damaged_delivery": "goods arrived damaged (a claim with the carrier)",
    "wholesale_quote": "a price for 100 or more units of one product (wholesale is quoted by "
    "the sales team)",
}

DOMAIN = Domain("inventory", "Store Orders & Inventory", POLICY, handovers=HANDOVERS)

_ID = {"type": "string"}
_QTY = {"type": "integer", "description": "units, at least 1"}
_LINES = {
    "type": "array",
    "description": "each {sku, quantity}",
    "items": {
        "type": "object",
        "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
    },
}


_order = finder("orders", "order_id", "order")
_product = finder("products", "sku", "product")
_customer = finder("customers", "customer_id", "customer")
_warehouse = finder("warehouses", "warehouse_id", "warehouse")


def _lines(lines: list[JSON], what: str) -> list[JSON]:
    """Validate {sku, quantity} items and merge repeated SKUs (sorted by SKU)."""
    require(lines, f"give at least one {what} line")
    merged: dict[str, int] = {}
    for i, item in enumerate(lines):
        require(
            isinstance(item, dict) and set(item) == {"sku", "quantity"},
            f"lines[{i}] must be {{sku, quantity}}",
        )
        quantity = item["quantity"]
        require(
            isinstance(quantity, int) and not isinstance(quantity, bool) and quantity >= 1,
            f"lines[{i}].quantity must be a whole number of at least 1",
        )
        merged[str(item["sku"])] = merged.get(str(item["sku"]), 0) + quantity
    return [{"sku": sku, "quantity": qty} for sku, qty in sorted(merged.items())]


def _total(order: JSON) -> None:
    subtotal = sum(line["quantity"] * line["unit_price"] for line in order["lines"])
    order["subtotal"] = round(subtotal, 2)
    order["total"] = round(subtotal * (100 - order["discount_pct"]) / 100, 2)


def _pending(state: JSON, order_id: str) -> JSON:
    """The order, which must still be pending (only a pending order may change)."""
    order = _order(state, order_id)
    require(
        order["status"] == "pending", f"order {order['order_id']} is {order['status']}, not pending"
    )
    return order


def _take(state: JSON, sku: str, warehouse: str, quantity: int) -> None:
    product = _product(state, sku)
    have = product["stock"].get(warehouse, 0)
    require(have >= quantity, f"{sku}: only {have} in stock at {warehouse}")
    product["stock"][warehouse] = have - quantity


def _give(state: JSON, sku: str, warehouse: str, quantity: int) -> None:
    product = _product(state, sku)
    product["stock"][warehouse] = product["stock"].get(warehouse, 0) + quantity


def returned(state: JSON, order_id: str, sku: str) -> int:
    """Units of a SKU already returned from an order."""
    return sum(
        line["quantity"]
        for r in state["returns"]
        if r["order_id"] == order_id
        for line in r["lines"]
        if line["sku"] == sku
    )


# --- read-only tools -----------------------------------------------------------------------


@DOMAIN.tool(
    "Find customers whose name or email contains the query (case-insensitive).",
    {"query": {"type": "string"}},
)
def find_customer(state: JSON, query: str) -> list[JSON]:
    require(query.strip() != "", "give part of a name or an email")
    q = query.lower().strip()
    return [c for c in state["customers"] if q in c["name"].lower() or q in c["email"].lower()]


@DOMAIN.tool(
    "Products whose name, SKU or category contains every word of the query.",
    {"query": {"type": "string"}},
)
def search_products(state: JSON, query: str) -> list[JSON]:
    words = query.lower().replace(",", " ").split()
    require(words, "give a word to search for")
    return [
        p
        for p in state["products"]
        if all(w in f"{p['name']} {p['sku']} {p['category']}".lower() for w in words)
    ]


DOMAIN.record_tool(
    "get_product", "One product with its price and stock per warehouse.", "sku", _product
)


DOMAIN.table_tool("list_warehouses", "All warehouses.", "warehouses")


@DOMAIN.tool(
    "A customer's orders (optionally only those with a status).",
    {
        "customer_id": _ID,
        "status": {"type": "string", "enum": ["pending", "shipped", "delivered", "cancelled"]},
    },
    required=["customer_id"],
)
def list_orders(state: JSON, customer_id: str, status: str = "") -> list[JSON]:
    _customer(state, customer_id)
    return [
        o
        for o in state["orders"]
        if o["customer_id"] == customer_id and (not status or o["status"] == status)
    ]


DOMAIN.record_tool("get_order", "One order with its lines, status and totals.", "order_id", _order)


DOMAIN.rows_tool(
    "list_returns", "Returns already made for an order.", "returns", "order_id", _order
)


# --- changes -------------------------------------------------------------------------------


@DOMAIN.tool(
    "Create a pending order for a customer, fulfilled from a warehouse; units are taken out of "
    "that warehouse's stock at the current prices.",
    {"customer_id": _ID, "warehouse_id": _ID, "lines": _LINES},
    mutates=True,
)
def create_order(state: JSON, customer_id: str, warehouse_id: str, lines: list[JSON]) -> JSON:
    _customer(state, customer_id)
    _warehouse(state, warehouse_id)
    order_lines = []
    for line in _lines(lines, "order"):
        product = _product(state, line["sku"])
        _take(state, line["sku"], warehouse_id, line["quantity"])
        order_lines.append({**line, "unit_price": product["price"]})
    order = {
        "order_id": f"SO-{state['next_order']}",
        "customer_id": customer_id,
        "warehouse_id": warehouse_id,
        "status": "pending",
        "created": state["today"],
        "shipped_on": None,
        "lines": order_lines,
        "discount_pct": 0,
    }
    _total(order)
    state["next_order"] += 1
    state["orders"].append(order)
    return order


@DOMAIN.tool(
    "Add units of a product to a pending order (adds to the line if the SKU is already there).",
    {"order_id": _ID, "sku": _ID, "quantity": _QTY},
    mutates=True,
)
def add_line(state: JSON, order_id: str, sku: str, quantity: int) -> JSON:
    order = _pending(state, order_id)
    require(quantity >= 1, "quantity must be at least 1")
    product = _product(state, sku)
    _take(state, sku, order["warehouse_id"], quantity)
    line = lookup(order["lines"], "sku", sku)
    if line:
        line["quantity"] += quantity
    else:
        order["lines"].append({"sku": sku, "quantity": quantity, "unit_price": product["price"]})
        order["lines"].sort(key=lambda x: x["sku"])
    _total(order)
    return order


@DOMAIN.tool(
    "Set the quantity of a line of a pending order.",
    {"order_id": _ID, "sku": _ID, "quantity": _QTY},
    mutates=True,
)
def update_quantity(state: JSON, order_id: str, sku: str, quantity: int) -> JSON:
    order = _pending(state, order_id)
    require(quantity >= 1, "quantity must be at least 1 (use remove_line to drop a line)")
    line = lookup(order["lines"], "sku", sku)
    require(line is not None, f"order {order_id} has no line for {sku}")
    require(quantity != line["quantity"], f"the line already has {quantity}")
    if quantity > line["quantity"]:
        _take(state, sku, order["warehouse_id"], quantity - line["quantity"])
    else:
        _give(state, sku, order["warehouse_id"], line["quantity"] - quantity)
    line["quantity"] = quantity
    _total(order)
    return order


@DOMAIN.tool(
    "Remove a line from a pending order (its units go back to stock).",
    {"order_id": _ID, "sku": _ID},
    mutates=True,
)
def remove_line(state: JSON, order_id: str, sku: str) -> JSON:
    order = _pending(state, order_id)
    line = lookup(order["lines"], "sku", sku)
    require(line is not None, f"order {order_id} has no line for {sku}")
    require(len(order["lines"]) > 1, "an order keeps at least one line; cancel it instead")
    _give(state, sku, order["warehouse_id"], line["quantity"])
    order["lines"].remove(line)
    _total(order)
    return order


@DOMAIN.tool(
    "Set the discount (whole percent, 0 to remove it) of a pending order.",
    {"order_id": _ID, "percent": {"type": "integer"}},
    mutates=True,
)
def apply_discount(state: JSON, order_id: str, percent: int) -> JSON:
    order = _pending(state, order_id)
    require(0 <= percent < 100, "percent must be between 0 and 99")
    require(percent != order["discount_pct"], f"the order already has {percent}% off")
    order["discount_pct"] = percent
    _total(order)
    return order


@DOMAIN.tool("Cancel a pending order; its units go back to stock.", {"order_id": _ID}, mutates=True)
def cancel_order(state: JSON, order_id: str) -> JSON:
    order = _pending(state, order_id)
    for line in order["lines"]:
        _give(state, line["sku"], order["warehouse_id"], line["quantity"])
    order["status"] = "cancelled"
    return order


@DOMAIN.tool("Ship a pending order today.", {"order_id": _ID}, mutates=True)
def ship_order(state: JSON, order_id: str) -> JSON:
    order = _pending(state, order_id)
    order.update(status="shipped", shipped_on=state["today"])
    return order


@DOMAIN.tool(
    "Record a supplier delivery: add units of a product to a warehouse's stock.",
    {"sku": _ID, "warehouse_id": _ID, "quantity": _QTY},
    mutates=True,
)
def restock(state: JSON, sku: str, warehouse_id: str, quantity: int) -> JSON:
    _warehouse(state, warehouse_id)
    require(quantity >= 1, "quantity must be at least 1")
    _give(state, sku, warehouse_id, quantity)
    return _product(state, sku)


@DOMAIN.tool(
    "Return units of a shipped or delivered order; they go back to the order's warehouse and "
    "the refund is computed from the price paid.",
    {
        "order_id": _ID,
        "lines": _LINES,
        "reason": {"type": "string", "enum": list(RETURN_REASONS)},
    },
    mutates=True,
)
def create_return(state: JSON, order_id: str, lines: list[JSON], reason: str) -> JSON:
    order = _order(state, order_id)
    require(
        order["status"] in ("shipped", "delivered"),
        f"order {order_id} is {order['status']}; only shipped or delivered orders are returned",
    )
    items = _lines(lines, "return")
    refund = 0.0
    for item in items:
        line = lookup(order["lines"], "sku", item["sku"])
        require(line is not None, f"order {order_id} has no line for {item['sku']}")
        left = line["quantity"] - returned(state, order_id, item["sku"])
        require(item["quantity"] <= left, f"only {left} of {item['sku']} can still be returned")
        refund += item["quantity"] * line["unit_price"] * (100 - order["discount_pct"]) / 100
        _give(state, item["sku"], order["warehouse_id"], item["quantity"])
    record = {
        "return_id": f"RT-{state['next_return']}",
        "order_id": order_id,
        "lines": items,
        "reason": reason,
        "refund": round(refund, 2),
        "created": state["today"],
    }
    state["next_return"] += 1
    state["returns"].append(record)
    return record


# --- policy --------------------------------------------------------------------------------


def _stock(state: JSON, sku: str, warehouse: str) -> int | None:
    product = lookup(state["products"], "sku", sku)
    return None if product is None else product["stock"].get(warehouse, 0)


@DOMAIN.rule
def never_oversell(state: JSON, tool: str, args: JSON) -> str | None:
    wanted: list[tuple[str, str, object]] = []
    if tool == "create_order":
        wanted = [
            (args["warehouse_id"], item.get("sku"), item.get("quantity"))
            for item in args["lines"]
            if isinstance(item, dict)
        ]
    elif tool in ("add_line", "update_quantity"):
        order = lookup(state["orders"], "order_id", args["order_id"])
        if order is None or order["status"] != "pending":
            return None
        extra = args["quantity"]
        line = lookup(order["lines"], "sku", args["sku"])
        if tool == "update_quantity":
            extra = args["quantity"] - (line["quantity"] if line else 0)
        wanted = [(order["warehouse_id"], args["sku"], extra)]
    totals: dict[tuple[str, str], int] = {}
    for warehouse, sku, quantity in wanted:
        if isinstance(quantity, int) and isinstance(sku, str):
            totals[(warehouse, sku)] = totals.get((warehouse, sku), 0) + quantity
    for (warehouse, sku), quantity in sorted(totals.items()):
        have = _stock(state, sku, warehouse)
        if have is not None and quantity > have:
            return f"{tool} asks for {quantity} of {sku} at {warehouse}, which has {have}"
    return None


@DOMAIN.rule_on("create_order")
def home_warehouse(state: JSON, tool: str, args: JSON) -> str | None:
    customer = lookup(state["customers"], "customer_id", args["customer_id"])
    if customer and args["warehouse_id"] != customer["home_warehouse"]:
        return (
            f"an order for {customer['customer_id']} from {args['warehouse_id']}, not their "
            f"home warehouse {customer['home_warehouse']}"
        )
    return None


@DOMAIN.rule_on(
    "add_line", "update_quantity", "remove_line", "apply_discount", "cancel_order", "ship_order"
)
def only_pending_changes(state: JSON, tool: str, args: JSON) -> str | None:
    order = lookup(state["orders"], "order_id", args["order_id"])
    if order and order["status"] in ("shipped", "delivered"):
        return f"{tool} on order {order['order_id']}, which is already {order['status']}"
    return None


@DOMAIN.rule_on("create_return")
def return_window(state: JSON, tool: str, args: JSON) -> str | None:
    order = lookup(state["orders"], "order_id", args["order_id"])
    if not order or order["status"] not in ("shipped", "delivered") or not order["shipped_on"]:
        return None
    age = days_past(order["shipped_on"], state["today"], RETURN_WINDOW_DAYS)
    if age is not None:
        return (
            f"a return on order {order['order_id']}, shipped {order['shipped_on']} ({age} days "
            f"ago; the window is {RETURN_WINDOW_DAYS} days)"
        )
    return None


@DOMAIN.rule_on("apply_discount")
def discount_cap(state: JSON, tool: str, args: JSON) -> str | None:
    order = lookup(state["orders"], "order_id", args["order_id"])
    customer = order and lookup(state["customers"], "customer_id", order["customer_id"])
    if customer and args["percent"] > DISCOUNT_CAP[customer["tier"]]:
        return (
            f"{args['percent']}% off order {order['order_id']} for a {customer['tier']} "
            f"customer (at most {DISCOUNT_CAP[customer['tier']]}%)"
        )
    return None
