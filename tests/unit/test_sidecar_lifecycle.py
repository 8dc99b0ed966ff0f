"""The runtime's side of multi-container tasks without Docker: a recording stand-in for the
engine shows the order things are made in (network, sidecars in order, then the task's
container on that network), that a failed start leaves nothing behind, and that closing the
container (or the whole run) removes the sidecars and then the network."""

from __future__ import annotations

import itertools
import time
from typing import Any

import docker
import pytest

from factory.errors import ContainerDiedError, EnvironmentUnhealthyError
from factory.runtime import ContainerSpec, DockerRuntime, ServiceSpec, compose_readiness
from factory.runtime.constants import KIND_TASK_NETWORK, LABEL_KIND, LABEL_SERVICE


class FakeApi:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine

    def create_network(self, name, **kwargs):
        self.engine.log.append(("network+", name))
        self.engine.networks[name] = kwargs

    def remove_network(self, name):
        attached = [c for c in self.engine.containers.values() if c["network"] == name]
        if attached:
            raise RuntimeError("network has active endpoints")
        self.engine.log.append(("network-", name))
        self.engine.networks.pop(name, None)

    def networks(self, filters=None):
        return [{"Name": n} for n in self.engine.networks]

    def create_endpoint_config(self, aliases=None):
        return {"Aliases": aliases}

    def remove_container(self, container_id, force=False, v=False):
        self.engine.log.append(("container-", self.engine.containers[container_id]["name"]))
        self.engine.containers.pop(container_id, None)

    def containers(self, all=False, filters=None):
        return [{"Id": i} for i in self.engine.containers]

    def inspect_image(self, image):
        return {"Config": {"Healthcheck": self.engine.image_checks.get(image)}}

    def inspect_container(self, container_id):
        running = container_id in self.engine.containers
        return {"State": {"Running": running, "ExitCode": 0 if running else 1}}

    def exec_create(self, container_id, command, **kwargs):
        name = self.engine.containers[container_id]["name"]
        self.engine.log.append(("exec", name))
        return {"Id": name}

    def exec_start(self, exec_id, stream=True, demux=False):
        return iter([b""])

    def exec_inspect(self, exec_id):
        return {"ExitCode": 1 if exec_id in self.engine.unhealthy else 0}

    def logs(self, container_id, tail=5):
        return b"listening on :6379\nready\n"

    def connect_container_to_network(self, container_id, network):
        self.engine.log.append(("connect", self.engine.containers[container_id]["name"], network))

    def wait(self, container_id, timeout=None):
        return {"StatusCode": 0}


class FakeContainer:
    def __init__(self, engine: FakeEngine, container_id: str) -> None:
        self.engine, self.id = engine, container_id

    def start(self):
        self.engine.log.append(("start", self.engine.containers[self.id]["name"]))


class FakeContainers:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine

    def create(self, image, **kwargs):
        container_id = f"c{next(self.engine.ids)}"
        name = kwargs["labels"].get(LABEL_SERVICE, "main")
        self.engine.containers[container_id] = {
            "name": name,
            "network": kwargs.get("network"),
            "kwargs": kwargs,
        }
        self.engine.log.append(("create", name, kwargs.get("network")))
        return FakeContainer(self.engine, container_id)


class FakeEngine:
    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.networks: dict[str, dict] = {}
        self.containers: dict[str, dict] = {}
        self.ids = itertools.count(1)
        self.unhealthy: set[str] = set()
        self.image_checks: dict[str, dict] = {}
        self.api = FakeApi(self)
        self.containers_api = FakeContainers(self)


@pytest.fixture
def engine(monkeypatch):
    fake = FakeEngine()
    runtime = DockerRuntime("run-test")
    runtime._client = type("Client", (), {"api": fake.api, "containers": fake.containers_api})()
    runtime._ncpu = 4
    runtime._bridges_protected = True  # no iptables here
    monkeypatch.setattr(DockerRuntime, "container_network", lambda self: "factory-net")
    fake.runtime = runtime
    yield fake
    runtime.close()


def _spec(*services: ServiceSpec, network: bool = False) -> ContainerSpec:
    return ContainerSpec(
        image="main-image", task_id="t", harness=False, network=network, services=services
    )


def _settle(engine: FakeEngine, limit: float = 5.0) -> None:
    """Until the reaper has removed everything."""
    deadline = time.monotonic() + limit
    while (engine.containers or engine.networks) and time.monotonic() < deadline:
        time.sleep(0.02)


