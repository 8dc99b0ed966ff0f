"""A family's unannounced faults (its traps) kept as data: a TOML file beside the family, one
table a fault, in the order the family lists them::

    [stale-pid]
    name = "a stale PID file"                 # what the trap is, in a few words
    tells = ["stale", "PID file", "pidfile"]  # the words that would give it away

:func:`load_traps` reads it into :class:`~factory.vocabulary.Trap` objects, the one form every
consumer (a draft's traps, :meth:`ImportJob.wire <factory.families.terminal.import_job.ImportJob.wire>`,
the tests) takes."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, RootModel

from factory.datafiles import load_toml_model
from factory.vocabulary import Trap


class _TrapRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    tells: list[str] = Field(min_length=1)


class _TrapTable(RootModel[dict[str, _TrapRow]]):
    pass


def load_traps(path: Path) -> dict[str, Trap]:
    """fault -> its trap, from the TOML file ``path``, in file order; a malformed
    entry raises :class:`~factory.errors.RecipeError` naming the file and the fault."""
    table = load_toml_model(path, _TrapTable, "traps")
    return {fault: Trap(row.name, tuple(row.tells)) for fault, row in table.root.items()}
