"""Loading factory's own TOML data files (recipes, alias tables) into pydantic models, with
errors that name the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from factory.compat import tomllib
from factory.errors import RecipeError

Model = TypeVar("Model", bound=BaseModel)


def load_toml_table(path: Path, what: str = "data") -> dict[str, Any]:
    """Parse factory's own TOML data file ``path`` (a family's data table, shipped with it);
    raise RecipeError naming the file when it cannot be read or is no TOML."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecipeError(f"{path}: cannot read {what} ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{path}: invalid TOML ({exc})") from None


def invalid(path: Path, exc: ValidationError, *where: str) -> RecipeError:
    """The RecipeError for the first problem of ``exc``, naming ``path`` and the field (under
    ``where``)."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in (*where, *first["loc"])) or "(top level)"
    return RecipeError(f"{path}: {loc}: {first['msg']}")


def load_toml_model(path: Path, model: type[Model], what: str) -> Model:
    """Parse ``path`` as TOML and validate it as ``model``; raise RecipeError naming the field."""
    data = load_toml_table(path, what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(path, exc) from None
