"""Shared fixtures. Docker tests (marker `docker`) need a running engine and the base images;
they are skipped without one, unless FACTORY_REQUIRE_DOCKER=1 (CI), where that is a failure."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

# Task directories kept as fixtures carry their own tests/test_*.py (the task's verifier, run
# inside its container): never factory's tests.
collect_ignore_glob = ["fixtures/tb2_style/*"]

# A shell without job control starts background commands (`scripts/test.sh &`, nohup) with
# SIGINT ignored, children inherit that, and Python then never raises KeyboardInterrupt: the
# tests that press Ctrl-C on a `factory` subprocess would wait on a process that cannot hear it
# (seen as a "hang under load"). An ignored SIGINT is not what a user's terminal gives, so the
# suite restores it; a handler, unlike SIG_IGN, is reset to the default in exec'd children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
