"""The ``task.toml`` of a task that factory writes from scratch (generated or imported)."""

from __future__ import annotations

from typing import Any

from factory import __version__
from factory.tasks.config import FactoryProvenance, TaskConfig
from factory.tasks.harbor_schema import CURRENT_SCHEMA_VERSION


def new_task_config(provenance: FactoryProvenance, **sections: Any) -> TaskConfig:
    """A config of Harbor's current schema version with ``sections`` (``task``, ``metadata``,
    ``verifier``, ``agent``, ``environment``, ...) and ``provenance`` as its
    ``[metadata.factory]``, stamped with this factory's version."""
    config = TaskConfig(schema_version=CURRENT_SCHEMA_VERSION, **sections)
    config.set_provenance(provenance.model_copy(update={"factory_version": __version__}))
    return config
