"""What a request says: the ways a customer or colleague words each piece of a tool request,
kept as ``str.format`` templates in a TOML file beside the family, one table per piece: its
``placeholders`` and its ``texts``.

A request draws one wording of a list by its position (``rng.choice``), so the number and the
order of a piece's texts are part of every seed: reordering them changes the tasks.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from factory.datafiles import load_toml_model
from factory.errors import RecipeError


class _Piece(BaseModel):
    """A piece's wordings: the ``texts`` may use only the ``placeholders``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    placeholders: tuple[str, ...]
    texts: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _known_placeholders(self) -> _Piece:
        for text in self.texts:
            for _, field, _, _ in string.Formatter().parse(text):
                if field is not None and field not in self.placeholders:
                    raise ValueError(f"unknown placeholder {{{field}}} in {text!r}")
        return self


class Wordings:
    """The wordings in ``path`` of the pieces ``names``: a piece missing from the file, one the
    file has but no piece uses, an empty list and an unknown placeholder fail here (at import),
    naming the file and the piece."""

    def __init__(self, path: Path, *names: str) -> None:
        pieces = load_toml_model(path, RootModel[dict[str, _Piece]], "wordings").root
        for name in names:
            if name not in pieces:
                raise RecipeError(f"{path}: {name}: missing (a piece is worded with it)")
        for name in pieces:
            if name not in names:
                raise RecipeError(f"{path}: {name}: no piece uses these wordings")
        self.path = path
        self._pieces = pieces

    def fill(self, name: str, /, **values: object) -> list[str]:
        """Every wording of ``name`` with ``values`` filled in (the caller draws one). The
        values must give each of the piece's placeholders; others go unused (a caller may pass a
        shared set, such as the names of a deal). A value that is a function (a draw, such as one
        way of naming an account) is called wherever a wording uses it, in the order the
        placeholders stand, as a list of f-strings would evaluate it."""
        piece = self._pieces[name]
        missing = sorted(set(piece.placeholders) - set(values))
        if missing:
            raise ValueError(f"{self.path.name}: {name} needs a value for {', '.join(missing)}")
        return [text.format_map(_Values(values)) for text in piece.texts]

    def draw(self, rng: random.Random, name: str, /, **values: object) -> str:
        """One wording of ``name`` drawn by ``rng``, filled with ``values`` (:meth:`fill`: every
        wording is filled first, so function values are drawn as a list of f-strings would)."""
        return rng.choice(self.fill(name, **values))

    def only(self, name: str, /, **values: object) -> str:
        """The one wording of ``name``, filled with ``values`` (:meth:`fill`): a piece worded
        one way is not drawn, so it spends no draw of the seed. A piece with more wordings fails
        here (a request draws one of them instead)."""
        texts = self.fill(name, **values)
        if len(texts) != 1:
            raise ValueError(f"{self.path.name}: {name} has {len(texts)} wordings, draw one")
        return texts[0]


def possessive(name: str) -> str:
    """``name``'s, as a wording says it (Acme's, Brooks')."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


class _Values(dict):
    """A wording's values: a function among them is called each time a placeholder asks."""

    def __getitem__(self, key: str) -> object:
        value = super().__getitem__(key)
        return value() if callable(value) else value
