"""What an order-desk request is made of: names, places, prices, and how the request words dates,
people and each of its pieces (wordings.toml)."""

from __future__ import annotations

import datetime
import random
from pathlib import Path

from factory.toolenv.core import JSON
from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.tool.wordings import Wordings


class Item(BaseModel):
    """An item of the store's catalogue (catalogue.toml), sold in each of its ``variants``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    sku_prefix: str
    category: str
    base_price: int
    """Dollars; a variant's price is drawn around it."""
    variants: list[str]


class _Catalogue(BaseModel):
    """catalogue.toml: the store's warehouses (id, city) and items."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    warehouses: list[tuple[str, str]]
    items: list[Item]


_CATALOGUE = load_toml_model(
    Path(__file__).parent / "catalogue.toml", _Catalogue, "the store's catalogue"
)
WAREHOUSES = _CATALOGUE.warehouses
"""(warehouse id, city)."""
ITEMS = _CATALOGUE.items


def pretty_date(date: str) -> str:
    day = datetime.date.fromisoformat(date)
    return f"{day.strftime('%B')} {day.day}"


def units_text(rng: random.Random, n: int, product: JSON) -> str:
    item, variant = product["name"].split(" - ")
    return WORDINGS.draw(rng, "units", n=n, product=product["name"], item=item, variant=variant)


WORDINGS = Wordings(
    Path(__file__).parent / "wordings.toml",
    "hello",
    "bye",
    "units",
    "new-order",
    "edit-order",
    "more-quantity",
    "less-quantity",
    "return",
    "cancellation",
    "discount",
    "shipping",
    "trap-oversell",
    "trap-cancel-shipped",
    "trap-late-return",
    "trap-discount",
    "trap-edit-shipped",
    "handover-damaged",
    "handover-wholesale",
)
"""How the customer words each piece of a request (wordings.toml)."""
