"""Web family, browser only: answer a question from a sales report that is drawn by JavaScript."""

from __future__ import annotations

import random
from typing import Any

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.names import MONTH_NAMES as MONTHS
from factory.families.web.webfamily import BROWSER, WebFamily, WebScenario, app_user
from factory.vocabulary import Difficulty

ANSWER = "/home/agent/answer.txt"
PER_PAGE = 8  # the app's client-side pager (environments/web/apps/reports/app.py)
REGIONS = ["North", "South", "East", "West", "Central", "Coastal", "Highlands"]
CATEGORIES = {
    "Beverages": ["Cold Brew", "Green Tea", "Lemonade", "Oat Latte", "Sparkling Water"],
    "Bakery": ["Sourdough", "Bagel", "Croissant", "Rye Loaf", "Muffin"],
    "Dairy": ["Greek Yogurt", "Cheddar", "Butter", "Kefir", "Ricotta"],
    "Pantry": ["Olive Oil", "Basmati Rice", "Peanut Butter", "Granola", "Honey"],
    "Produce": ["Avocado", "Blueberries", "Spinach", "Sweet Potato", "Mango"],
}
BRANDS = ["Acorn", "Bluebell", "Copper", "Driftwood", "Evergreen", "Foxglove", "Granite"]


def dollars(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@register
class WebReports(WebFamily):
    """Information seeking in a real browser: sign in to a sales dashboard whose table is
    fetched and drawn client-side (filters are drop-downs that reload it by script, the pager
    is buttons), find the answer and write it to a file. Easy asks one product's revenue in a
    region and month; medium the product with the highest revenue in a region and month (two
    pages to compare); hard a category's total revenue over all regions in a month (a sum
    across pages). The tests recompute the answer from the app's database as the collect hook
    copied it."""

    name = "web-reports"
    title = "Answer a question from a JavaScript-rendered sales report, through a real browser"
    category = "web-information-seeking"
    observations = (BROWSER,)

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        regions = sorted(rng.sample(REGIONS, 4))
        categories = sorted(rng.sample(sorted(CATEGORIES), 4))
        products = []
        for category in categories:
            for noun in rng.sample(CATEGORIES[category], 4):
                products.append({"name": f"{rng.choice(BRANDS)} {noun}", "category": category})
        products.sort(key=lambda p: p["name"])
        for i, product in enumerate(products):
            product["id"] = i + 1
        year = rng.randrange(2021, 2027)
        first = rng.randrange(0, 10)
        months = [f"{year}-{first + k + 1:02d}" for k in range(3)]
        sales = []
        for product in products:
            price = rng.randrange(2, 40) * 100 + rng.choice([0, 25, 49, 95, 99])
            for region in regions:
                for month in months:
                    units = rng.randrange(5, 400)
                    sales.append(
                        {
                            "id": len(sales) + 1,
                            "product_id": product["id"],
                            "region": region,
                            "month": month,
                            "units": units,
                            "revenue_cents": units * price,
                        }
                    )
        names = {p["id"]: p["name"] for p in products}
        cats = {p["id"]: p["category"] for p in products}

        def rows(region: str | None, month: str, category: str | None) -> list[dict[str, Any]]:
            return sorted(
                (
                    s
                    for s in sales
                    if s["month"] == month
                    and region in (None, s["region"])
                    and category in (None, cats[s["product_id"]])
                ),
                key=lambda s: (names[s["product_id"]], s["region"]),
            )

        month = rng.choice(months)
        region = rng.choice(regions)
        context: dict[str, Any] = {
            "answer_path": ANSWER,
            "month": month,
            "month_label": f"{MONTHS[int(month[5:]) - 1]} {year}",
            "region": None,
            "category": None,
            "product": None,
            "rank": 0,
            "metric": "revenue",
            "first_page_only": False,
        }
        near: dict[str, dict[str, Any]] = {}
        if difficulty is Difficulty.EASY:
            kind = "lookup"
            product = rng.choice(products)["name"]
            hit = next(s for s in rows(region, month, None) if names[s["product_id"]] == product)
            expected = dollars(hit["revenue_cents"])
            context.update(region=region, product=product)
            other = next(
                m
                for m in months
                if m != month
                and next(
                    s["revenue_cents"]
                    for s in rows(region, m, None)
                    if names[s["product_id"]] == product
                )
                != hit["revenue_cents"]
            )
            near = {"other-month": {"month": other}, "units-not-revenue": {"metric": "units"}}
        elif difficulty is Difficulty.MEDIUM:
            kind = "top"
            listed = rows(region, month, None)
            while len({s["revenue_cents"] for s in listed}) < len(listed) or max(
                listed[:PER_PAGE], key=lambda s: s["revenue_cents"]
            ) == max(listed, key=lambda s: s["revenue_cents"]):
                # a tie, or a best row on the first page: move the best of this month's region
                # rows to the second page by selling more of a later product there
                late = rng.choice(listed[PER_PAGE:])
                late["units"] += rng.randrange(150, 400)
                late["revenue_cents"] = late["units"] * (
                    next(
                        s["revenue_cents"] // s["units"]
                        for s in sales
                        if s["product_id"] == late["product_id"] and s is not late
                    )
                )
            ranked = sorted(listed, key=lambda s: -s["revenue_cents"])
            expected = names[ranked[0]["product_id"]]
            context.update(region=region)
            near = {"second-best": {"rank": 1}, "first-page-only": {"first_page_only": True}}
            if names[max(listed, key=lambda s: s["units"])["product_id"]] != expected:
                near["most-units"] = {"metric": "units"}
        else:
            kind = "total"
            category = rng.choice(categories)
            expected = dollars(sum(s["revenue_cents"] for s in rows(None, month, category)))
            context.update(category=category)
            near = {
                "first-page-only": {"first_page_only": True},
                "one-region": {"region": region},
            }
        people = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 3)
        users = [
            app_user(rng, i + 1, p, "analyst", [w.lower() for w in BRANDS])
            for i, p in enumerate(people)
        ]
        context.update(kind=kind, expected=expected, user=users[0])
        seed = {
            "users": users,
            "products": products,
            "sales": sales,
        }
        whole, _, cents = expected.partition(".")
        secrets = [expected] if kind == "top" else [expected, f"{int(whole):,}.{cents}"]
        return WebScenario(
            seed=seed,
            context=context,
            near_misses=near,
            secrets=secrets,
            outputs=[ANSWER],
            tags=["information-seeking", "javascript", "answer"],
        )
