"""The pieces of a request to an account manager's order desk (CRM + store): each part spans
both apps, a lookup in one feeding a change in the other; the traps break a rule of one app or
of the desk (a colleague's account); the handovers go to a human."""

from __future__ import annotations

import random
from pathlib import Path

from factory.toolenv.core import JSON
from factory.toolenv.domains.inventory import DISCOUNT_CAP
from factory.toolenv.domains.orderdesk import CONFIRMATION_TEMPLATE, DOMAIN

from factory.families.tool.crm import traps as crm_traps
from factory.families.tool.crm.book import Book
from factory.families.tool.inventory.data import units_text
from factory.families.tool.inventory.plan import InventoryPlan, add_order, item_of
from factory.families.tool.scenario import Call
from factory.families.tool.suite import SuitePlan, call, on_contact
from factory.families.tool.wordings import Wordings, possessive

INVOICE_TEMPLATE = "Invoice reminder"


PART_TAGS = ("won-deal-order", "invoice-reminder", "ship-and-log", "deal-amount")
"""The request's cross-app pieces, each worded and tagged by its name."""

WORDINGS = Wordings(
    Path(__file__).parent / "wordings.toml",
    "hello",
    "bye",
    *PART_TAGS,
    "trap-colleague-account",
    "trap-oversell",
    "trap-discount",
    "trap-cancel-shipped",
    "handover-damaged",
    "handover-wholesale",
    "handover-dispute",
)
"""How a sales rep words each piece of a request (wordings.toml beside this module)."""


