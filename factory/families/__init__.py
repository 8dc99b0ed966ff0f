"""Procedural task families. A family is a folder, ``<domain>/<family>/family.py`` (see
``base``); importing this package imports every such ``family.py``, and each registers its
families with ``@register``. A family that fails to import is recorded in ``registry.broken``
(shown by `factory families list`, failed by the contract test) instead of taking every other
family down with it."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

from factory.families.base import Draft, Family, register, registry

FAMILY_MODULE = "family.py"


def _discover() -> None:
    root = Path(__file__).resolve().parent
    for module in sorted(root.glob(f"*/*/{FAMILY_MODULE}")):
        domain, folder = module.parent.parent.name, module.parent.name
        if domain.startswith(("_", ".")) or folder.startswith(("_", ".")):
            continue
        _load(f"{__name__}.{domain}.{folder}.family", f"{domain}/{folder}")


def _load(module: str, label: str) -> None:
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - reported, see the docstring
        registry.broken[label] = f"{type(exc).__name__}: {exc}"
        logging.getLogger(__name__).error("family %s failed to import: %s", label, exc)


_discover()

__all__ = ["Draft", "Family", "register", "registry"]
