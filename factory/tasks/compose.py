"""A task's ``environment/docker-compose.yaml``: its sidecar services, parsed and checked.

Harbor (0.26, ``--env docker``) starts a task whose environment has a ``docker-compose.yaml`` as
``docker compose up --wait`` over three files: its own base (the ``main`` service: logs mounts,
CPU and memory limits), its build file (``main`` built from ``environment/`` with the task's
Dockerfile, kept alive with ``sleep infinity``) and the task's file last, which adds services and
overrides ``main``. Paths in the task's file are relative to ``environment/``, and
``${MAIN_IMAGE_NAME}``, ``${CONTEXT_DIR}``, ``${CPUS}``, ``${MEMORY}``, the log paths and the
task's ``[environment.env]`` are the variables it may use. The agent and the verifier run in
``main``; every other service is a *sidecar* (a database, an API, an MCP server), reached by its
service name.

factory runs the same files without Compose (:mod:`factory.runtime` starts each sidecar with the
sandbox's limits on a network of the task's own with no route to the host or anywhere else), so
what a sidecar may ask for is the part of Compose that fits that sandbox: an image (local, or
built from a Dockerfile under ``environment/``), its command, environment, working directory and
user, a healthcheck, ``depends_on`` (with its conditions) and resource limits. What does not
fit is refused here, before anything is built, with the file and the field: published ports,
privileged mode, capabilities, devices, host networks and namespaces, volumes (bind mounts of
host paths, named volumes), env files, and anything unknown. Keys that only matter to Compose
itself (``container_name``, ``restart``, ``expose``, ``networks`` of the bridge kind, logging,
labels) are accepted and have no effect; each one used is recorded in the notes.

A Terminal-Bench 1 compose file (agent service ``client``) is parsed by the same function with
``main="client"`` and TB1's variables; :mod:`factory.importers.tb1` rewrites it into Harbor's
form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.errors import TaskFormatError
from factory.inputs import load_yaml_file
from factory.tasks.compose_values import (
    ComposeSource,
    ServiceHealthcheck,
    interpolate,
    parse_build,
    parse_command,
    parse_depends_on,
    parse_env,
    parse_healthcheck,
    parse_limits,
)

COMPOSE_NAMES = ("docker-compose.yaml", "docker-compose.yml")
HARBOR_MAIN = "main"
MAX_SIDECARS = 8
"""More services than this in one task is refused (each is a container per phase)."""
DEFAULT_SIDECAR_MEMORY_MB = 512
DEFAULT_SIDECAR_CPUS = 1.0
DEFAULT_SIDECAR_PIDS = 256

_SERVICE_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$")

# What a service may say, by what factory does with it.
_IGNORED_KEYS = {
    "container_name": "factory names its containers itself",
    "restart": "a sidecar lives as long as its phase",
    "expose": "every port of a sidecar is open to the task's other services",
    "networks": "every service of a task is on the task's own network",
    "hostname": "a sidecar's host name is its service name",
    "labels": "factory labels its containers itself",
    "logging": "factory keeps no sidecar logs",
    "stop_grace_period": "sidecars are removed at once when the phase ends",
    "stop_signal": "sidecars are removed at once when the phase ends",
    "tty": "sidecars have no terminal",
    "stdin_open": "sidecars have no terminal",
    "platform": "images run on the engine's platform",
    "pull_policy": "nothing is pulled here",
    "init": "factory runs every container with an init process",
    "ulimits": "factory's own limits apply",
    "shm_size": "factory's own limits apply",
    "dns": "sidecars resolve the task's service names only",
    "domainname": "sidecars resolve the task's service names only",
}
_REFUSED_KEYS = {
    "ports": "publishes ports on the host; services reach each other by name on the task's "
    "network, so drop it (use `expose` or nothing)",
    "privileged": "privileged containers are not allowed",
    "cap_add": "extra capabilities are not allowed",
    "devices": "host devices are not allowed",
    "device_cgroup_rules": "host devices are not allowed",
    "gpus": "sidecars get no GPUs (set environment.gpus for main)",
    "runtime": "only the engine's default runtime is used",
    "network_mode": "a service cannot leave the task's network (host networks and other "
    "containers' namespaces are not allowed)",
    "pid": "host and shared process namespaces are not allowed",
    "ipc": "host and shared IPC namespaces are not allowed",
    "uts": "the host's UTS namespace is not allowed",
    "userns_mode": "the host's user namespace is not allowed",
    "cgroup": "the host's cgroup namespace is not allowed",
    "cgroup_parent": "factory places containers in its own cgroups",
    "security_opt": "factory sets the security options itself",
    "sysctls": "kernel parameters cannot be changed",
    "extra_hosts": "host entries (host-gateway) would point at the host",
    "links": "services reach each other by name; drop it",
    "external_links": "containers outside the task cannot be reached",
    "volumes": "volumes (host paths and named volumes) are not supported; COPY the files in "
    "the service's Dockerfile",
    "volumes_from": "volumes are not supported",
    "tmpfs": "mounts are not supported",
    "env_file": "env files are not supported; list the variables under `environment`",
    "configs": "configs are not supported; COPY the files in the service's Dockerfile",
    "secrets": "secrets are not supported; COPY the files in the service's Dockerfile",
    "extends": "extends is not supported; write the service out",
    "profiles": "profiles are not supported",
    "scale": "one container per service",
    "oom_kill_disable": "factory's own limits apply",
    "oom_score_adj": "factory's own limits apply",
    "storage_opt": "factory's own limits apply",
    "isolation": "factory's own isolation applies",
    "mac_address": "addresses are assigned by the task's network",
    "develop": "not supported",
    "post_start": "not supported",
    "pre_stop": "not supported",
}
_SUPPORTED_KEYS = {
    "build",
    "image",
    "command",
    "entrypoint",
    "environment",
    "healthcheck",
    "depends_on",
    "deploy",
    "working_dir",
    "user",
    "mem_limit",
    "memswap_limit",
    "cpus",
    "pids_limit",
}
_TOP_IGNORED = {"version", "name"}
_TOP_REFUSED = {
    "volumes": "named volumes are not supported; COPY the files in the service's Dockerfile",
    "configs": "configs are not supported",
    "secrets": "secrets are not supported",
    "include": "include is not supported; write the services out in this file",
}


@dataclass(frozen=True)
class Sidecar:
    """One service besides ``main``."""

    name: str
    build_context: str | None = None
    """Folder of its build, relative to ``environment/`` (posix); None: ``image`` is used."""
    dockerfile: str = "Dockerfile"
    """Relative to the build context."""
    image: str | None = None
    """A local image (or one the alias table maps to a local one) when it is not built."""
    command: tuple[str, ...] | None = None
    entrypoint: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str | None = None
    user: str | None = None
    healthcheck: ServiceHealthcheck | None = None
    healthcheck_disabled: bool = False
    """``healthcheck: {disable: true}``: not even the image's HEALTHCHECK is run."""
    depends_on: Mapping[str, str] = field(default_factory=dict)
    """Service -> condition (``service_started``, ``service_healthy``,
    ``service_completed_successfully``)."""
    cpus: float | None = None
    memory_mb: int | None = None
    pids_limit: int | None = None


