"""Jinja2 rendering of the data templates under ``templates/`` and of each family's own
``templates/`` folder (StrictUndefined: a missing variable is an error, never an empty string)."""

from __future__ import annotations

import shlex
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from factory.resources import templates_dir


def _configured(loader: jinja2.BaseLoader) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["shquote"] = shlex.quote
    env.filters["pyrepr"] = repr
    return env


@cache
def environment() -> jinja2.Environment:
    """Templates by their path under ``templates/`` (e.g. ``families/_shared/...``)."""
    return _configured(jinja2.FileSystemLoader(str(templates_dir())))


@cache
def folder_environment(root: Path) -> jinja2.Environment:
    """Templates by their path under ``root`` (a family's ``templates/`` folder); names that are
    not there resolve under ``templates/``, so a family's templates can include the shared
    snippets (``{% include "families/_shared/pytest_test.sh.j2" %}``)."""
    return _configured(
        jinja2.ChoiceLoader(
            [jinja2.FileSystemLoader(str(root)), jinja2.FileSystemLoader(str(templates_dir()))]
        )
    )


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
