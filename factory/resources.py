"""Locate the data folders (``environments/``, ``templates/``, ``verifiers/``).

In a source checkout (editable install) they sit next to the ``factory`` package; in a wheel
they are shipped inside it under ``factory/_data``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the folder ``name`` (one of environments, templates, verifiers)."""
    for candidate in (_PACKAGE_DIR.parent / name, _PACKAGE_DIR / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"factory data folder '{name}' is missing from the installation")


def environments_dir() -> Path:
    return data_dir("environments")


def templates_dir() -> Path:
    return data_dir("templates")
