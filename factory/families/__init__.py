"""Procedural task families. Importing this package imports every module in it, and each
module registers its families with ``@register`` (see ``base``)."""

from __future__ import annotations

import importlib
import pkgutil

from factory.families.base import Draft, Family, register, registry

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Draft", "Family", "register", "registry"]
