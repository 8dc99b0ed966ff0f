"""The catalogue of function kinds a python-bugfix package is assembled from: one TOML file per
kind in ``kinds/`` (the file name is the kind's key).

A kind's source uses @name@ tokens for every function name (renamed per task). A bug is a list of
(correct, buggy) snippet pairs; "reveal" cases are calls whose result differs under the bug
(expected values are computed by running the correct code); "edge" bugs break documented edge
cases only, and no visible test covers them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from factory.errors import FactoryError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KINDS_DIR = Path(__file__).resolve().parent / "kinds"


class Case(BaseModel):
    """One call of a function in a test."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    args: str
    """Python source of the argument tuple (may use names defined by ``setup``)."""
    setup: str = ""
    """Statements run before the call."""
    post: str = ""
    """Extra assertion lines after the call (e.g. the input was not modified)."""


class Kind(BaseModel):
    """A kind of function: its source, its bugs and the cases that reveal them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    """The kind's key (its file name), also its @key@ token."""
    names: tuple[str, ...]
    """Names the function may get in a task."""
    code: str
    """The correct source, with @key@ tokens for function names."""
    bugs: dict[str, tuple[tuple[str, str], ...]] = {}
    """Bug name -> (correct, buggy) snippet pairs; a visible test reveals each."""
    reveal: dict[str, Case] = {}
    """One visible-test case per bug (for a user kind: per bug of its helper)."""
    edges: dict[str, tuple[tuple[str, str], ...]] = {}
    """Bugs that break a documented edge case only (no visible test covers them)."""
    edge_tests: str = ""
    """Hidden pytest code (tokens allowed) that fails under every edge bug."""
    basic: tuple[Case, ...] = ()
    """Visible cases that pass under every bug of this kind."""
    gen: str
    """Source of ``gen(rng)`` returning an argument tuple, for the hidden property checks."""
    helper: str = ""
    """For a user kind: the key of the kind it calls (in another module)."""
    hides: tuple[str, ...] = ()
    """For a user kind: bugs of its helper that cannot change its result (no call of it
    reveals them), so a task that shows the helper's bug through this kind never gets them."""
    imports: str = ""
    """Import lines the kind's module needs."""


def load_kinds(folder: Path = KINDS_DIR) -> dict[str, Kind]:
    """Every ``<key>.toml`` in ``folder``, by key; errors name the file and the field."""
    kinds: dict[str, Kind] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            kinds[path.stem] = Kind.model_validate({**data, "key": path.stem})
        except tomllib.TOMLDecodeError as exc:
            raise FactoryError(f"{path}: invalid TOML ({exc})") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise FactoryError(f"{path}: {field}: {first['msg']}") from None
    for kind in kinds.values():
        if kind.helper and kind.helper not in kinds:
            raise FactoryError(f"{folder / kind.key}.toml: helper: unknown kind '{kind.helper}'")
        unknown = sorted(set(kind.hides) - set(kinds[kind.helper].bugs if kind.helper else ()))
        if unknown:
            raise FactoryError(
                f"{folder / kind.key}.toml: hides: '{unknown[0]}' is not a bug of its helper "
                f"'{kind.helper or '(none)'}'"
            )
    return kinds


KINDS = load_kinds()