def test_network_then_sidecars_in_order_then_main(engine):
    engine.image_checks["redis-image"] = {"Test": ["CMD-SHELL", "redis-cli ping"], "Retries": 3}
    box = engine.runtime.start(
        _spec(
            ServiceSpec("db", "redis-image", memory_mb=128, cpus=0.5, pids_limit=64),
            ServiceSpec("web", "web-image"),
            network=True,
        )
    )
    (network,) = engine.networks
    options = engine.networks[network]
    assert options["internal"] is True
    assert options["options"]["com.docker.network.bridge.inhibit_ipv4"] == "true"
    assert options["labels"][LABEL_KIND] == KIND_TASK_NETWORK
    assert network.startswith("fxm") and len(network) == 15  # a Linux interface name
    steps = [step for step in engine.log if step[0] != "exec"]
    assert steps == [
        ("network+", network),
        ("create", "db", network),
        ("start", "db"),
        ("create", "web", network),
        ("start", "web"),
        ("create", "main", network),
        ("connect", "main", "factory-net"),
        ("start", "main"),
    ]
    assert ("exec", "db") in engine.log  # the image's HEALTHCHECK ran before web started
    db = next(c for c in engine.containers.values() if c["name"] == "db")["kwargs"]
    assert (db["mem_limit"], db["memswap_limit"], db["pids_limit"]) == ("128m", "128m", 64)
    assert db["nano_cpus"] == 500_000_000 and db["privileged"] is False
    assert db["security_opt"] == ["no-new-privileges"] and "mounts" not in db
    assert db["networking_config"] == {network: {"Aliases": ["db"]}}
    main = next(c for c in engine.containers.values() if c["name"] == "main")["kwargs"]
    assert main["networking_config"] == {network: {"Aliases": ["main"]}}
    assert box.network == network and box.owns_network and len(box.sidecars) == 2
    box.close()
    _settle(engine)
    removed = [step for step in engine.log if step[0].endswith("-")]
    assert removed == [
        ("container-", "main"),
        ("container-", "db"),
        ("container-", "web"),
        ("network-", network),
    ]


def test_an_unhealthy_sidecar_stops_the_start_and_leaves_nothing(engine):
    engine.unhealthy.add("db")
    spec = _spec(
        ServiceSpec("cache", "cache-image"),
        ServiceSpec(
            "db",
            "db-image",
            readiness=compose_readiness("pg_isready", 0.1, 0.1, 2, 0.0),
        ),
        ServiceSpec("web", "web-image"),
    )
    with pytest.raises(EnvironmentUnhealthyError) as info:
        engine.runtime.start(spec)
    message = str(info.value)
    assert (
        message.startswith("sidecar 'db'")
        and "its last output: listening on :6379 | ready" in message
    )
    assert engine.containers == {} and engine.networks == {}
    assert not any(step[:2] == ("create", "web") for step in engine.log)


def test_a_main_that_cannot_start_takes_its_sidecars_and_network_along(engine, monkeypatch):
    original = FakeContainers.create

    def create(self, image, **kwargs):
        if LABEL_SERVICE not in kwargs["labels"]:
            raise docker.errors.APIError("no such image")
        return original(self, image, **kwargs)

    monkeypatch.setattr(FakeContainers, "create", create)
    with pytest.raises(ContainerDiedError):
        engine.runtime.start(_spec(ServiceSpec("db", "db-image")))
    _settle(engine)
    assert engine.containers == {} and engine.networks == {}


def test_joining_makes_no_network_and_removes_none(engine):
    engine.runtime.create_task_network("t")
    (network,) = engine.networks
    box = engine.runtime.start(
        ContainerSpec(image="main-image", task_id="t", harness=False, join=network)
    )
    main = engine.containers[box.id]["kwargs"]
    assert main["networking_config"] == {network: {"Aliases": None}}  # not a second `main`
    assert box.sidecars == [] and not box.owns_network
    box.close()
    deadline = time.monotonic() + 5
    while engine.containers and time.monotonic() < deadline:
        time.sleep(0.02)
    assert engine.containers == {} and list(engine.networks) == [network]


def test_closing_the_run_removes_live_groups(engine):
    engine.runtime.start(_spec(ServiceSpec("db", "db-image")))
    engine.runtime.start(_spec(ServiceSpec("db", "db-image")))
    assert len(engine.networks) == 2 and len(engine.containers) == 4
    engine.runtime.close()
    assert engine.containers == {} and engine.networks == {}