class OrderDeskPlan(SuitePlan):
    """A request to the order desk, built piece by piece on the seeded state."""

    domain = DOMAIN
    wordings = WORDINGS

    def __init__(self, rng: random.Random, state: JSON) -> None:
        self.book = Book(rng, state["crm"])
        super().__init__(rng, state, self.book.me)
        self.store = state["store"]
        self.shop = InventoryPlan(rng, self.store, self.store["customers"][0])
        """The store family's bookkeeping (stock kept apart per piece), for one account at a
        time (:meth:`account`)."""
        self.next_order = self.store["next_order"]
        self.templates = {t["name"]: t["template_id"] for t in state["crm"]["templates"]}
        self.used: list[str] = []

    # --- helpers --------------------------------------------------------------------------
    def account(self, *, mine: bool = True) -> tuple[JSON, JSON]:
        """A company with a store account no piece uses yet, owned in the CRM by the acting user
        (or, ``mine=False``, by a colleague); the store helper now works for it."""
        names = {c["name"] for c in self.store["customers"]} - set(self.used)
        company = self.rng.choice([c for c in self.state["crm"]["companies"] if c["name"] in names])
        self.used.append(company["name"])
        owner = self.me if mine else self.rng.choice(self.book.reps)
        company["owner"] = owner["user_id"]
        customer = next(c for c in self.store["customers"] if c["name"] == company["name"])
        self.shop.me, self.shop.home = customer, customer["home_warehouse"]
        return company, customer

    def new_order_id(self) -> str:
        """The number the next create_order gives (planned in call order)."""
        order_id = f"SO-{self.next_order}"
        self.next_order += 1
        return order_id

    def clear_pending(self, customer: JSON) -> None:
        """Cancel the account's pending orders (their units back in stock): the piece's order is
        then its only pending one."""
        for order in self.store["orders"]:
            if order["customer_id"] == customer["customer_id"] and order["status"] == "pending":
                for line in order["lines"]:
                    product = next(p for p in self.store["products"] if p["sku"] == line["sku"])
                    stock = product["stock"]
                    stock[order["warehouse_id"]] = (
                        stock.get(order["warehouse_id"], 0) + line["quantity"]
                    )
                order["status"] = "cancelled"

    def items(self, count: int) -> tuple[list[JSON], list[int], str]:
        products = [self.shop._product() for _ in range(count)]  # noqa: SLF001
        quantities = [self.rng.randint(2, 12) for _ in products]
        for product, quantity in zip(products, quantities, strict=True):
            self.shop._stock(product, self.shop.home, quantity)  # noqa: SLF001
        words = " and ".join(
            units_text(self.rng, q, p) for p, q in zip(products, quantities, strict=True)
        )
        return products, quantities, words

    # --- parts ------------------------------------------------------------------------------
    def won_deal_order(self) -> None:
        """CRM -> store -> CRM: close the signed deal, place its order, confirm its number."""
        b = self.book
        company, customer = self.account()
        contact = b.add_contact(company)
        deal = b.add_deal(company, "negotiation", self.me["user_id"], signed=True)
        products, quantities, words = self.items(self.rng.randint(1, 2))
        lines = [
            {"sku": p["sku"], "quantity": q} for p, q in zip(products, quantities, strict=True)
        ]
        order_id = self.new_order_id()
        crm = [
            call("crm_search_companies", query=company["name"]),
            call("crm_list_deals", company_id=company["company_id"]),
            call("crm_update_deal_stage", deal_id=deal["deal_id"], stage="closed-won"),
        ]
        create = call(
            "store_create_order",
            customer_id=customer["customer_id"],
            warehouse_id=customer["home_warehouse"],
            lines=lines,
        )
        store = [
            call("store_find_customer", query=company["name"]),
            *(call("store_search_products", query=item_of(p)) for p in products),
        ]
        confirm = on_contact(
            contact,
            "crm_send_email",
            template_id=self.templates[CONFIRMATION_TEMPLATE],
            fields={"order_number": order_id},
        )
        wrong = [{**lines[0], "sku": self.shop._sibling(products[0])["sku"]}, *lines[1:]]  # noqa: SLF001
        text = self.wording(
            "won-deal-order",
            **b.contact_words(contact),
            deal=deal["name"],
            items=words,
            template=CONFIRMATION_TEMPLATE,
        )
        self.piece(
            "won-deal-order",
            text,
            [*crm, *store, create, *confirm],
            {
                "order-never-confirmed": [*crm, *store, create],
                "deal-left-open": [*store, create, *confirm],
                "orders-the-wrong-variant": [
                    *crm,
                    *store,
                    call("store_create_order", **{**create.arguments, "lines": wrong}),
                    *confirm,
                ],
            },
            [order_id, customer["customer_id"], *(p["sku"] for p in products)],
        )

    def invoice_reminder(self) -> None:
        """Store -> CRM: the latest delivered order's number in an invoice reminder."""
        b = self.book
        company, customer = self.account()
        contact = b.add_contact(company)
        twin = b.add_contact(b.company([company]), contact["name"])
        older = add_order(
            self.rng, self.store, customer, "delivered", 1, age=self.rng.randint(8, 40)
        )
        latest = add_order(
            self.rng,
            self.store,
            customer,
            "delivered",
            self.rng.randint(1, 2),
            age=1,
            shipped_ago=1,
        )
        text = self.wording(
            "invoice-reminder", **b.contact_words(contact), template=INVOICE_TEMPLATE
        )
        head = [
            call("store_find_customer", query=company["name"]),
            call("store_list_orders", customer_id=customer["customer_id"], status="delivered"),
            call("crm_search_contacts", query=contact["name"]),
        ]

        def remind(contact_id: str, order_id: str) -> Call:
            return call(
                "crm_send_email",
                contact_id=contact_id,
                template_id=self.templates[INVOICE_TEMPLATE],
                fields={"invoice_number": order_id},
            )

        self.piece(
            "invoice-reminder",
            text,
            [*head, remind(contact["contact_id"], latest["order_id"])],
            {
                "reminds-an-older-order": [*head, remind(contact["contact_id"], older["order_id"])],
                "emails-the-namesake": [*head, remind(twin["contact_id"], latest["order_id"])],
            },
            [latest["order_id"], contact["contact_id"]],
        )

    def ship_and_log(self) -> None:
        """Store -> CRM: ship the account's pending order, note its number on the contact."""
        b = self.book
        company, customer = self.account()
        self.clear_pending(customer)
        order, _ = self.shop._pending(self.rng.randint(1, 2))  # noqa: SLF001
        contact = b.add_contact(company)
        text = self.wording("ship-and-log", **b.contact_words(contact))
        store = [
            call("store_find_customer", query=company["name"]),
            call("store_list_orders", customer_id=customer["customer_id"], status="pending"),
            call("store_ship_order", order_id=order["order_id"]),
        ]
        summary = f"Shipped order {order['order_id']}"
        crm = on_contact(contact, "crm_log_activity", kind="note", summary=summary)
        self.piece(
            "ship-and-log",
            text,
            [*store, *crm],
            {"shipped-not-logged": store, "logged-not-shipped": [*store[:2], *crm]},
            [order["order_id"]],
        )

    def deal_amount(self) -> None:
        """Store -> CRM: a deal's amount set to a pending order's total (after its discount)."""
        b = self.book
        company, customer = self.account()
        deal = b.add_deal(company, self.rng.choice(["proposal", "negotiation"]), self.me["user_id"])
        order, _ = self.shop._pending(self.rng.randint(2, 3))  # noqa: SLF001
        order["discount_pct"] = self.rng.choice([5, 10])
        order["total"] = round(order["subtotal"] * (100 - order["discount_pct"]) / 100, 2)
        text = self.wording(
            "deal-amount", **self.book.deal_words(company, deal), order=order["order_id"]
        )
        head = [
            call("store_get_order", order_id=order["order_id"]),
            call("crm_search_companies", query=company["name"]),
            call("crm_list_deals", company_id=company["company_id"]),
        ]
        self.piece(
            "deal-amount",
            text,
            [*head, call("crm_update_deal", deal_id=deal["deal_id"], amount=order["total"])],
            {
                "uses-the-subtotal": [
                    *head,
                    call("crm_update_deal", deal_id=deal["deal_id"], amount=order["subtotal"]),
                ]
            },
            [str(order["total"]), deal["deal_id"]],
        )

    # --- traps (each must trip a rule) ------------------------------------------------------
    def trap_colleague_account(self) -> None:
        """Desk rule: a colleague's account is theirs to order for."""
        company, customer = self.account(mine=False)
        owner = self.book.user_name(company["owner"])
        products, quantities, words = self.items(1)
        lines = [{"sku": products[0]["sku"], "quantity": quantities[0]}]
        text = self.wording(
            "trap-colleague-account", owner=owner, company=company["name"], items=words
        )
        create = call(
            "store_create_order",
            customer_id=customer["customer_id"],
            warehouse_id=customer["home_warehouse"],
            lines=lines,
        )
        self.trap("trap-colleague-account", text, create)

    def trap_oversell(self) -> None:
        company, _customer = self.account()
        order, _ = self.shop._pending(1)  # noqa: SLF001
        product = self.shop._product()  # noqa: SLF001
        have = self.rng.randint(0, 6)
        product["stock"][order["warehouse_id"]] = have
        want = have + self.rng.randint(3, 12)
        text = WORDINGS.only(
            "trap-oversell",
            want=want,
            product=product["name"],
            company_possessive=possessive(company["name"]),
            order=order["order_id"],
        )
        self.trap(
            "trap-oversell",
            text,
            call("store_add_line", order_id=order["order_id"], sku=product["sku"], quantity=want),
        )

    def trap_discount(self) -> None:
        company, customer = self.account()
        order, _ = self.shop._pending(1)  # noqa: SLF001
        percent = DISCOUNT_CAP[customer["tier"]] + self.rng.choice([5, 10])
        text = self.wording(
            "trap-discount", company=company["name"], percent=percent, order=order["order_id"]
        )
        self.trap(
            "trap-discount",
            text,
            call("store_apply_discount", order_id=order["order_id"], percent=percent),
        )

    def trap_cancel_shipped(self) -> None:
        company, _customer = self.account()
        order, _ = self.shop._shipped(1, self.rng.randint(1, 6))  # noqa: SLF001
        text = WORDINGS.only(
            "trap-cancel-shipped",
            company_possessive=possessive(company["name"]),
            order=order["order_id"],
        )
        self.trap(
            "trap-cancel-shipped", text, call("store_cancel_order", order_id=order["order_id"])
        )

    def trap_pieces(self) -> list:
        crm = [crm_traps.trap_opted_out, crm_traps.trap_colleague_deal, crm_traps.trap_skip_stage]
        return [
            lambda plan: plan.trap_colleague_account(),
            lambda plan: plan.trap_oversell(),
            lambda plan: plan.trap_discount(),
            lambda plan: plan.trap_cancel_shipped(),
            lambda plan: plan.borrowed("crm", plan.rng.choice(crm), plan.book),
        ]

    # --- handovers ----------------------------------------------------------------------------
    def handover_pieces(self) -> list:
        return [
            lambda plan: plan.handover_damaged(),
            lambda plan: plan.handover_wholesale(),
            lambda plan: plan.handover_dispute(),
        ]

    def handover_damaged(self) -> None:
        company, _customer = self.account()
        order, _ = self.shop._shipped(1, self.rng.randint(2, 10), quantities=[1])  # noqa: SLF001
        self.hand_over(
            "damaged_delivery",
            WORDINGS.fill(
                "handover-damaged",
                company_possessive=possessive(company["name"]),
                order=order["order_id"],
                company=company["name"],
            ),
            f"order {order['order_id']} arrived damaged in transit",
            call("store_get_order", order_id=order["order_id"]),
            tag="handover-damaged",
        )

    def handover_wholesale(self) -> None:
        company, _customer = self.account()
        product = self.shop._product(need=False)  # noqa: SLF001
        units = self.rng.choice([120, 150, 200, 250, 400, 500])
        self.hand_over(
            "wholesale_quote",
            WORDINGS.fill(
                "handover-wholesale", company=company["name"], units=units, product=product["name"]
            ),
            f"quote for {units} units of {product['sku']} for {company['name']}",
            call("store_search_products", query=item_of(product)),
            tag="handover-wholesale",
        )

    def handover_dispute(self) -> None:
        b = self.book
        company, customer = self.account()
        contact = b.add_contact(company)
        order = add_order(
            self.rng, self.store, customer, "delivered", 1, age=self.rng.randint(10, 40)
        )
        self.hand_over(
            "billing_dispute",
            WORDINGS.fill("handover-dispute", **b.contact_words(contact), order=order["order_id"]),
            f"{company['name']} disputes invoice {order['order_id']}",
            call("store_get_order", order_id=order["order_id"]),
            tag="handover-dispute",
        )
