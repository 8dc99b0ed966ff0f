"""What a request says: the ways a customer or colleague words each piece of a tool request,
kept as ``str.format`` templates in a TOML file beside the family (one list per piece).

A request draws one wording of a list by its position (``rng.choice``), so the number and the
order of a list's wordings are part of every seed: reordering them changes the tasks.
"""

from __future__ import annotations

import string
from pathlib import Path

from factory.compat import tomllib
from factory.errors import RecipeError


class Wordings:
    """The wordings in ``path``: for each name in ``fields``, a list of templates that may use
    only the placeholders listed there. A missing or unexpected list, an empty one, or an
    unknown placeholder fails here (at import), naming the file and the list."""

    def __init__(self, path: Path, fields: dict[str, tuple[str, ...]]) -> None:
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise RecipeError(f"{path}: cannot read the wordings ({exc})") from None
        unused = sorted(set(table) - set(fields))
        if unused:
            raise RecipeError(f"{path}: {unused[0]}: no piece uses these wordings")
        self.path = path
        self.fields = fields
        self._texts: dict[str, list[str]] = {}
        for name, allowed in fields.items():
            if name not in table:
                raise RecipeError(f"{path}: {name}: missing (a piece is worded with it)")
            texts = table[name]
            if (
                not texts
                or not isinstance(texts, list)
                or not all(isinstance(t, str) for t in texts)
            ):
                raise RecipeError(f"{path}: {name}: wanted a non-empty list of wordings")
            for text in texts:
                for _, field, _, _ in string.Formatter().parse(text):
                    if field is not None and field not in allowed:
                        raise RecipeError(
                            f"{path}: {name}: unknown placeholder {{{field}}} in {text!r}"
                            f" (known: {', '.join(allowed) or 'none'})"
                        )
            self._texts[name] = texts

    def fill(self, name: str, /, **values: object) -> list[str]:
        """Every wording of ``name`` with ``values`` filled in (the caller draws one); the
        values must be exactly the list's placeholders. A value that is a function (a draw, such
        as one way of naming an account) is called wherever a wording uses it, in the order the
        placeholders stand, as a list of f-strings would evaluate it."""
        if set(values) != set(self.fields[name]):
            raise ValueError(
                f"{self.path.name}: {name} takes {sorted(self.fields[name])}, not {sorted(values)}"
            )
        return [text.format_map(_Values(values)) for text in self._texts[name]]


class _Values(dict):
    """A wording's values: a function among them is called each time a placeholder asks."""

    def __getitem__(self, key: str) -> object:
        value = super().__getitem__(key)
        return value() if callable(value) else value
