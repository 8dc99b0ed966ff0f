"""Loading factory's own TOML data files (recipes, alias tables, a family's tables) into pydantic
models (:func:`load_toml_model`) or, for files of plain named word lists, a :class:`WordTable`,
with errors that name the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from factory.compat import tomllib
from factory.errors import RecipeError

Model = TypeVar("Model", bound=BaseModel)


def load_toml_table(path: Path) -> dict[str, Any]:
    """Parse factory's own TOML data file ``path`` (a family's data table, shipped with it)."""
    return tomllib.loads(path.read_text(encoding="utf-8"))


def load_toml_model(path: Path, model: type[Model], what: str) -> Model:
    """Parse ``path`` as TOML and validate it as ``model``; raise RecipeError naming the field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecipeError(f"{path}: cannot read {what} ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{path}: invalid TOML ({exc})") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise RecipeError(f"{path}: {loc}: {first['msg']}") from None


_Words = Annotated[list[str], Field(min_length=1)]


class WordTable:
    """The named word lists (and small word tables) of one TOML file. ``table["tops"]`` is the
    list of words under ``tops``; :meth:`typed` reads any other shape (pairs, a mapping). A
    name the file lacks, or a value of another shape (a string where a list belongs, an empty
    list, a row of three where pairs belong), raises :class:`~factory.errors.RecipeError`
    naming the file and the name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._values = load_toml_table(path)

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
            first = exc.errors()[0]
            where = ".".join(str(p) for p in (name, *first["loc"]))
            raise RecipeError(f"{self.path}: {where}: {first['msg']}") from None
