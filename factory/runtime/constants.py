"""Labels, kinds, names and limits shared by the runtime's modules."""

from __future__ import annotations

import os
import time
import uuid

LABEL_MANAGED = "factory.managed"
LABEL_RUN = "factory.run"
LABEL_TASK = "factory.task"
LABEL_KIND = "factory.kind"
LABEL_PID = "factory.pid"
LABEL_HOST = "factory.host"
LABEL_ENV_HASH = "factory.env_hash"
LABEL_RECIPE_HASH = "factory.recipe_hash"
LABEL_SERVICE = "factory.service"
"""A sidecar's service name (its compose file's)."""

KIND_CONTAINER = "container"
KIND_TASK_IMAGE = "task-image"
KIND_BASE_IMAGE = "base-image"
KIND_ROOTFS = "rootfs"
KIND_BUILD_LEASE = "build-lease"
KIND_NETWORK = "network"
KIND_TASK_NETWORK = "task-network"
"""The network of one multi-container task (removed with its container)."""

TASK_IMAGE_REPO = "factory-env"
FACTORY_NETWORK = "factory-net"
TASK_NETWORK_PREFIX = "fxm"
"""Names (and bridge interfaces) of task networks: the prefix and 12 hex digits."""
"""The bridge network (interface :data:`factory.egress.BRIDGE`) of containers with network."""
HARNESS_IMAGE = "factory/harness:bookworm"
"""factory's harness toolkit (a static busybox; environments/images/harness.toml)."""
HARNESS_MOUNT = "/.factory"
"""Where every task container sees the harness toolkit, read-only."""
BUSYBOX = f"{HARNESS_MOUNT}/busybox"
_HARNESS_SOURCE = "/opt/factory-harness"
KIND_HARNESS = "harness"
DEFAULT_PIDS_LIMIT = 1024
DEFAULT_MAX_OUTPUT = 256 * 1024
MAX_WAIT_SEC = 2 * 86_400.0
"""No single wait is longer (a larger timeout is clamped: `Event.wait(1e300)` overflows)."""
POLL_SEC = 0.25
"""How often a waiting thread looks at cancellation, deadlines and build limits."""
CANCEL_GRACE_SEC = 3.0
"""How long a cancelled build's stream gets to end after its socket was shut down."""
CLOSE_DEADLINE_SEC = 20.0
"""How long :meth:`DockerRuntime.close` spends removing containers before it gives up."""
COPY_TIMEOUT_SEC = 60.0
"""Deadline of one download from a container."""
MAX_BUILD_LOG_BYTES = 16 << 20
"""A build log on disk is cut here (a build printing without end does not fill the disk)."""


def max_ready_sec() -> float:
    """The harness maximum for a healthcheck, whatever its retries (``FACTORY_MAX_READY_SEC``,
    default 600 s)."""
    try:
        return max(1.0, float(os.environ.get("FACTORY_MAX_READY_SEC", "600")))
    except ValueError:
        return 600.0


def new_run_id(prefix: str = "run") -> str:
    """A fresh run id; ``FACTORY_RUN_PREFIX`` (set by the test suite) is put in front."""
    outer = os.environ.get("FACTORY_RUN_PREFIX")
    prefix = f"{outer}-{prefix}" if outer else prefix
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
