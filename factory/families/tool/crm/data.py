"""What the seeded state of a sales CRM is made of: names, products, templates, wording (the
tables are in words.toml and templates.toml beside this module), and how a request words its
pieces (wordings.toml)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from factory.datafiles import WordTable, load_toml_model
from factory.families.tool.wordings import Wordings

_HERE = Path(__file__).parent


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


#: words.toml: the names and wording a seeded CRM is made of.
_WORDS = WordTable(_HERE / "words.toml")
_TEMPLATES = load_toml_model(_HERE / "templates.toml", _Templates, "the CRM's email templates")

SELLERS: list[tuple[str, str]] = _WORDS.typed("sellers", list[tuple[str, str]])
"""The rep's own company: (name, email domain)."""
CUSTOMERS: list[tuple[str, str]] = _WORDS.typed("customers", list[tuple[str, str]])
"""The customer companies: (name, industry)."""
PRODUCTS: list[str] = _WORDS["products"]
DEAL_NAMES: list[str] = _WORDS["deal_names"]
TITLES: list[str] = _WORDS["titles"]
SUMMARIES: list[str] = _WORDS["summaries"]
TASK_TITLES: list[str] = _WORDS["task_titles"]
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
