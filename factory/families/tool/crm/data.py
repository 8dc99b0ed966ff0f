"""What the seeded state of a sales CRM is made of: names, products, templates, wording (the
tables are in words.toml and templates.toml beside this module), and how a request words its
pieces (wordings.toml)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.tool.wordings import Wordings

_HERE = Path(__file__).parent


class _Words(BaseModel):
    """words.toml: the names and wording a seeded CRM is made of."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sellers: list[tuple[str, str]]
    customers: list[tuple[str, str]]
    products: list[str]
    deal_names: list[str]
    titles: list[str]
    summaries: list[str]
    task_titles: list[str]


class Template(BaseModel):
    """An email template of the seeded CRM (templates.toml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    subject: str
    body: str
    fields: list[str]


class _Templates(BaseModel):
    """templates.toml: the email templates, the pairs easily mistaken for each other, and how a
    request names a template's field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pairs: list[tuple[str, str]]
    labels: dict[str, str]
    templates: list[Template]


_WORDS = load_toml_model(_HERE / "words.toml", _Words, "the CRM's words")
_TEMPLATES = load_toml_model(_HERE / "templates.toml", _Templates, "the CRM's email templates")

SELLERS = _WORDS.sellers
"""The rep's own company: (name, email domain)."""
CUSTOMERS = _WORDS.customers
"""The customer companies: (name, industry)."""
PRODUCTS = _WORDS.products
DEAL_NAMES = _WORDS.deal_names
TITLES = _WORDS.titles
SUMMARIES = _WORDS.summaries
TASK_TITLES = _WORDS.task_titles
TEMPLATES = _TEMPLATES.templates
PAIRS = _TEMPLATES.pairs
"""(template, the template it is easily mistaken for)."""
LABELS = _TEMPLATES.labels
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

WORDINGS = Wordings(
    _HERE / "wordings.toml",
    "hello",
    "bye",
    "contact",
    "unsubscribe",
    "contact-title",
    "contact-email",
    "log-note",
    "log-activity",
    "task",
    "email",
    "stage",
    "amount",
    "close",
    "discount",
    "deal-note",
    "trap-opted-out",
    "trap-discount",
    "trap-unsigned-win",
    "trap-colleague-deal",
    "trap-skip-stage",
)
"""How a request words its pieces (wordings.toml)."""
