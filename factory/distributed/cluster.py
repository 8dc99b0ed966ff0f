"""The driver's side of Ray: connect, count the slots, run units of work, cancel, sweep.

Concurrency per node comes from the custom resource ``docker_slots``: every unit of work asks
for one slot (and no CPU), so a node started with ``--resources='{"docker_slots": 4}'`` never
runs more than four units at once, whatever its CPU count says.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

from factory.distributed import SLOT_RESOURCE, ExecutorOptions, require_ray
from factory.errors import CancelledError, FactoryError

log = logging.getLogger(__name__)

BASE_IMAGE = "factory/base:bookworm"


class RayCluster:
    """One connection to a Ray cluster for one run (``run_id``)."""

    def __init__(self, options: ExecutorOptions, *, run_id: str, local_slots: int = 1) -> None:
        self.ray = require_ray()
        self.run_id = run_id
        self.options = options
        self._started_here = False
        self._lock = threading.Lock()
        self._outstanding: set[Any] = set()
        self._cancelled = threading.Event()
        self._remote: dict[Callable, Any] = {}
        self._connect(local_slots)
        self.nodes = self._slot_nodes()
        self.slots = int(sum(n["Resources"].get(SLOT_RESOURCE, 0) for n in self.nodes))
        if not self.slots:
            raise FactoryError(
                f"the Ray cluster at {options.ray_address} offers no '{SLOT_RESOURCE}': start "
                f"every node with ray start ... --resources='{{\"{SLOT_RESOURCE}\": N}}' (N = "
                "containers it may run at once)"
            )

    # --- connection -----------------------------------------------------------------
    def _connect(self, local_slots: int) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        common = dict(logging_level=logging.WARNING, log_to_driver=False)
        main = threading.current_thread() is threading.main_thread()
        sigterm = signal.getsignal(signal.SIGTERM) if main else None
        try:
            if self.options.ray_address:
                ray.init(address=self.options.ray_address, **common)
            else:
                ray.init(
                    num_cpus=max(1, local_slots),
                    resources={SLOT_RESOURCE: max(1, local_slots)},
                    include_dashboard=False,
                    object_store_memory=128 * 1024 * 1024,
                    **common,
                )
        except FactoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - ConnectionError, RuntimeError, ...
            where = self.options.ray_address or "a local Ray instance"
            text = str(exc).strip()
            first = text.splitlines()[0][:300] if text else type(exc).__name__
            if "token" in text.lower() and "auth" in text.lower():
                first += (
                    " (the cluster uses token authentication: set RAY_AUTH_MODE=token and "
                    "RAY_AUTH_TOKEN, or put its token in ~/.ray/auth_token)"
                )
            raise FactoryError(f"cannot connect to {where}: {first}") from None
        finally:
            if main and sigterm is not None:
                # ray.init makes SIGTERM exit at once; keep the CLI's (SIGTERM = Ctrl-C: the
                # run's containers are removed first).
                signal.signal(signal.SIGTERM, sigterm)
        self._started_here = True

    def _slot_nodes(self) -> list[dict]:
        return [n for n in self.ray.nodes() if n.get("Alive") and n["Resources"].get(SLOT_RESOURCE)]

    def describe(self) -> str:
        return f"{len(self.nodes)} node(s), {self.slots} {SLOT_RESOURCE}"

    def preflight(self, base_image: str = BASE_IMAGE) -> list[dict]:
        """Ask every node with slots whether its engine is up and has the base image; raise
        one clear error naming the nodes that cannot work."""
        from factory import __version__
        from factory.distributed.worker import probe_node

        refs = [self._on_node(probe_node, node["NodeID"]).remote(base_image) for node in self.nodes]
        try:
            found = self.ray.get(refs, timeout=120)
        except Exception as exc:  # noqa: BLE001
            raise FactoryError(f"Ray nodes did not answer the pre-flight check: {exc}") from None
        problems = []
        for info in found:
            node = f"node {info['node_id'][:12]} ({info['host']})"
            if info["docker"]:
                problems.append(f"{node}: {info['docker']}")
            elif not info["base_image"]:
                problems.append(f"{node}: {base_image} is not built there (factory images build)")
            if info["version"] != __version__:
                problems.append(f"{node}: factory {info['version']}, driver {__version__}")
        if problems:
            raise FactoryError("Ray nodes cannot run tasks: " + "; ".join(problems))
        return found

    # --- units of work --------------------------------------------------------------
    def _wrapped(self, fn: Callable) -> Any:
        with self._lock:
            if fn not in self._remote:
                self._remote[fn] = self.ray.remote(fn)
            return self._remote[fn]

    def _on_node(self, fn: Callable, node_id: str) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return self._wrapped(fn).options(
            num_cpus=0,
            max_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        )

    def call(self, fn: Callable, *args: Any) -> Any:
        """Run ``fn(*args)`` on a node with a free slot; block until it is done.

        Raises CancelledError when the run was cancelled, FactoryError when the node failed
        (worker crash, node lost); exceptions of ``fn`` itself come back as FactoryError too.
        """
        if self._cancelled.is_set():
            raise CancelledError("interrupted")
        remote = self._wrapped(fn).options(
            num_cpus=0,
            resources={SLOT_RESOURCE: 1},
            max_retries=1,  # a lost worker or node: once more elsewhere
            retry_exceptions=False,
        )
        with self._lock:
            ref = remote.remote(*args)
            self._outstanding.add(ref)
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.TaskCancelledError:
            raise CancelledError("interrupted") from None
        except self.ray.exceptions.RayTaskError as exc:
            if self._cancelled.is_set():
                raise CancelledError("interrupted") from None
            cause = getattr(exc, "cause", None)
            if isinstance(cause, FactoryError):
                raise FactoryError(f"on a Ray node: {cause}") from None
            detail = str(cause or exc).strip().splitlines()
            raise FactoryError(f"on a Ray node: {detail[-1] if detail else exc!r}") from None
        except self.ray.exceptions.RayError as exc:
            if self._cancelled.is_set():
                raise CancelledError("interrupted") from None
            first = str(exc).strip().splitlines()
            raise FactoryError(f"Ray: {first[0] if first else type(exc).__name__}") from None
        finally:
            with self._lock:
                self._outstanding.discard(ref)

    # --- interruption ----------------------------------------------------------------
    def cancel(self, grace: float = 5.0) -> int:
        """Cancel every unit in flight and sweep every node's engine for this run's containers.

        A cancelled unit gets KeyboardInterrupt when it next runs Python code and closes its
        runtime (removing its containers); one still busy after ``grace`` seconds (blocked in
        a long engine call) is killed, and the sweep removes what it leaves. Returns the
        containers the sweep removed."""
        self._cancelled.set()
        with self._lock:
            refs = list(self._outstanding)
        self._cancel_refs(refs, force=False)
        if refs:
            _, pending = self.ray.wait(refs, num_returns=len(refs), timeout=grace)
            if pending:
                self._cancel_refs(pending, force=True)
                self.ray.wait(pending, num_returns=len(pending), timeout=30)
        return self.sweep()

    def _cancel_refs(self, refs: list, *, force: bool) -> None:
        for ref in refs:
            try:
                self.ray.cancel(ref, force=force)
            except Exception as exc:  # noqa: BLE001 - already finished
                log.debug("cancel: %s", exc)

    def sweep(self) -> int:
        from factory.distributed.worker import sweep_node

        try:
            refs = [
                self._on_node(sweep_node, node["NodeID"]).remote(self.run_id)
                for node in self._slot_nodes()
            ]
            return sum(self.ray.get(refs, timeout=120))
        except Exception as exc:  # noqa: BLE001 - best effort; `factory gc` on the node
            log.warning("could not sweep the Ray nodes: %s", exc)
            return 0

    def shutdown(self) -> None:
        """Disconnect (stops the Ray instance when this run started it)."""
        if self.ray.is_initialized():
            self.ray.shutdown()
