"""The one seam between factory and its trainer (``train/``, importable as ``factory_train``).

``factory_train`` imports ``factory``; ``factory`` never imports ``factory_train``. The trainer
implements :class:`TrainerPlugin` in the module :data:`TRAINER_MODULE`, and the commands that
need it (``train``; ``eval`` and ``calibrate`` with a local model; the settings file they all
read) load it by name through :func:`load_trainer` when they run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from factory.errors import FactoryError

if TYPE_CHECKING:
    from factory.agent.runners import EpisodeRunner, PolicyConfig

TRAINER_MODULE = "factory_train.plugin"
INSTALL_HINT = "pip install -e '.[train]'"

Say = Callable[[str], None]


class TrainerPlugin(Protocol):
    """What the trainer offers factory's commands."""

    def load_config(self, path: Path | None, **overrides: object) -> PolicyConfig:
        """The settings file (None: the defaults) with ``overrides`` applied (None values are
        ignored); a bad file is a one-line TaskFormatError."""
        ...

    def local_runner(
        self, config: PolicyConfig, *, jobs: int, batch_episodes: int, say: Say
    ) -> EpisodeRunner:
        """Episodes of the local model ``config.model`` (batched generation on this machine),
        ``jobs`` episodes' containers busy at once."""
        ...

    def train(
        self,
        suite: Path,
        config: PolicyConfig,
        out: Path,
        *,
        resume: bool,
        on_step: Callable[[dict], None],
        say: Say,
    ) -> Path:
        """Train on the suite into the run folder ``out``; ``on_step`` gets each step's metrics
        row. Returns the run folder."""
        ...


def load_trainer() -> TrainerPlugin:
    """The trainer's plugin module (its heavy dependencies load when a method needs them)."""
    try:
        return importlib.import_module(TRAINER_MODULE)  # type: ignore[return-value]
    except ImportError as exc:
        raise FactoryError(
            f"the trainer does not import ({exc.name or exc} is missing): {INSTALL_HINT}"
        ) from None
