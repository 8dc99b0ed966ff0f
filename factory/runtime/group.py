"""Multi-container tasks: a network of the task's own, its sidecars started, health-checked and
limited, and all of it removed with the task's container.

Each task container with sidecars (a :class:`ContainerSpec` with ``services``) gets:

* its own bridge network, ``internal`` (Docker drops whatever leaves it: no route to the
  internet or to other networks) with no address for the host on it
  (``com.docker.network.bridge.inhibit_ipv4``: the gateway address other internal networks
  leave open does not exist), and, where factory can install it (root, local engine), the
  egress filter's input chain on its bridge (``fxm*`` interfaces), which rejects anything new
  addressed to the host at all. Services find each other by service name (Docker's embedded
  DNS); the agent's container is ``main`` there. A task that may use the internet has its
  container on factory's filtered bridge as well; sidecars never are;
* each sidecar started in order (the services it depends on first) from its image's own
  command, unprivileged, ``no-new-privileges``, with an init process, its CPU, memory (swap
  off) and process limits, no harness mount, labelled like every factory container (run,
  task, owner pid: ``factory gc`` finds what a killed run left) plus its service name;
* its healthcheck (Compose's, or else the image's ``HEALTHCHECK``) passed before anything that
  starts after it, within the time Docker would give it: polled every half second, so a
  service that is up at once costs no ``interval``; a service others wait for with
  ``service_completed_successfully`` must exit 0 first. A failure is
  :class:`EnvironmentUnhealthyError` naming the service, with its last log lines.

What starts is removed on every path: a failed start removes what it had started, and
:meth:`Sandbox.close` / :meth:`DockerRuntime.close` remove the sidecars and then the network
after the task's container (the reaper removes them in that order).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import Any

from factory import egress
from factory.errors import CancelledError, ContainerDiedError, EnvironmentUnhealthyError
from factory.runtime.client import docker_sdk
from factory.runtime.constants import (
    KIND_CONTAINER,
    KIND_TASK_NETWORK,
    LABEL_KIND,
    LABEL_RUN,
    LABEL_SERVICE,
    TASK_NETWORK_PREFIX,
    max_ready_sec,
)
from factory.runtime.sandbox import (
    ContainerSpec,
    Readiness,
    Sandbox,
    ServiceSpec,
    retry_budget_sec,
)

log = logging.getLogger(__name__)

POLL_INTERVAL_SEC = 0.5
"""How often a sidecar's healthcheck is tried (Docker's interval only bounds the total wait)."""
NETWORK_MARK = "net:"
"""Removal-queue items that are networks, not containers."""
_NANO = 1e-9


def image_readiness(config: dict[str, Any] | None) -> Readiness | None:
    """The image's ``HEALTHCHECK`` (``Config.Healthcheck`` of ``docker inspect``) as a
    :class:`Readiness` polled like a Compose one; None when it has none."""
    test = (config or {}).get("Test") or []
    if not test or test[0] == "NONE":
        return None
    if test[0] == "CMD-SHELL" and len(test) == 2:
        command = test[1]
    elif test[0] == "CMD" and len(test) > 1:
        import shlex

        command = shlex.join(test[1:])
    else:
        return None
    interval = (config.get("Interval") or 30e9) * _NANO
    timeout = (config.get("Timeout") or 30e9) * _NANO
    retries = config.get("Retries") or 3
    start = (config.get("StartPeriod") or 0) * _NANO
    return compose_readiness(command, interval, timeout, retries, start)


def compose_readiness(
    command: str, interval_sec: float, timeout_sec: float, retries: int, start_period_sec: float
) -> Readiness:
    """A Compose healthcheck as a :class:`Readiness`: tried every :data:`POLL_INTERVAL_SEC`
    until it passes, for as long as Docker would keep trying it (start period plus every retry
    at its interval and timeout, at most the harness maximum)."""
    budget = retry_budget_sec(start_period_sec, retries, interval_sec, timeout_sec)
    return Readiness(
        command=command,
        interval_sec=min(interval_sec, POLL_INTERVAL_SEC),
        timeout_sec=timeout_sec,
        retries=1_000_000,
        start_period_sec=0.0,
        start_interval_sec=POLL_INTERVAL_SEC,
        max_wait_sec=min(max(budget, 1.0), max_ready_sec()),
    )


class GroupMixin:
    """The task networks and sidecars of a :class:`~factory.runtime.engine.DockerRuntime`."""

    _closing: bool
    _protect_lock: threading.Lock
    _bridges_protected: bool | None

    # --- the task's network -----------------------------------------------------------------
    def _protect_task_bridges(self) -> bool:
        """Install the input filter on every task bridge (once per process); False where it
        cannot be (not root, remote engine, no iptables)."""
        with self._protect_lock:
            if self._bridges_protected is None:
                ok = self.engine_is_local() and os.geteuid() == 0
                if ok:
                    try:
                        egress.protect_bridges(f"{TASK_NETWORK_PREFIX}+")
                    except (egress.EgressError, OSError) as exc:
                        log.warning("task networks: the host filter is unavailable: %s", exc)
                        ok = False
                self._bridges_protected = ok
            return self._bridges_protected

    def create_task_network(self, task_id: str) -> str:
        """A new internal bridge network for one task's containers (its name); see the module
        docstring for why nothing on it reaches the host."""
        docker = docker_sdk()
        protected = self._protect_task_bridges()
        name = f"{TASK_NETWORK_PREFIX}{uuid.uuid4().hex[:12]}"  # also the bridge: 15 chars
        options = {
            "com.docker.network.bridge.name": name,
            "com.docker.network.bridge.enable_icc": "true",
            "com.docker.network.bridge.inhibit_ipv4": "true",
        }
        labels = {**self.base_labels(task_id), LABEL_KIND: KIND_TASK_NETWORK}
        try:
            self.api.create_network(
                name, driver="bridge", internal=True, options=options, labels=labels
            )
        except docker.errors.APIError as exc:
            if not protected:
                raise ContainerDiedError(
                    f"cannot make the task's network without an address for the host ({exc}); "
                    "and the host filter needs root on the engine's machine, so the "
                    "multi-container task is not run"
                ) from None
            options.pop("com.docker.network.bridge.inhibit_ipv4")
            self.api.create_network(
                name, driver="bridge", internal=True, options=options, labels=labels
            )
        return name

    def remove_network(self, name: str, attempts: int = 5) -> bool:
        """Remove a task network (retried briefly: the engine may still be detaching a
        container that was just removed)."""
        docker = docker_sdk()
        for attempt in range(attempts):
            try:
                self.api.remove_network(name)
                return True
            except docker.errors.NotFound:
                return True
            except Exception as exc:  # noqa: BLE001 - never let the reaper die
                if attempt == attempts - 1:
                    log.warning("could not remove network %s: %s", name, exc)
                    return False
                time.sleep(0.2 * (attempt + 1))
        return False

    def sweep_networks(self) -> int:
        """Remove every task network labelled with this run id (after its containers)."""
        try:
            found = self.api.networks(filters={"label": f"{LABEL_RUN}={self.run_id}"})
        except Exception:  # noqa: BLE001
            return 0
        return sum(self.remove_network(item["Name"]) for item in found)

    # --- sidecars ---------------------------------------------------------------------------
    def start_sidecars(self, spec: ContainerSpec, network: str) -> list[Sandbox]:
        """Start ``spec.services`` in order on ``network``, each ready before the next starts;
        on failure, what was started is removed and the error raised."""
        started: list[Sandbox] = []
        try:
            for service in spec.services:
                if self._closing:
                    raise CancelledError("the run is shutting down")
                box = self._start_sidecar(spec, service, network)
                started.append(box)
                self._wait_sidecar(box, service)
        except BaseException:
            for box in started:
                self._remove_container(box.id)
            raise
        return started

    def _start_sidecar(self, spec: ContainerSpec, service: ServiceSpec, network: str) -> Sandbox:
        docker = docker_sdk()
        labels = {
            **self.base_labels(spec.task_id),
            LABEL_KIND: KIND_CONTAINER,
            LABEL_SERVICE: service.name,
            **spec.labels,
        }
        kwargs: dict[str, Any] = {
            "labels": labels,
            "detach": True,
            "network": network,
            "networking_config": {network: self.api.create_endpoint_config(aliases=[service.name])},
            "nano_cpus": int(min(service.cpus, self.engine_cpus()) * 1e9),
            "mem_limit": f"{service.memory_mb}m",
            "memswap_limit": f"{service.memory_mb}m",
            "pids_limit": service.pids_limit,
            "privileged": False,
            "security_opt": ["no-new-privileges"],
            "init": True,
            "environment": dict(service.env),
            "hostname": service.name[:63],
        }
        if service.command is not None:
            kwargs["command"] = list(service.command)
        if service.entrypoint is not None:
            kwargs["entrypoint"] = list(service.entrypoint)
        if service.workdir:
            kwargs["working_dir"] = service.workdir
        if service.user:
            kwargs["user"] = service.user
        try:
            container = self.client.containers.create(service.image, **kwargs)
        except docker.errors.ImageNotFound:
            raise ContainerDiedError(
                f"sidecar '{service.name}': image {service.image} does not exist"
            ) from None
        except docker.errors.APIError as exc:
            raise ContainerDiedError(
                f"sidecar '{service.name}': cannot create its container: {exc.explanation or exc}"
            ) from None
        readiness = service.readiness
        if readiness is None and service.image_healthcheck:
            config = self.api.inspect_image(service.image).get("Config") or {}
            readiness = image_readiness(config.get("Healthcheck"))
        box = Sandbox(
            self,
            container.id,
            ContainerSpec(
                image=service.image, task_id=spec.task_id, readiness=readiness, harness=False
            ),
        )
        try:
            container.start()
        except docker.errors.APIError as exc:
            self._remove_container(container.id)
            raise ContainerDiedError(
                f"sidecar '{service.name}': cannot start: {exc.explanation or exc}"
            ) from None
        return box

    def _wait_sidecar(self, box: Sandbox, service: ServiceSpec) -> None:
        """Ready (healthcheck) or, for ``must_complete``, exited 0."""
        if service.must_complete:
            limit = box.spec.readiness.deadline_sec() if box.spec.readiness else max_ready_sec()
            try:
                status = self.api.wait(box.id, timeout=limit).get("StatusCode")
            except Exception:  # noqa: BLE001 - a timeout of the wait itself
                status = None
            if status != 0:
                raise EnvironmentUnhealthyError(
                    f"sidecar '{service.name}' did not complete successfully (exit "
                    f"{status}){self._log_tail(box.id)}"
                )
            return
        if box.spec.readiness is None:
            if not box.is_running():
                raise EnvironmentUnhealthyError(
                    f"sidecar '{service.name}' stopped right after it started"
                    f"{self._log_tail(box.id)}"
                )
            return
        try:
            box.wait_ready()
        except (EnvironmentUnhealthyError, ContainerDiedError) as exc:
            state = box.state()
            stopped = (
                f" (it exited {state.get('ExitCode')})"
                if state and not state.get("Running")
                else ""
            )
            raise EnvironmentUnhealthyError(
                f"sidecar '{service.name}'{stopped}: {exc}{self._log_tail(box.id)}"
            ) from None

    def _log_tail(self, container_id: str, lines: int = 5) -> str:
        try:
            text = self.api.logs(container_id, tail=lines).decode("utf-8", errors="replace")
        except Exception:  # noqa: BLE001
            return ""
        text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
        return f"; its last output: {text[-400:]}" if text else ""
