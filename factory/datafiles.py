"""Loading factory's own TOML data files (recipes, alias tables) into pydantic models, with
errors that name the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

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
