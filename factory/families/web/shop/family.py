"""Web family: an online shop (catalogue search and pages, cart, coupons, checkout)."""

from __future__ import annotations

import random

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.web.webfamily import BROWSER, TEXT, WebFamily, WebScenario, app_user
from factory.vocabulary import Difficulty

ADJECTIVES = [
    "Alpine",
    "Basalt",
    "Coastal",
    "Dusky",
    "Ember",
    "Frosted",
    "Golden",
    "Harbor",
    "Indigo",
    "Juniper",
    "Lunar",
    "Meadow",
    "Nordic",
    "Oaken",
    "Prairie",
    "Quartz",
    "Russet",
    "Saffron",
    "Tidal",
    "Umber",
    "Velvet",
    "Willow",
]
PRODUCTS = {
    "kitchen": ["Kettle", "Chef Knife", "Cutting Board", "Teapot", "Spice Rack", "Colander"],
    "outdoor": ["Tent", "Headlamp", "Trail Map Case", "Camp Stove", "Water Filter", "Daypack"],
    "office": ["Desk Lamp", "Notebook", "Fountain Pen", "Monitor Stand", "Desk Mat", "Stapler"],
    "garden": ["Trowel", "Watering Can", "Seed Tray", "Pruning Shears", "Planter", "Hose Reel"],
    "audio": ["Headphones", "Speaker", "Turntable", "Microphone", "Cable Kit", "Amplifier"],
}
STREETS = ["Elm Street", "Harbor Road", "Mill Lane", "Orchard Way", "Station Road", "Quarry Hill"]
CITIES = ["Springfield", "Riverton", "Lakeside", "Fairview", "Oakridge", "Brookfield", "Ashford"]
COUPON_WORDS = ["SPRING", "WELCOME", "SAVE", "FLASH", "LOYAL", "BUNDLE", "HOLIDAY", "NEWYEAR"]


@register
class WebShop(WebFamily):
    """Buy exactly the right things: sign in, find products (search, category filter, pages),
    fix the cart, apply the right coupon, and check out to the given address. Medium adds
    leftover cart lines to clear and a coupon; hard adds a product known only by SKU, a wanted
    product already in the cart with the wrong quantity, and a choice among coupon codes of
    which only the best valid one must be used."""

    name = "web-shop"
    title = "Place exactly the requested order in a web shop"
    category = "web-commerce"
    observations = (TEXT, BROWSER)

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        names = set()
        products = []
        for category, nouns in PRODUCTS.items():
            for noun in nouns:
                for adjective in rng.sample(ADJECTIVES, 2):
                    names.add((f"{adjective} {noun}", category))
        for i, (name, category) in enumerate(sorted(names)):
            products.append(
                {
                    "id": i + 1,
                    "sku": f"{category[:3].upper()}-{rng.randrange(1000, 9999)}-{i}",
                    "name": name,
                    "category": category,
                    "price_cents": rng.randrange(5, 250) * 100 + rng.choice([0, 49, 95, 99]),
                    "stock": rng.randint(3, 40),
                }
            )
        rng.shuffle(products)
        for i, product in enumerate(products):
            product["id"] = i + 1
        people = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 4)
        users = [
            app_user(rng, i + 1, p, "customer", [w.lower() for w in ADJECTIVES])
            for i, p in enumerate(people)
        ]
        me = users[0]
        n_items = {Difficulty.EASY: 1, Difficulty.MEDIUM: 2, Difficulty.HARD: 3}[difficulty]
        wanted = rng.sample(products, n_items)
        quantities = {p["id"]: rng.randint(1, min(3, p["stock"])) for p in wanted}
        cart = []
        leftovers = []
        if difficulty is not Difficulty.EASY:
            leftovers = rng.sample(
                [p for p in products if p not in wanted], 2 if difficulty is Difficulty.HARD else 1
            )
            cart += [{"user_id": me["id"], "product_id": p["id"], "qty": 1} for p in leftovers]
        preset = None
        if difficulty is Difficulty.HARD:
            preset = wanted[1]
            cart.append(
                {
                    "user_id": me["id"],
                    "product_id": preset["id"],
                    "qty": quantities[preset["id"]] + rng.randint(1, 2),
                }
            )
        subtotal = sum(p["price_cents"] * quantities[p["id"]] for p in wanted)
        words = rng.sample(COUPON_WORDS, 4)
        coupons = [
            {
                "code": f"{words[0]}{rng.randrange(5, 15)}",
                "percent": rng.randrange(5, 11),
                "min_total_cents": 0,
                "active": 1,
            },
            {
                "code": f"{words[1]}{rng.randrange(15, 30)}",
                "percent": rng.randrange(15, 21),
                "min_total_cents": subtotal + rng.randrange(500, 5000),
                "active": 1,
            },
            {
                "code": f"{words[2]}{rng.randrange(30, 50)}",
                "percent": rng.randrange(30, 41),
                "min_total_cents": 0,
                "active": 0,
            },
            {
                "code": f"{words[3]}{rng.randrange(10, 15)}",
                "percent": rng.randrange(11, 15),
                "min_total_cents": max(0, subtotal - rng.randrange(100, 2000)),
                "active": 1,
            },
        ]
        if difficulty is Difficulty.EASY:
            offered, coupon = [], None
        elif difficulty is Difficulty.MEDIUM:
            offered, coupon = [coupons[0]["code"]], coupons[0]["code"]
        else:
            offered = [c["code"] for c in coupons]
            rng.shuffle(offered)
            coupon = coupons[3]["code"]  # the best one that is active and whose minimum is met
        address = {
            "name": me["display_name"],
            "street": f"{rng.randint(2, 999)} {rng.choice(STREETS)}",
            "city": rng.choice(CITIES),
            "zip": f"{rng.randrange(0, 99999):05d}",
        }
        items = [
            {
                "id": p["id"],
                "name": p["name"],
                "sku": p["sku"],
                "qty": quantities[p["id"]],
                "by_sku": difficulty is Difficulty.HARD and i == 0,
            }
            for i, p in enumerate(wanted)
        ]
        context = {
            "user": me,
            "items": items,
            "coupon": coupon,
            "offered": offered,
            "leftovers": [{"id": p["id"], "name": p["name"]} for p in leftovers],
            "preset": {"id": preset["id"], "name": preset["name"]} if preset else None,
            "address": address,
            # knobs the near misses turn
            "skip_coupon": False,
            "keep_leftovers": False,
            "qty_slip": 0,
            "add_to_preset": False,
        }
        near: dict[str, dict] = {"wrong-quantity": {"qty_slip": 1}}
        if coupon:
            near["no-coupon"] = {"skip_coupon": True}
        if leftovers:
            near["keeps-leftovers"] = {"keep_leftovers": True}
        if preset:
            near["adds-to-stale-line"] = {"add_to_preset": True}
        if difficulty is Difficulty.HARD:
            near["weaker-coupon"] = {"coupon": coupons[0]["code"]}
        seed = {
            "users": users,
            "products": sorted(products, key=lambda p: p["id"]),
            "coupons": coupons,
            "cart_items": cart,
        }
        return WebScenario(
            seed=seed,
            context=context,
            near_misses=near,
            tags=["shopping", "forms"] + (["coupon"] if coupon else []),
        )


@register
class WebShopBrowser(WebShop):
    """``web-shop`` in the browser observation mode: the same orders, placed through a headless
    Chromium seen as an accessibility tree (``browse``); the app answers only the browser."""

    name = "web-shop-browser"
    title = "Place exactly the requested order in a web shop, through a real browser"
    default_params = {"observation": BROWSER}