@dataclass(frozen=True)
class ComposeEnvironment:
    """What a task's compose file adds to its environment."""

    path: Path
    main: str = HARBOR_MAIN
    """The agent's service (Harbor: ``main``; Terminal-Bench 1: ``client``)."""
    sidecars: tuple[Sidecar, ...] = ()
    """In start order: every service after those it depends on."""
    main_env: Mapping[str, str] = field(default_factory=dict)
    """``environment`` of the main service (applied over ``[environment.env]``)."""
    main_depends_on: Mapping[str, str] = field(default_factory=dict)
    main_healthcheck: ServiceHealthcheck | None = None
    notes: tuple[str, ...] = ()

    def sidecar(self, name: str) -> Sidecar:
        return next(s for s in self.sidecars if s.name == name)


def find_compose_file(environment_dir: Path) -> Path | None:
    for name in COMPOSE_NAMES:
        if (environment_dir / name).is_file():
            return environment_dir / name
    return None


def harbor_variables(env: Mapping[str, str], *, cpus: float, memory_mb: int) -> dict[str, str]:
    """The variables Harbor's Docker environment sets for a task's compose file (the log
    paths are its container-side ones: factory mounts nothing from the host)."""
    return {
        "MAIN_IMAGE_NAME": "main",
        "CONTEXT_DIR": ".",
        "ENV_VERIFIER_LOGS_PATH": "/logs/verifier",
        "ENV_AGENT_LOGS_PATH": "/logs/agent",
        "ENV_ARTIFACTS_PATH": "/logs/artifacts",
        "CPUS": f"{cpus:g}",
        "MEMORY": f"{memory_mb}M",
        **dict(env),
    }


def _check_keys(
    service: dict[str, Any], where: ComposeSource, at: str, notes: list[str], allowed: set[str]
) -> None:
    for key in service:
        if key in _REFUSED_KEYS:
            raise where.error(f"{at}.{key}", _REFUSED_KEYS[key])
        if key in _IGNORED_KEYS:
            notes.append(f"{at}.{key} has no effect: {_IGNORED_KEYS[key]}")
        elif key not in allowed and not str(key).startswith("x-"):
            raise where.error(f"{at}.{key}", "not supported by factory")


