"""What killed runs left behind (containers, build leftovers, root filesystem imports, build
leases, build cgroups), removed without touching what live runs use."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from factory.build_cgroup import remove_stale_build_cgroups
from factory.processes import pid_alive
from factory.runtime.client import docker_sdk
from factory.runtime.constants import (
    KIND_BUILD_LEASE,
    KIND_CONTAINER,
    KIND_ROOTFS,
    KIND_TASK_IMAGE,
    KIND_TASK_NETWORK,
    LABEL_HOST,
    LABEL_KIND,
    LABEL_MANAGED,
    LABEL_PID,
    LABEL_RUN,
)
from factory.runtime.engine import DockerRuntime


@dataclass
class GcReport:
    containers: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    skipped_live: list[str] = field(default_factory=list)
    leases: list[str] = field(default_factory=list)
    """Build leases of dead runs that were removed."""
    cgroups: int = 0
    """Empty build cgroups of dead factory processes that were removed."""
    networks: list[str] = field(default_factory=list)
    """Task networks (of multi-container tasks) of dead runs that were removed."""


def owner_alive(labels: Mapping[str, str]) -> bool:
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False
    try:
        pid = int(labels.get(LABEL_PID, "0"))
    except ValueError:
        return False
    return pid != os.getpid() and pid_alive(pid)


@dataclass
class _Lease:
    name: str
    labels: dict[str, str]
    created: float
    """Engine time (unix seconds) the build started."""

    @property
    def run(self) -> str:
        return self.labels.get(LABEL_RUN, "")


def _build_leases(api) -> list[_Lease]:
    found = api.volumes(filters={"label": f"{LABEL_KIND}={KIND_BUILD_LEASE}"}) or {}
    leases = []
    for volume in found.get("Volumes") or []:
        try:
            created = datetime.fromisoformat(volume["CreatedAt"].replace("Z", "+00:00"))
        except (KeyError, ValueError):
            continue
        leases.append(_Lease(volume["Name"], volume.get("Labels") or {}, created.timestamp()))
    return leases


class _BuildOwnership:
    """Which run an unlabelled build leftover (an intermediate image or step container)
    belongs to: the leases that were open when it was created."""

    SLACK_SEC = 2.0

    def __init__(self, leases: list[_Lease], *, force: bool) -> None:
        self.live = [lease for lease in leases if not force and owner_alive(lease.labels)]
        self.dead = [lease for lease in leases if lease not in self.live]

    def in_use(self, created: float) -> bool:
        """Made after a live build started: that build may still need it."""
        return any(created >= lease.created - self.SLACK_SEC for lease in self.live)

    def of_run(self, created: float, run_id: str) -> bool:
        """Made after ``run_id`` (which died) started building."""
        return any(
            lease.run == run_id and created >= lease.created - self.SLACK_SEC for lease in self.dead
        )


def collect_garbage(
    runtime: DockerRuntime,
    *,
    run_id: str | None = None,
    task_images: bool = False,
    force: bool = False,
) -> GcReport:
    """Remove what killed runs left behind, and nothing a live run is using.

    * containers labelled ``factory.managed`` whose owning process is gone (all with ``force``),
      sidecars included, and then the task networks of those runs;
    * stopped build-step containers and dangling (untagged) images of interrupted builds,
      except those made after a live run began a build (its build lease); with ``run_id``,
      only those made while that run was building;
    * root filesystem imports of `factory images build` runs that are gone;
    * the build leases and (local engine, as root) empty build cgroups of dead processes;
    * with ``task_images``: the cached task images too (they are rebuilt on demand).
    """
    docker = docker_sdk()
    api = runtime.api
    report = GcReport()
    leases = _build_leases(api)
    builds = _BuildOwnership(leases, force=force)

    def leftover_of_dead_build(created: float) -> bool:
        if builds.in_use(created):
            return False
        return builds.of_run(created, run_id) if run_id else True

    label_filter = [f"{LABEL_MANAGED}=1"] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])
    for item in api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"}):
        labels = item.get("Labels") or {}
        if labels.get(LABEL_KIND) != KIND_CONTAINER or LABEL_PID not in labels:
            # Not started by a run (those are labelled kind=container with their owner's
            # pid): a build step's container, with the labels of the image it runs (a base
            # image keeps the pid and run of the process that imported its root filesystem,
            # so those say nothing about the build). Only a stopped one (an interrupted
            # build's) is garbage, and only once no live build can be using it.
            if item.get("State") == "running" or not leftover_of_dead_build(item["Created"]):
                continue
        elif run_id and labels.get(LABEL_RUN) != run_id:
            continue
        elif not force and owner_alive(labels):
            report.skipped_live.append(item["Id"][:12])
            continue
        try:
            api.remove_container(item["Id"], force=True, v=True)
            report.containers.append(item["Id"][:12])
        except docker.errors.APIError:
            pass
    for item in api.networks(filters={"label": f"{LABEL_KIND}={KIND_TASK_NETWORK}"}):
        labels = item.get("Labels") or {}
        if run_id and labels.get(LABEL_RUN) != run_id:
            continue
        if not force and owner_alive(labels):
            continue
        if runtime.remove_network(item["Name"], attempts=2):  # its containers went above
            report.networks.append(item["Name"])
    for item in api.images(filters={"label": f"{LABEL_KIND}={KIND_ROOTFS}"}):
        labels = item.get("Labels") or {}
        if run_id and labels.get(LABEL_RUN) != run_id:
            continue
        if not force and owner_alive(labels):  # a live `factory images build` imported it
            continue
        for tag in item.get("RepoTags") or []:
            if runtime.remove_image(tag):
                report.images.append(tag)
    for item in api.images(filters={"dangling": True, "label": f"{LABEL_MANAGED}=1"}):
        if not leftover_of_dead_build(item.get("Created", 0)):
            continue
        try:
            api.remove_image(item["Id"], force=False)
            report.images.append(item["Id"].split(":")[-1][:12])
        except docker.errors.APIError:
            pass
    if task_images:
        filters = {"label": [f"{LABEL_KIND}={KIND_TASK_IMAGE}"] + label_filter[1:]}
        for item in api.images(filters=filters):
            for tag in item.get("RepoTags") or [item["Id"]]:
                runtime.remove_image(tag, force=False)
            report.images.append(item["Id"].split(":")[-1][:12])
    for lease in builds.dead:
        if run_id and lease.run != run_id:
            continue
        try:
            api.remove_volume(lease.name, force=True)
            report.leases.append(lease.name)
        except docker.errors.APIError:
            pass
    if runtime.engine_is_local() and os.geteuid() == 0:
        report.cgroups = remove_stale_build_cgroups()
    return report


def engine_summary(runtime: DockerRuntime) -> dict[str, Any]:
    info = runtime.api.info()
    return {k: info.get(k) for k in ("ServerVersion", "NCPU", "MemTotal", "Driver")}
