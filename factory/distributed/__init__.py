"""Where the units of work run: ``--executor local`` (threads on this machine, the default) or
``--executor ray`` (Ray tasks on the nodes of a Ray cluster, each with its own Docker engine).
Both are an :class:`factory.executor.Executor`;
:func:`factory.distributed.executors.open_executor` makes the one asked for.

With Ray, one unit of work (validate one task directory, certify one candidate, host one
episode's container) runs on a node that offers the custom resource ``docker_slots`` (one slot
per container the node may run at a time, e.g. its ``--jobs``). The node builds the task's
image itself (cached per node by content hash), runs the containers, and sends back the result
model and the logs; the driver writes the reports and journals exactly as the local executor
does, so resuming works the same. Task directories travel by value (a tar in the remote call),
or by path with ``--ray-shared-fs`` when every node sees the driver's files at the same path.

Modules: :mod:`~factory.distributed.payload` (tars of task dirs and logs),
:mod:`~factory.distributed.worker` (what runs on a node; no Ray at import),
:mod:`~factory.distributed.cluster` (the driver's connection: slots, submit, cancel, sweep),
:mod:`~factory.distributed.ray_executor` (the executor: units of work and episode sites on
Ray), :mod:`~factory.distributed.episodes` (episodes whose containers live on the nodes),
:mod:`~factory.distributed.executors` (the executor a command's options ask for).
Importing this package is light: Ray loads on use.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from enum import Enum

from factory.errors import FactoryError

SLOT_RESOURCE = "docker_slots"
"""The custom Ray resource a node offers: containers it may run at once."""

RAY_HINT = "pip install -e '.[ray]' (or pip install ray) on the driver and on every node"


class ExecutorKind(str, Enum):
    """``--executor``: where the units of work run."""

    LOCAL = "local"
    RAY = "ray"


@dataclass(frozen=True)
class ExecutorOptions:
    """What ``--executor``, ``--ray-address`` and ``--ray-shared-fs`` asked for."""

    kind: ExecutorKind = ExecutorKind.LOCAL
    ray_address: str | None = None
    """A running cluster (``HOST:PORT`` of its head, or ``auto``); None starts a one-node Ray
    instance in this process with ``--jobs`` slots."""
    shared_fs: bool = False
    """Every node sees the driver's task directories at the same paths: send paths, not tars."""

    @property
    def is_ray(self) -> bool:
        return self.kind is ExecutorKind.RAY


def executor_options(
    executor: str | ExecutorKind, ray_address: str | None = None, shared_fs: bool = False
) -> ExecutorOptions:
    """Check the command-line options (one clear line when they do not fit together)."""
    try:
        kind = ExecutorKind(executor)
    except ValueError:
        raise FactoryError(f"--executor must be local or ray, not {executor!r}") from None
    if kind is ExecutorKind.LOCAL and (ray_address or shared_fs):
        raise FactoryError("--ray-address and --ray-shared-fs need --executor ray")
    if kind is ExecutorKind.RAY:
        require_ray()
    return ExecutorOptions(kind, ray_address or None, shared_fs)


def ray_installed() -> bool:
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def require_ray():
    """The ``ray`` module, or a FactoryError that says how to install it."""
    if not ray_installed():
        raise FactoryError(f"--executor ray needs Ray, which is not installed: {RAY_HINT}")
    try:
        import ray
    except ImportError as exc:
        raise FactoryError(f"--executor ray: Ray does not import ({exc}); {RAY_HINT}") from None
    return ray
