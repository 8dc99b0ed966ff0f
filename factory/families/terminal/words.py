"""Word lists that several terminal families draw names from (``words.toml``), and
:class:`WordTable`, which reads such a file of named lists (a family's own ``words.toml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factory.datafiles import load_toml_table
from factory.errors import RecipeError


class WordTable:
    """The named word lists (and small word tables) of one TOML file: ``table["tops"]`` is the
    value under ``tops``, as TOML gives it (lists, not tuples); a name the file lacks raises
    :class:`~factory.errors.RecipeError` naming the file and the name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._values = load_toml_table(path)

    def __getitem__(self, name: str) -> Any:
        if name not in self._values:
            raise RecipeError(f"{self.path}: no word list {name!r}")
        return self._values[name]


_WORDS = WordTable(Path(__file__).parent / "words.toml")

APPS: list[str] = _WORDS["apps"]
TEAMS: list[str] = _WORDS["teams"]
CTF_APPS: list[str] = _WORDS["ctf_apps"]
WORDS: list[str] = _WORDS["words"]
USERS: list[str] = _WORDS["users"]
FWORDS: list[str] = _WORDS["fwords"]
CLEAN_APPS: list[str] = _WORDS["clean_apps"]
