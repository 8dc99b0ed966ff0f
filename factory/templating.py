"""Jinja2 rendering of the data templates under ``templates/`` (StrictUndefined: a missing
variable is an error, never an empty string)."""

from __future__ import annotations

import shlex
from functools import cache
from typing import Any

import jinja2

from factory.resources import templates_dir


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["shquote"] = shlex.quote
    env.filters["pyrepr"] = repr
    return env


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
