"""What an airline request is made of: names, places, prices, and how the request words dates,
people and each of its pieces (wordings.toml)."""

from __future__ import annotations

import datetime
import random
from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

from factory.datafiles import load_toml_model
from factory.families.tool.wordings import Wordings


class _Travel(BaseModel):
    """travel.toml: airports (code, city), departure times, card brands, and who a customer
    travels with (the ``minors`` among them are children)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    airports: list[tuple[str, str]]
    times: list[str]
    brands: list[str]
    relations: list[str]
    minors: tuple[str, ...]

    @model_validator(mode="after")
    def _minors_are_relations(self) -> _Travel:
        unknown = [m for m in self.minors if m not in self.relations]
        if unknown:
            raise ValueError(f"minors that are not relations: {unknown}")
        return self


_TRAVEL = load_toml_model(Path(__file__).parent / "travel.toml", _Travel, "the airline's travel")
AIRPORTS = _TRAVEL.airports
"""(airport code, city)."""
TIMES = _TRAVEL.times
BRANDS = _TRAVEL.brands
RELATIONS = _TRAVEL.relations
MINORS = _TRAVEL.minors
CABIN_WORDS = {"basic_economy": "basic economy", "economy": "economy", "business": "business"}


def pretty_date(date: str) -> str:
    day = datetime.date.fromisoformat(date)
    return f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}"


def dob_words(rng: random.Random, dob: str) -> str:
    day = datetime.date.fromisoformat(dob)
    return rng.choice(
        [
            f"{day.strftime('%B')} {day.day}, {day.year}",
            f"{day.day} {day.strftime('%B')} {day.year}",
            dob,
        ]
    )


def random_dob(rng: random.Random, adult: bool = True) -> str:
    year = rng.randint(1950, 2003) if adult else rng.randint(2008, 2020)
    return datetime.date(year, rng.randint(1, 12), rng.randint(1, 28)).isoformat()


WORDINGS = Wordings(
    Path(__file__).parent / "wordings.toml",
    "hello",
    "bye",
    "card",
    "gift-card",
    "outbound",
    "return",
    "booking",
    "baggage",
    "passengers",
    "cabin-change",
    "flight-change",
    "cancellation",
    "compensation",
    "trap-cancel",
    "trap-basic-flight",
    "trap-remove-bags",
    "trap-add-passenger",
    "trap-compensation",
    "handover-baggage",
    "handover-assistance",
    "handover-group",
)
"""How the customer words each piece of a request (wordings.toml)."""
