"""A family's unannounced faults (its traps) kept as data: a TOML file beside the family, one
table a fault, in the order the family lists them::

    [stale-pid]
    name = "a stale PID file"                 # what the trap is, in a few words
    tells = ["stale", "PID file", "pidfile"]  # the words that would give it away

:func:`load_traps` reads it into :class:`~factory.vocabulary.Trap` objects, the one form every
consumer (a draft's traps, :meth:`ImportJob.wire <factory.families.terminal.import_job.ImportJob.wire>`,
the tests) takes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, RootModel

from factory.datafiles import load_toml_model
from factory.errors import RecipeError
from factory.vocabulary import Trap


class _TrapRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    tells: list[str] = Field(min_length=1)


class _TrapTable(RootModel[dict[str, _TrapRow]]):
    pass


def load_traps(path: Path, faults: Iterable[str]) -> dict[str, Trap]:
    """fault -> its trap, from the TOML file ``path``, in file order. A malformed entry, or one
    for a fault not among the family's ``faults`` (a misspelt name would drop the trap from
    every task silently), raises :class:`~factory.errors.RecipeError` naming the file and the
    fault."""
    table = load_toml_model(path, _TrapTable, "traps")
    known = set(faults)
    for fault in table.root:
        if fault not in known:
            raise RecipeError(f"{path}: {fault}: no such fault (known: {', '.join(sorted(known))})")
    return {fault: Trap(row.name, tuple(row.tells)) for fault, row in table.root.items()}


def traps_for(table: Mapping[str, Trap], faults: Iterable[str]) -> list[Trap]:
    """The traps of those ``faults`` that have one in ``table``, in the order of ``faults``."""
    return [table[fault] for fault in faults if fault in table]
