"""Code that terminal families put into their tasks outside their templates lives in the
family's ``shipped/`` folder, never reformatted (its bytes reach the tasks):

* programs with ``@@KEY@@`` markers where the draft fills in names and values (daemons, job
  stubs, service code): :func:`read` and :func:`fill`;
* Python modules the family imports on the host and whose source it also embeds in the tasks
  (a cron library, a reference solution)."""

from __future__ import annotations

import textwrap
from functools import cache
from pathlib import Path
from typing import Any

SHIPPED = "shipped"


@cache
def read(family_file: str, name: str) -> str:
    """The text of ``shipped/<name>`` in the folder of ``family_file`` (a family's ``__file__``)."""
    return (Path(family_file).parent / SHIPPED / name).read_text(encoding="utf-8")


def fill(template: str, **values: Any) -> str:
    """Replace @@KEY@@ markers (dedented template) with values."""
    out = textwrap.dedent(template).lstrip("\n")
    for key, value in values.items():
        out = out.replace(f"@@{key}@@", str(value))
    if "@@" in out:
        raise ValueError(f"unfilled marker in template: {out[out.index('@@') :][:40]}")
    return out
