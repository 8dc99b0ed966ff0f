"""`--executor ray` on a real Ray cluster: a head and a worker node started with `ray start` on
loopback (each with one docker_slot), both using this machine's Docker engine.

Skipped when Ray is not installed, unless FACTORY_REQUIRE_RAY=1 (CI installs the `ray` extra
through scripts/setup.sh --full, so there the skip is a failure).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from fixtures.generate_cli import perms_taxonomy
from fixtures.validate_runs import signal_when_started, start_validate

from factory.distributed import ray_installed
from factory.tasks.model import discover_task_dirs
from factory.validate.validator import Validator

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

if not ray_installed():
    if os.environ.get("FACTORY_REQUIRE_RAY") == "1":
        raise RuntimeError("FACTORY_REQUIRE_RAY=1 but ray is not installed (pip install '.[ray]')")
    pytest.skip(
        "ray is not installed (pip install -e '.[ray]'; FACTORY_REQUIRE_RAY=1 makes this fail)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def ray_cluster():
    from factory.distributed.localcluster import LocalRayCluster

    cluster = LocalRayCluster(workers=1, slots=1)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        assert not cluster.alive(), "Ray processes outlived the test"


def factory_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "factory", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
    )


def three_tasks() -> list[Path]:
    return discover_task_dirs([EXAMPLES / "tasks"])[:3]


def test_validate_on_a_two_node_cluster_matches_local(ray_cluster, runtime, tmp_path):
    dirs = three_tasks()
    local = Validator(runtime, tmp_path / "local", jobs=2).run(dirs)
    expected = {t.path: t.outcome.value for t in local.tasks}
    assert len(expected) == 3

    out = tmp_path / "ray"
    done = factory_cli(
        "validate",
        *map(str, dirs),
        "--out",
        str(out),
        "--executor",
        "ray",
        "--ray-address",
        ray_cluster.address,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 node(s), 2 docker_slots" in done.stderr
    report = json.loads((out / "validation.json").read_text())
    assert {t["path"]: t["outcome"] for t in report["tasks"]} == expected
    assert report["summary"] == local.summary

    from factory.distributed.ray_executor import node_of
    from factory.validate.outcome import TaskValidation

    verdicts = [TaskValidation.model_validate(t) for t in report["tasks"]]
    nodes = {node_of(v) for v in verdicts}
    assert None not in nodes
    assert len(nodes) == 2, f"both nodes should get work (one slot each): {nodes}"
    for verdict in verdicts:
        # Logs came back from the nodes, to where the local executor puts them.
        assert Path(verdict.logs["build"]).is_file()
        assert (Path(verdict.logs["oracle-1"]) / "test.log").is_file()
        assert str(out) in verdict.logs["nop-1"]
        assert verdict.timings["dispatch"] >= 0

    # Resume works the same: nothing is sent to the cluster again.
    again = factory_cli(
        "validate", *map(str, dirs), "--out", str(out), "--executor", "ray",
        "--ray-address", ray_cluster.address,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    report = json.loads((out / "validation.json").read_text())
    assert all(t["resumed"] for t in report["tasks"])


def _containers_of(prefix: str) -> list[str]:
    from factory.runtime import LABEL_MANAGED, LABEL_RUN, DockerRuntime

    api = DockerRuntime("pytest-probe").api
    return [
        c["Id"]
        for c in api.containers(all=True, filters={"label": f"{LABEL_MANAGED}=1"})
        if (c.get("Labels") or {}).get(LABEL_RUN, "").startswith(prefix)
    ]


def test_ctrl_c_cancels_the_ray_tasks_and_leaves_no_container(ray_cluster, tmp_path):
    prefix = f"pytest-raycancel-{uuid.uuid4().hex[:6]}"
    proc = start_validate(
        three_tasks(),
        tmp_path / "out",
        *("--executor", "ray", "--ray-address", ray_cluster.address, "--force"),
        stderr=subprocess.PIPE,
        env={**os.environ, "FACTORY_RUN_PREFIX": prefix},
    )

    def started() -> None:
        deadline = time.monotonic() + 90
        while not _containers_of(prefix):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no task container started"
            time.sleep(0.2)

    _, stderr = signal_when_started(proc, started)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    deadline = time.monotonic() + 30
    while _containers_of(prefix) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _containers_of(prefix), "containers of the cancelled run remain"


def test_generate_certifies_on_the_cluster_like_local(ray_cluster, tmp_path):
    taxonomy = tmp_path / "taxonomy.yaml"
    taxonomy.write_text(perms_taxonomy("ray-suite"))
    suites = {}
    for name, extra in {
        "local": [],
        "ray": ["--executor", "ray", "--ray-address", ray_cluster.address],
    }.items():
        out = tmp_path / name
        done = factory_cli("generate", str(taxonomy), "--out", str(out), "--jobs", "2", *extra)
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        suites[name] = json.loads((out / "suite.json").read_text())
    picked = [
        {(t["id"], t["content_hash"], t["verifier_strength"]) for t in suites[name]["tasks"]}
        for name in ("local", "ray")
    ]
    assert picked[0] == picked[1] and len(picked[0]) == 2
    logs = tmp_path / "ray" / "validation" / "logs" / "files-perms-000"
    assert (logs / "oracle-1" / "test.log").is_file()
    assert any(p.name.startswith("mutation-") for p in logs.iterdir())


class ScriptedEngine:
    """A rollout engine without a model: episode i replies with SCRIPTS[group], then DONE."""

    SCRIPTS = {0: "echo 42 > /app/answer.txt", 1: "echo 41 > /app/answer.txt"}

    def __init__(self) -> None:
        self.batches: list[int] = []

    def run(self, episodes, groups):
        self.batches.append(len(episodes))
        for episode in episodes:
            episode.start()
        for episode, group in zip(episodes, groups, strict=True):
            episode.observe(f"```bash\n{self.SCRIPTS[group]}\n```")
            episode.observe("DONE")
        return [(e.finish(), g) for e, g in zip(episodes, groups, strict=True)], {"turns": 2.0}

    def close(self) -> None:
        pass


def test_episode_containers_run_on_the_nodes(ray_cluster, tmp_path):
    from factory.agent.harness import Episode, HarnessConfig
    from factory.distributed import ExecutorKind, ExecutorOptions
    from factory.distributed.cluster import RayCluster
    from factory.distributed.episodes import HostPool, RayEpisodes
    from factory.runtime import new_run_id
    from factory.tasks.model import load_task

    task = load_task(EXAMPLES / "broken" / "fails-with-solution")
    options = ExecutorOptions(ExecutorKind.RAY, ray_cluster.address)
    run_id = new_run_id("episodes")
    cluster = RayCluster(options, run_id=run_id)
    try:
        pool = HostPool(cluster, HarnessConfig())
        try:
            nodes = {n["node_id"] for n in cluster.ray.get([h.node.remote() for h in pool.hosts])}
            assert len(nodes) == 2  # one host per slot, one slot per node
            engine = ScriptedEngine()
            local = [Episode(None, task, "", HarnessConfig(), tmp_path) for _ in range(4)]
            rollouts, stats = RayEpisodes(engine, pool).run(local, [0, 1, 0, 1])
        finally:
            pool.close()
    finally:
        cluster.shutdown()
    assert engine.batches == [2, 2]  # at most one live episode per slot
    assert [(r.reward, r.infra_error) for r, _ in rollouts] == [(1.0, None), (0.0, None)] * 2
    assert stats == {"turns": 4.0}
    result = rollouts[0][0]
    assert result.turns == 1 and result.verifier is not None and result.verifier.reward == 1.0
    assert [m["role"] for m in result.transcript] == ["system", "user", "assistant", "user",
                                                      "assistant"]  # fmt: skip
    assert len((tmp_path / "transcript.jsonl").read_text().splitlines()) == 4
    assert not _containers_of(run_id)
