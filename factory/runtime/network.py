"""Factory's own bridge network, whose egress filter drops the host and private addresses."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from factory import egress
from factory.runtime.client import docker_sdk
from factory.runtime.constants import FACTORY_NETWORK, KIND_NETWORK, LABEL_KIND, LABEL_MANAGED

log = logging.getLogger(__name__)


def _egress_unavailable(engine_is_local: bool) -> str | None:
    """Why factory cannot filter its network's egress here (None: it can)."""
    if not engine_is_local:
        return "the engine is not on this machine"
    if os.geteuid() != 0:
        return "factory does not run as root, so it cannot install the iptables rules"
    return None


class NetworkMixin:
    """The network of a :class:`~factory.runtime.engine.DockerRuntime`'s containers and builds."""

    _network_lock: threading.Lock
    _network: tuple[str, str | None] | None

    def container_network(self) -> str:
        """The network mode for a container (or build) that may use the network: factory's
        filtered bridge, or ``none`` where its filter cannot be installed (see
        :meth:`network_note`)."""
        with self._network_lock:
            if self._network is None:
                self._network = self._setup_network()
            return self._network[0]

    def network_note(self) -> str | None:
        """Why containers that may use the network get none here (None when filtered)."""
        self.container_network()
        return self._network[1] if self._network else None

    def _setup_network(self) -> tuple[str, str | None]:
        why = _egress_unavailable(self.engine_is_local())
        if why is None:
            try:
                self._ensure_factory_network()
                subnets = [
                    cfg.get("Subnet", "")
                    for net in self.api.networks()
                    for cfg in ((net.get("IPAM") or {}).get("Config") or [])
                    if ":" not in cfg.get("Subnet", ":")
                ]
                egress.install(subnets)
                return FACTORY_NETWORK, None
            except (egress.EgressError, OSError, docker_sdk().errors.APIError) as exc:
                why = str(exc).splitlines()[0][:200]
        note = (
            f"network: the egress filter is unavailable ({why}); containers and builds that "
            "may use the network got none (a network without the filter could reach the host)"
        )
        log.warning(note)
        return "none", note

    def _ensure_factory_network(self) -> None:
        """Create :data:`FACTORY_NETWORK` once per engine (idempotent across processes)."""
        docker = docker_sdk()
        options = {
            "com.docker.network.bridge.name": egress.BRIDGE,
            "com.docker.network.bridge.enable_icc": "false",
            "com.docker.network.bridge.enable_ip_masquerade": "true",
        }
        try:
            found = self.api.inspect_network(FACTORY_NETWORK)
        except docker.errors.NotFound:
            try:
                self.api.create_network(
                    FACTORY_NETWORK,
                    driver="bridge",
                    options=options,
                    labels={LABEL_MANAGED: "1", LABEL_KIND: KIND_NETWORK},
                    check_duplicate=True,
                )
            except docker.errors.APIError as exc:
                if getattr(exc, "status_code", None) != 409:  # another process was first
                    raise
            found = self.api.inspect_network(FACTORY_NETWORK)
        bridge = (found.get("Options") or {}).get("com.docker.network.bridge.name")
        if bridge != egress.BRIDGE or found.get("Driver") != "bridge":
            raise egress.EgressError(
                f"a network named {FACTORY_NETWORK} exists that factory did not make "
                f"(bridge {bridge!r}); remove it"
            )
        if not Path("/sys/class/net", egress.BRIDGE).exists():
            raise egress.EgressError(f"the bridge {egress.BRIDGE} is not on this machine")
