"""What the seeded state of a cloud drive is made of: names, products, templates, wording (the
tables are in contents.toml beside this module), and how a request words its pieces
(wordings.toml)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.tool.wordings import Wordings


class _Contents(BaseModel):
    """contents.toml: the names, file-name patterns, tags, kinds and sizes of a seeded drive."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    companies: list[str]
    partners: list[str]
    products: list[str]
    clients: list[str]
    cities: list[str]
    subfolders: list[str]
    new_folders: list[str]
    templates: list[str]
    big: list[str]
    tags: list[str]
    depts: dict[str, list[str]]
    kinds: dict[str, str]
    sizes: dict[str, tuple[int, int]]


_CONTENTS = load_toml_model(
    Path(__file__).parent / "contents.toml", _Contents, "the drive's contents"
)
COMPANIES = _CONTENTS.companies
PARTNERS = _CONTENTS.partners
PRODUCTS = _CONTENTS.products
CLIENTS = _CONTENTS.clients
CITIES = _CONTENTS.cities
DEPTS = _CONTENTS.depts
"""Each department's file-name patterns."""
SUBFOLDERS = _CONTENTS.subfolders
NEW_FOLDERS = _CONTENTS.new_folders
TEMPLATES = _CONTENTS.templates
BIG = _CONTENTS.big
TAGS = _CONTENTS.tags
KINDS = _CONTENTS.kinds
"""How a request names a file of an extension."""
SIZES = _CONTENTS.sizes
"""The (smallest, largest) size in bytes of a file of an extension."""
WORDINGS = Wordings(
    Path(__file__).parent / "wordings.toml",
    "hello",
    "bye",
    "department-folder",
    "subfolder",
    "rename",
    "share-editor",
    "share-viewer",
    "revoke",
    "move",
    "untrash",
    "rollback",
    "copy",
    "link",
    "tag",
    "trash",
    "reorganise",
    "trap-confidential-link",
    "trap-external",
    "trap-foreign-delete",
    "trap-untag",
    "trap-quota",
)
"""How a colleague words the pieces of a request (wordings.toml)."""
GIB = 1024**3
MIN_FREE = 200 * 1024**2
