"""What a banking request is made of: names, places, prices, and how the request words dates,
people and each of its pieces (wordings.toml)."""

from __future__ import annotations

import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.tool.wordings import Wordings


class _Names(BaseModel):
    """names.toml: payees' banks, the companies customers pay, and card merchants."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    banks: list[str]
    companies: list[str]
    merchants: list[str]


_NAMES = load_toml_model(Path(__file__).parent / "names.toml", _Names, "the bank's names")
BANKS = _NAMES.banks
COMPANIES = _NAMES.companies
MERCHANTS = _NAMES.merchants


def pretty_date(date: str) -> str:
    day = datetime.date.fromisoformat(date)
    return f"{day.strftime('%B')} {day.day}"


def money_text(amount: float) -> str:
    return f"${amount:,.2f}".replace(".00", "")


WORDINGS = Wordings(
    Path(__file__).parent / "wordings.toml",
    "hello",
    "bye",
    "account",
    "card-freeze",
    "card-unfreeze",
    "transfer",
    "payment",
    "new-payee",
    "dispute",
    "trap-over-limit",
    "trap-new-payee",
    "trap-old-dispute",
    "trap-fraud-card",
    "trap-frozen-account",
    "trap-relative-card",
    "handover-loan",
    "handover-bereavement",
    "handover-closure",
)
"""How the customer words each piece of a request (wordings.toml)."""
