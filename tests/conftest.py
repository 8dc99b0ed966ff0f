"""Shared fixtures. Docker tests (marker `docker`) need a running engine and the base images;
they are skipped without one, unless FACTORY_REQUIRE_DOCKER=1 (CI), where that is a failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def _docker_problem() -> str | None:
    try:
        from factory.runtime import DockerRuntime

        runtime = DockerRuntime("pytest-probe")
        runtime.ping()
        if not runtime.image_exists("factory/base:bookworm"):
            return "factory/base:bookworm is not built (run `factory images build`)"
    except Exception as exc:  # noqa: BLE001
        return f"no Docker engine: {exc}"
    return None


def pytest_collection_modifyitems(config, items):
    if not any("docker" in item.keywords for item in items):
        return
    problem = _docker_problem()
    if problem is None:
        return
    if os.environ.get("FACTORY_REQUIRE_DOCKER") == "1":
        raise pytest.UsageError(f"FACTORY_REQUIRE_DOCKER=1 but {problem}")
    skip = pytest.mark.skip(reason=problem)
    for item in items:
        if "docker" in item.keywords:
            item.add_marker(skip)
