"""Word lists that several terminal families draw names from (``words.toml``), and
:class:`WordTable`, which reads such a file of named lists (a family's own ``words.toml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from factory.datafiles import invalid, load_toml_table
from factory.errors import RecipeError

_Words = Annotated[list[str], Field(min_length=1)]


class WordTable:
    """The named word lists (and small word tables) of one TOML file. ``table["tops"]`` is the
    list of words under ``tops``; :meth:`typed` reads any other shape (pairs, a mapping). A
    name the file lacks, or a value of another shape (a string where a list belongs, an empty
    list, a row of three where pairs belong), raises :class:`~factory.errors.RecipeError`
    naming the file and the name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._values = load_toml_table(path, "word lists")

    def __getitem__(self, name: str) -> list[str]:
        return self.typed(name, _Words)

    def typed(self, name: str, shape: Any) -> Any:
        """The value under ``name`` validated (and converted: lists to tuples) as ``shape``,
        e.g. ``list[tuple[str, str]]`` or ``dict[str, str]``."""
        if name not in self._values:
            raise RecipeError(f"{self.path}: no word list {name!r}")
        try:
            return TypeAdapter(shape).validate_python(self._values[name])
        except ValidationError as exc:
            raise invalid(self.path, exc, name) from None


_WORDS = WordTable(Path(__file__).parent / "words.toml")

APPS: list[str] = _WORDS["apps"]
TEAMS: list[str] = _WORDS["teams"]
CTF_APPS: list[str] = _WORDS["ctf_apps"]
WORDS: list[str] = _WORDS["words"]
USERS: list[str] = _WORDS["users"]
FWORDS: list[str] = _WORDS["fwords"]
CLEAN_APPS: list[str] = _WORDS["clean_apps"]
