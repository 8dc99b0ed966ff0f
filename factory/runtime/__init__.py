"""The one package that talks to Docker.

Everything that touches the engine goes through :class:`DockerRuntime` (images, builds) and
:class:`Sandbox` (one running task container). The rules it enforces:

* every container and image carries labels (``factory.managed``, run id, task id, owner pid);
* containers run unprivileged, with CPU / memory / pids limits, ``no-new-privileges``, no host
  mounts, and no network unless the task allows it; a container (or a build) that may use the
  network gets factory's own bridge, whose egress filter drops the host and private addresses
  (:mod:`factory.egress`), never the default bridge;
* image builds are limited like containers: memory + swap and CPU per step, and processes and
  memory for the whole build through a cgroup of their own (:mod:`factory.build_cgroup`);
* every wait has a deadline: each exec, each build, each healthcheck (overall, too) and each
  copy; at an exec's timeout the container is killed (which kills the command and everything it
  started), and the caller is told;
* Ctrl-C / SIGTERM cancel builds at once (the build's socket is shut down, so the engine sees
  the client go and stops the build) and remove containers: :meth:`DockerRuntime.close`;
* containers are removed on every exit path, and :func:`collect_garbage` removes what a killed
  run left behind, and only that: what live runs are using is left alone.

Its modules, one job each: :mod:`.constants` (labels, kinds, names, limits), :mod:`.client`
(the connection), :mod:`.network` (factory's filtered bridge), :mod:`.images` (images, the
harness toolkit), :mod:`.builds` (image builds: limits, network, cancellation),
:mod:`.sandbox` (one running container: exec, copy, readiness), :mod:`.overlay` (reading an
overlay filesystem's changes), :mod:`.containers` (starting, limiting and removing
containers), :mod:`.engine` (:class:`DockerRuntime`, made of those parts) and :mod:`.gc`
(what killed runs left behind), :mod:`.group` (multi-container tasks: a network of the
task's own, its sidecars).
"""

from factory.archive import tar_directory
from factory.runtime.builds import BuildLimits, BuildNetwork, BuiltImage
from factory.runtime.constants import (
    BUSYBOX,
    CANCEL_GRACE_SEC,
    CLOSE_DEADLINE_SEC,
    COPY_TIMEOUT_SEC,
    DEFAULT_MAX_OUTPUT,
    DEFAULT_PIDS_LIMIT,
    FACTORY_NETWORK,
    HARNESS_IMAGE,
    HARNESS_MOUNT,
    KIND_BASE_IMAGE,
    KIND_BUILD_LEASE,
    KIND_CONTAINER,
    KIND_HARNESS,
    KIND_NETWORK,
    KIND_ROOTFS,
    KIND_TASK_IMAGE,
    KIND_TASK_NETWORK,
    LABEL_ENV_HASH,
    LABEL_HOST,
    LABEL_KIND,
    LABEL_MANAGED,
    LABEL_PID,
    LABEL_RECIPE_HASH,
    LABEL_RUN,
    LABEL_SERVICE,
    LABEL_TASK,
    MAX_BUILD_LOG_BYTES,
    MAX_WAIT_SEC,
    POLL_SEC,
    TASK_IMAGE_REPO,
    TASK_NETWORK_PREFIX,
    max_ready_sec,
    new_run_id,
)
from factory.runtime.engine import DockerRuntime
from factory.runtime.gc import GcReport, collect_garbage, engine_summary, owner_alive
from factory.runtime.group import compose_readiness, image_readiness
from factory.runtime.sandbox import ContainerSpec, ExecResult, Readiness, Sandbox, ServiceSpec

__all__ = [
    "BUSYBOX",
    "CANCEL_GRACE_SEC",
    "CLOSE_DEADLINE_SEC",
    "COPY_TIMEOUT_SEC",
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_PIDS_LIMIT",
    "FACTORY_NETWORK",
    "HARNESS_IMAGE",
    "HARNESS_MOUNT",
    "KIND_BASE_IMAGE",
    "KIND_BUILD_LEASE",
    "KIND_CONTAINER",
    "KIND_HARNESS",
    "KIND_NETWORK",
    "KIND_ROOTFS",
    "KIND_TASK_IMAGE",
    "KIND_TASK_NETWORK",
    "LABEL_ENV_HASH",
    "LABEL_HOST",
    "LABEL_KIND",
    "LABEL_MANAGED",
    "LABEL_PID",
    "LABEL_RECIPE_HASH",
    "LABEL_RUN",
    "LABEL_SERVICE",
    "LABEL_TASK",
    "MAX_BUILD_LOG_BYTES",
    "MAX_WAIT_SEC",
    "POLL_SEC",
    "TASK_IMAGE_REPO",
    "TASK_NETWORK_PREFIX",
    "BuildLimits",
    "BuildNetwork",
    "BuiltImage",
    "ContainerSpec",
    "DockerRuntime",
    "ExecResult",
    "GcReport",
    "Readiness",
    "Sandbox",
    "ServiceSpec",
    "collect_garbage",
    "compose_readiness",
    "engine_summary",
    "image_readiness",
    "max_ready_sec",
    "new_run_id",
    "owner_alive",
    "tar_directory",
]
