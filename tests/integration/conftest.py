"""Docker-test fixtures: a runtime per test, and a session-wide leak check."""

from __future__ import annotations

import contextlib
import os
import uuid

import pytest

from factory.runtime import (
    KIND_TASK_IMAGE,
    LABEL_KIND,
    LABEL_MANAGED,
    LABEL_PID,
    LABEL_RUN,
    DockerRuntime,
    new_run_id,
    owner_alive,
)


@pytest.fixture
def runtime():
    rt = DockerRuntime(new_run_id("pytest"))
    yield rt
    rt.close()


RUN_PREFIX = f"pytest-{uuid.uuid4().hex[:6]}"
"""This session's run ids start with it (the engine may be shared with other sessions)."""


def _task_images(api) -> set[str]:
    """Task images built by this test session's processes (their run ids start with
    RUN_PREFIX)."""
    found = api.images(filters={"label": f"{LABEL_KIND}={KIND_TASK_IMAGE}"})
    return {
        i["Id"] for i in found if (i.get("Labels") or {}).get(LABEL_RUN, "").startswith(RUN_PREFIX)
    }


def _ours(labels: dict[str, str]) -> bool:
    run = labels.get(LABEL_RUN, "")
    return bool(run) and (
        labels.get(LABEL_PID) == str(os.getpid()) or run.startswith(f"{RUN_PREFIX}-")
    )


@pytest.fixture(scope="session", autouse=True)
def no_leaks(request):
    """After the docker tests: no factory container may remain, and the task images the tests
    built are removed (they are a cache, but a test run must not leave images behind)."""
    if not any(
        "docker" in item.keywords and not item.get_closest_marker("skip")
        for item in request.session.items
    ):
        yield
        return
    api = DockerRuntime("pytest-session").api
    os.environ["FACTORY_RUN_PREFIX"] = RUN_PREFIX  # subprocesses inherit it
    before = _task_images(api)
    yield
    # Ours: started by this process or by a run of this session. Containers of other live
    # processes (a concurrent `factory validate`) are not leaks; containers without a run label
    # inherited factory.managed from one of our images (an image build's step containers,
    # possibly another process's build in progress, which removing would break); and another
    # session on a shared engine (its own prefix) may have left its own behind.
    leaked = [
        c
        for c in api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"})
        if _ours(c.get("Labels") or {}) and not owner_alive(c.get("Labels") or {})
    ]
    for item in leaked:
        api.remove_container(item["Id"], force=True)
    for image_id in _task_images(api) - before:
        with contextlib.suppress(Exception):  # shared parents, already gone
            api.remove_image(image_id, force=True)
    assert not leaked, f"{len(leaked)} factory container(s) leaked: {[c['Names'] for c in leaked]}"
