"""Procedural task families. Importing this package imports every module in it, and each
module registers its families with ``@register`` (see ``base``). A module that fails to import
is recorded in ``registry.broken`` (shown by `factory families list`, failed by the contract
test) instead of taking every other family down with it."""

from __future__ import annotations

import importlib
import logging
import pkgutil

from factory.families.base import Draft, Family, register, registry

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base" and not _module.name.startswith("_"):
        try:
            importlib.import_module(f"{__name__}.{_module.name}")
        except Exception as exc:  # noqa: BLE001 - reported, see the docstring
            registry.broken[_module.name] = f"{type(exc).__name__}: {exc}"
            logging.getLogger(__name__).error(
                "family module %s failed to import: %s", _module.name, exc
            )

__all__ = ["Draft", "Family", "register", "registry"]
