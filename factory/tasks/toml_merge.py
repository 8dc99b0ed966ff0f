"""Rewrite a TOML file in place: new values in, everything else as the author wrote it.

``merge_toml(original, data)`` returns ``original`` changed only where ``data`` differs from
it: comments, key order, quoting and number spelling survive (``cpus = 1`` stays an integer
even when the model holds ``1.0``); keys absent from ``data`` are removed, new keys are added.
Used whenever factory rewrites a ``task.toml`` someone may have edited by hand (stamping
``[metadata.factory]`` after calibration, validation or import).
"""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.items import AoT, InlineTable, Table


def merge_toml(original: str, data: dict[str, Any]) -> str:
    """``original`` (TOML text) updated to hold exactly ``data`` (see the module docstring)."""
    document = tomlkit.parse(original)
    _merge_table(document, data)
    return tomlkit.dumps(document)


def _merge_table(table: Any, data: dict[str, Any]) -> None:
    for key in [k for k in table if k not in data]:
        del table[key]
    for key, value in data.items():
        if key not in table:
            table[key] = value if isinstance(table, InlineTable) else _item(value)
            continue
        old = table[key]
        if isinstance(value, dict) and isinstance(old, (Table, InlineTable)):
            _merge_table(old, value)
        elif isinstance(old, AoT) and _is_tables(value) and len(value) == len(old):
            for entry, new in zip(old, value, strict=True):
                _merge_table(entry, new)
        elif not _same(_plain(old), value):
            table[key] = _item(value)


def _is_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _item(value: Any) -> Any:
    """A TOML item for a new value: a table (set off by a blank line), an array of tables
    (``[[...]]``), or the value itself."""
    if isinstance(value, dict):
        table = tomlkit.table()
        for key, entry in value.items():
            table[key] = _item(entry)
        if not (value and isinstance(list(value.values())[-1], dict)):
            table.add(tomlkit.nl())  # a nested table last brings its own
        return table
    if _is_tables(value):
        array = tomlkit.aot()
        for entry in value:
            array.append(_item(entry))
        return array
    return value


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _same(old: Any, new: Any) -> bool:
    """Equal as values: 1 and 1.0 are the same number, True and 1 are not."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return old == new
    return type(old) is type(new) and old == new
