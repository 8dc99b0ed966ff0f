"""What an order-desk request is made of: names, places, prices, and how the request words dates
and people."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON

WAREHOUSES = [
    ("WH-NJ", "Newark"),
    ("WH-TX", "Dallas"),
    ("WH-NV", "Reno"),
    ("WH-IL", "Joliet"),
    ("WH-GA", "Atlanta"),
    ("WH-OR", "Portland"),
]
# (item, SKU prefix, category, base price, variants)
ITEMS = [
    ("Ceramic Mug", "MUG", "kitchen", 14, ["Blue", "Green", "White", "Charcoal"]),
    ("Trail Backpack", "BPK", "outdoor", 79, ["20L", "30L", "40L"]),
    ("Desk Lamp", "LMP", "home office", 45, ["Black", "Brass", "White"]),
    ("Water Bottle", "BTL", "outdoor", 22, ["500ml", "750ml", "1L"]),
    ("Yoga Mat", "YMT", "fitness", 35, ["Purple", "Grey", "Teal"]),
    ("Notebook", "NTB", "stationery", 9, ["A5 Dotted", "A5 Lined", "A4 Grid"]),
    ("Wireless Mouse", "MSE", "electronics", 29, ["Black", "White"]),
    ("Chef Knife", "KNF", "kitchen", 64, ["6in", "8in"]),
    ("Throw Pillow", "PLW", "home", 27, ["Mustard", "Navy", "Sage"]),
    ("Running Socks", "SCK", "fitness", 12, ["Size S", "Size M", "Size L"]),
    ("Phone Stand", "PST", "electronics", 19, ["Aluminium", "Bamboo"]),
    ("Tea Kettle", "KTL", "kitchen", 49, ["Steel", "Copper"]),
    ("Rain Jacket", "JKT", "outdoor", 95, ["Size M", "Size L", "Size XL"]),
]


def pretty_date(date: str) -> str:
    day = datetime.date.fromisoformat(date)
    return f"{day.strftime('%B')} {day.day}"


def units_text(rng: random.Random, n: int, product: JSON) -> str:
    item, variant = product["name"].split(" - ")
    return rng.choice(
        [
            f"{n} x {product['name']}",
            f"{n} {item} ({variant})",
            f"{n} of the {item}, {variant}",
        ]
    )
