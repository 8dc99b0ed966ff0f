"""Locate the data folders (``environments/``, ``templates/``, ``verifiers/``) and the
container-side code in ``environments/`` that the host also reads or imports.

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


def toolenv_dir() -> Path:
    """The tool server and its domains (runs in tool task containers as /opt/toolenv/toolenv)."""
    return environments_dir() / "tools" / "toolenv"


def webkit_dir() -> Path:
    """The web-app kit every web task ships (runs in the container as /opt/webkit)."""
    return environments_dir() / "web" / "webkit"


def web_apps_dir() -> Path:
    """The web apps, one folder per app (runs in the container as /srv/app)."""
    return environments_dir() / "web" / "apps"