def _sidecar(
    name: str,
    service: dict[str, Any],
    where: ComposeSource,
    notes: list[str],
    environment_dir: Path,
) -> Sidecar:
    at = f"services.{name}"
    _check_keys(service, where, at, notes, _SUPPORTED_KEYS)
    if "memswap_limit" in service:
        notes.append(f"{at}.memswap_limit has no effect: swap is always off")
    context = dockerfile = None
    if service.get("build") is not None:
        context, dockerfile = parse_build(service["build"], where, f"{at}.build", environment_dir)
    image = service.get("image")
    if image is not None and not isinstance(image, str):
        raise where.error(f"{at}.image", "must be a string")
    if context is None and not image:
        raise where.error(at, "needs `build` (a Dockerfile under environment/) or `image`")
    if context is not None:
        image = None  # Compose tags the build with it; here builds get content-hash tags
    healthcheck, disabled = parse_healthcheck(
        service.get("healthcheck"), where, f"{at}.healthcheck"
    )
    cpus, memory_mb, pids = parse_limits(service, where, at)
    for key in ("working_dir", "user"):
        if service.get(key) is not None and not isinstance(service[key], str | int):
            raise where.error(f"{at}.{key}", "must be a string")
    return Sidecar(
        name=name,
        build_context=context,
        dockerfile=dockerfile or "Dockerfile",
        image=image,
        command=parse_command(service.get("command"), where, f"{at}.command"),
        entrypoint=parse_command(service.get("entrypoint"), where, f"{at}.entrypoint"),
        env=parse_env(service.get("environment"), where, f"{at}.environment"),
        workdir=str(service["working_dir"]) if service.get("working_dir") is not None else None,
        user=str(service["user"]) if service.get("user") is not None else None,
        healthcheck=healthcheck,
        healthcheck_disabled=disabled,
        depends_on=parse_depends_on(service.get("depends_on"), where, f"{at}.depends_on"),
        cpus=cpus,
        memory_mb=memory_mb,
        pids_limit=pids,
    )


def _start_order(sidecars: dict[str, Sidecar], main: str, where: ComposeSource) -> list[Sidecar]:
    """Sidecars after the services they depend on; a cycle or an unknown name is refused."""
    order: list[Sidecar] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            cycle = " -> ".join([*path[path.index(name) :], name])
            raise where.error(f"services.{name}.depends_on", f"a dependency cycle: {cycle}")
        state[name] = "visiting"
        for dep in sidecars[name].depends_on:
            if dep == main:
                raise where.error(
                    f"services.{name}.depends_on.{dep}",
                    f"a sidecar cannot wait for '{main}' (the agent's container starts last)",
                )
            if dep not in sidecars:
                raise where.error(f"services.{name}.depends_on.{dep}", "no such service")
            visit(dep, [*path, name])
        state[name] = "done"
        order.append(sidecars[name])

    for name in sorted(sidecars):
        visit(name, [])
    return order


