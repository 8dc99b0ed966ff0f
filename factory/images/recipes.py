"""Base-image recipes: TOML files under ``environments/images/`` (every file but the aliases).

A recipe either bootstraps a Debian root filesystem from packages (``[debootstrap]``) or extends
another local image with more Debian packages (``from_image`` + ``apt_packages``). Both may copy
files in (``[[copy]]``), set ``[env]`` and ``run`` shell commands.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from factory.datafiles import load_toml_model
from factory.errors import RecipeError
from factory.resources import data_dir, environments_dir


class CopySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    src: str
    """Folder to copy, relative to the data root ('environments/...' or 'verifiers/...')."""
    dest: str
    """Absolute destination folder in the image."""

    def source_path(self) -> Path:
        root, _, rest = self.src.partition("/")
        try:
            return data_dir(root) / rest
        except FileNotFoundError:
            raise RecipeError(
                f"copy.src '{self.src}' is not under environments/ or verifiers/"
            ) from None


class DebootstrapSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str = "bookworm"
    """Debian release to bootstrap."""
    variant: str = "minbase"
    """debootstrap --variant."""
    packages: list[str] = Field(default_factory=list)
    """Extra Debian packages (debootstrap --include)."""
    mirror: str | None = None
    """Debian mirror; default: the first one in the host's apt sources, else deb.debian.org."""
    components: list[str] = Field(default_factory=lambda: ["main"])
    """Archive components."""


class ImageRecipe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    """Local image reference this recipe produces, e.g. 'factory/base:bookworm'."""
    description: str = ""
    """What the image is for."""
    default: bool = True
    """Built by a plain `factory images build` (otherwise only when named or with --all)."""
    like: str | None = None
    """Name of another recipe whose settings this one starts from (tables merge key by key)."""
    debootstrap: DebootstrapSpec | None = None
    """Bootstrap a fresh Debian root filesystem."""
    from_image: str | None = None
    """Or: start from this local image (usually another recipe's)."""
    apt_packages: list[str] = Field(default_factory=list)
    """Debian packages installed with apt-get on top (needs the Debian mirror at build time)."""
    copy_: list[CopySpec] = Field(default_factory=list, alias="copy")
    """Folders copied into the image."""
    env: dict[str, str] = Field(default_factory=dict)
    """ENV of the image."""
    run: list[str] = Field(default_factory=list)
    """Shell commands run at the end of the build."""
    source: Path | None = Field(default=None, exclude=True)
    """The TOML file this recipe came from."""

    @model_validator(mode="after")
    def _one_origin(self) -> ImageRecipe:
        if self.like is None and (self.debootstrap is None) == (self.from_image is None):
            raise ValueError("set exactly one of [debootstrap] or from_image")
        return self


def load_recipe(path: Path) -> ImageRecipe:
    recipe = load_toml_model(path, ImageRecipe, "recipe")
    recipe.source = path
    return recipe


def load_recipes(folder: Path | None = None) -> list[ImageRecipe]:
    """All recipes, ordered so that an image comes after the image it starts from."""
    folder = folder or environments_dir() / "images"
    recipes = [load_recipe(p) for p in sorted(folder.glob("*.toml")) if p.name != "aliases.toml"]
    by_name = {r.name: r for r in recipes}
    recipes = [_resolve_like(r, by_name) for r in recipes]
    by_name = {r.name: r for r in recipes}
    ordered: list[ImageRecipe] = []

    def visit(recipe: ImageRecipe, trail: tuple[str, ...]) -> None:
        if recipe in ordered:
            return
        if recipe.name in trail:
            raise RecipeError(f"{recipe.source}: from_image cycle {' -> '.join(trail)}")
        parent = by_name.get(recipe.from_image or "")
        if parent is not None:
            visit(parent, (*trail, recipe.name))
        ordered.append(recipe)

    for recipe in recipes:
        visit(recipe, ())
    return ordered


def select_recipes(names: list[str] | None = None, *, all_: bool = False) -> list[ImageRecipe]:
    """What `factory images build` builds: the recipes ``names`` (in build order), else every
    recipe with ``all_``, else the default ones. An unknown name lists the known ones."""
    recipes = load_recipes()
    known = {r.name for r in recipes}
    unknown = [n for n in names or [] if n not in known]
    if unknown:
        raise RecipeError(
            f"unknown image(s) {', '.join(unknown)}; recipes: {', '.join(sorted(known))}"
        )
    if names:
        return [r for r in recipes if r.name in names]
    return [r for r in recipes if all_ or r.default]


def _merge(base: dict, own: dict) -> dict:
    out = dict(base)
    for key, value in own.items():
        out[key] = (
            _merge(out[key], value)
            if isinstance(value, dict) and isinstance(out.get(key), dict)
            else value
        )
    return out


def _resolve_like(recipe: ImageRecipe, by_name: dict[str, ImageRecipe]) -> ImageRecipe:
    """A recipe with ``like``: the named recipe's settings, overridden by its own."""
    if recipe.like is None:
        return recipe
    parent = by_name.get(recipe.like)
    if parent is None or parent.like is not None:
        raise RecipeError(f"{recipe.source}: like = {recipe.like!r} names no plain recipe")
    inherited = {"name", "description", "default", "source", "like"}
    base = parent.model_dump(by_alias=True, exclude=inherited)
    own = recipe.model_dump(by_alias=True, exclude_unset=True, exclude={"source", "like"})
    try:
        merged = ImageRecipe.model_validate(_merge(base, own))
    except ValueError as exc:
        raise RecipeError(f"{recipe.source}: {exc}") from None
    merged.source = recipe.source
    return merged
