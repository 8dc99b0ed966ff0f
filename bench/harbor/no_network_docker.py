"""Harbor's Docker environment, with no-network enforced by Docker itself (for the bench).

Harbor 0.26 enforces ``network_mode = "no-network"`` through an nftables egress sidecar. It
starts that sidecar only after a probe container (``alpine:3.23.4`` by digest) and builds it
``FROM gogost/gost``; neither image can be pulled here, so stock Harbor refuses every
no-network task with a ValueError before the trial starts. This subclass keeps everything else
of Harbor's Docker environment and, for a no-network task, adds Harbor's own
``docker-compose-no-network.yaml`` (``network_mode: none`` on the main service): the agent, the
oracle and the verifier get no network at all, which is what the task declares. Tasks whose
network is public run exactly as with ``--env docker``.
"""

from __future__ import annotations

from pathlib import Path

from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.docker import COMPOSE_NO_NETWORK_PATH
from harbor.environments.docker.docker import DockerEnvironment
from harbor.models.task.config import NetworkMode, NetworkPolicy


class NoNetworkDockerEnvironment(DockerEnvironment):
    def _offline(self) -> bool:
        policy = getattr(self, "_network_policy", None)
        return policy is not None and policy.network_mode == NetworkMode.NO_NETWORK

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return super().capabilities.model_copy(update={"disable_internet": True})

    @property
    def _docker_compose_paths(self) -> list[Path]:
        paths = super()._docker_compose_paths
        return [*paths, COMPOSE_NO_NETWORK_PATH] if self._offline() else paths

    async def _apply_network_policy(self, network_policy: NetworkPolicy) -> None:
        if network_policy.network_mode == NetworkMode.NO_NETWORK and self._offline():
            return  # started with network_mode: none; nothing to change
        await super()._apply_network_policy(network_policy)