def parse_compose(
    path: Path,
    *,
    environment_dir: Path | None = None,
    main: str = HARBOR_MAIN,
    variables: Mapping[str, str] | None = None,
    main_ignored: frozenset[str] = frozenset(),
    closed: bool = True,
) -> ComposeEnvironment:
    """Parse and check a compose file (see the module docstring); errors name the file and
    the field. ``environment_dir`` (default: the file's folder) is what build contexts are
    relative to; ``main_ignored`` are keys of the main service a caller handles itself.
    ``closed`` (Harbor's form, which ``docker compose`` interpolates again with its own
    process's environment): a variable outside ``variables`` and an environment entry without
    a value are refused, as they would carry the host's values (API keys) into the task;
    an importer whose output escapes every ``$`` passes False."""
    where = ComposeSource(path, closed)
    environment_dir = environment_dir or path.parent
    data = load_yaml_file(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TaskFormatError(path, "must be a mapping with `services`")
    notes: list[str] = []
    for key in data:
        if key in _TOP_REFUSED:
            raise where.error(str(key), _TOP_REFUSED[key])
        if key not in ("services", "networks", *_TOP_IGNORED) and not str(key).startswith("x-"):
            raise where.error(str(key), "not supported by factory")
    _check_networks(data.get("networks"), where)
    data = interpolate(data, variables or {}, where, "")
    services = data.get("services")
    if services is None:
        services = {}
    if not isinstance(services, dict):
        raise where.error("services", "must be a mapping of service names to services")
    sidecars: dict[str, Sidecar] = {}
    main_service: dict[str, Any] = {}
    for raw_name, service in services.items():
        name = str(raw_name)
        if service is None:
            service = {}
        if not isinstance(service, dict):
            raise where.error(f"services.{name}", "must be a mapping")
        if name == main:
            main_service = service
            continue
        if not _SERVICE_NAME.match(name):
            raise where.error(f"services.{name}", "not a valid service name")
        sidecars[name] = _sidecar(name, service, where, notes, environment_dir)
    if len(sidecars) > MAX_SIDECARS:
        raise where.error(
            "services", f"{len(sidecars)} services besides '{main}' (at most {MAX_SIDECARS})"
        )
    at = f"services.{main}"
    main_keys = {
        "environment",
        "depends_on",
        "healthcheck",
        "build",
        "image",
        "command",
        "deploy",
        "cpus",
        "mem_limit",
        "working_dir",
    } | set(main_ignored)
    _check_keys(
        {k: v for k, v in main_service.items() if k not in main_ignored},
        where,
        at,
        notes,
        main_keys,
    )
    for key, why in (
        ("build", "main is built from environment/Dockerfile"),
        ("image", "main runs the task's image"),
        ("command", "factory keeps main alive with its own command, as Harbor does"),
        ("deploy", "main's limits are task.toml's [environment]"),
        ("cpus", "main's limits are task.toml's [environment]"),
        ("mem_limit", "main's limits are task.toml's [environment]"),
        ("working_dir", "main's working directory is task.toml's environment.workdir"),
    ):
        if key in main_service and key not in main_ignored:
            notes.append(f"{at}.{key} has no effect: {why}")
    build = main_service.get("build")
    if build is not None and "build" not in main_ignored:
        context, dockerfile = parse_build(build, where, f"{at}.build", environment_dir)
        if (context, dockerfile) != (".", "Dockerfile"):
            raise where.error(
                f"{at}.build",
                "main is built from environment/Dockerfile (its context is environment/); "
                "move the Dockerfile there",
            )
    main_check, _ = parse_healthcheck(main_service.get("healthcheck"), where, f"{at}.healthcheck")
    main_depends = parse_depends_on(main_service.get("depends_on"), where, f"{at}.depends_on")
    for dep in main_depends:
        if dep not in sidecars:
            raise where.error(f"{at}.depends_on.{dep}", "no such service")
    ordered = _start_order(sidecars, main, where)
    for service in [*ordered, None]:
        wants = main_depends if service is None else service.depends_on
        owner = main if service is None else service.name
        for dep, condition in wants.items():
            target = sidecars[dep]
            if condition == "service_healthy" and target.healthcheck_disabled:
                raise where.error(
                    f"services.{owner}.depends_on.{dep}.condition",
                    f"'{dep}' has its healthcheck disabled, so it never becomes healthy",
                )
    return ComposeEnvironment(
        path=path,
        main=main,
        sidecars=tuple(ordered),
        main_env=parse_env(main_service.get("environment"), where, f"{at}.environment"),
        main_depends_on=main_depends,
        main_healthcheck=main_check,
        notes=tuple(notes),
    )


def _check_networks(networks: Any, where: ComposeSource) -> None:
    """Top-level ``networks``: bridge networks are fine (the task gets one network of its own
    for all its services); external ones, host, named ones and driver options are refused."""
    if networks is None:
        return
    if not isinstance(networks, dict):
        raise where.error("networks", "must be a mapping of network names")
    for name, spec in networks.items():
        spec = spec or {}
        if not isinstance(spec, dict):
            raise where.error(f"networks.{name}", "must be a mapping")
        if spec.get("external"):
            raise where.error(
                f"networks.{name}.external", "networks outside the task are not allowed"
            )
        driver = spec.get("driver", "bridge")
        if driver != "bridge":
            raise where.error(
                f"networks.{name}.driver",
                f"'{driver}' networks are not "
                "allowed (every task gets one bridge network of its own)",
            )
        if "name" in spec:  # Compose joins an existing network of that name (with a warning)
            raise where.error(
                f"networks.{name}.name",
                "a network name could join a network outside the task under Harbor (Docker's "
                "`bridge`, another trial's); drop it (the task's network needs none)",
            )
        for key in spec:
            if key not in ("driver", "internal", "attachable", "labels"):
                raise where.error(f"networks.{name}.{key}", "not supported by factory")


def sidecar_limits(
    sidecar: Sidecar, *, cpus: float, memory_mb: int, pids: int
) -> tuple[float, int, int]:
    """A sidecar's (cpus, memory MB, pids): what its compose entry asks for, else factory's
    defaults, and never more than the task's own container gets (``cpus``, ``memory_mb``,
    ``pids``)."""
    return (
        min(sidecar.cpus or DEFAULT_SIDECAR_CPUS, cpus),
        min(sidecar.memory_mb or DEFAULT_SIDECAR_MEMORY_MB, memory_mb),
        min(sidecar.pids_limit or DEFAULT_SIDECAR_PIDS, pids),
    )
