"""factory's verdict against the real Harbor's rewards, side by side in one run.

    .venv/bin/python bench/harbor_agreement.py TASK_OR_FOLDER... [--jobs 2] [--out DIR]

For each task: factory validates it (nop and oracle in fresh containers, repeats 1), then the
real Harbor from PyPI runs the same, unchanged task directory with its ``oracle`` and ``nop``
agents. A task agrees when factory says ``valid`` and Harbor gives oracle 1 and nop 0 (or
factory says anything else and Harbor does not give exactly that). Prints both columns, the
agreement and each side's wall time.

Harbor needs Python >= 3.12, so it runs in a container (``bench/harbor/Dockerfile``: Harbor
0.26.0, Docker CLI and Compose from Debian) that drives this machine's engine through its
socket, with the run folder mounted at the same path (Harbor bind-mounts trial folders). The
public base images the Dockerfiles name are made on the engine from factory's stand-ins for
the duration of the run (``python:3.12-slim-bookworm`` -> ``factory/python:bookworm``, ...,
with factory's image labels blanked), so Harbor builds the very Dockerfiles factory certified;
they are removed afterwards. Run it on an engine that no other factory process uses meanwhile:
while those names exist, factory's alias table takes them as they are, and a build that
starts just before they are removed fails with a pull from Docker Hub.

No-network tasks: stock Harbor's Docker environment refuses them here (its egress control
needs images that cannot be pulled), so Harbor runs with ``--env
no_network_docker:NoNetworkDockerEnvironment`` (``bench/harbor/no_network_docker.py``): the
same environment, with ``network_mode: none`` on the task container when the task declares
no-network. That is the only change to Harbor.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.images.aliases import AliasTable, rewrite_dockerfile  # noqa: E402
from factory.runtime import DockerRuntime, new_run_id  # noqa: E402
from factory.tasks.model import discover_task_dirs, load_task  # noqa: E402
from factory.validate.outcome import Outcome  # noqa: E402
from factory.validate.validator import Validator  # noqa: E402

RUNNER_IMAGE = "factory/harbor-runner:0.26.0-compose2.40"
RUNNER_CONTEXT = REPO / "bench" / "harbor"
HARBOR_ENV = "no_network_docker:NoNetworkDockerEnvironment"


def docker(*args: str, check: bool = True, capture: bool = True) -> str:
    result = subprocess.run(["docker", *args], capture_output=capture, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"docker {' '.join(args[:3])} failed: {result.stderr[-800:]}")
    return result.stdout if capture else ""


def stand_in_tags(dirs: list[Path], runtime: DockerRuntime) -> dict[str, str]:
    """Public base image -> the local stand-in factory builds it from."""
    table = AliasTable.load()
    tags: dict[str, str] = {}
    for path in dirs:
        dockerfile = load_task(path).paths.dockerfile
        if dockerfile.is_file():
            rewrite = rewrite_dockerfile(dockerfile.read_text(), table, runtime.image_exists)
            tags.update(dict(rewrite.substitutions))
    return tags


def stand_in_as(public: str, local: str) -> None:
    """Make ``public`` the stand-in ``local``, without factory's labels: Harbor's containers
    must not look like factory's own to a `factory gc` running on the same engine."""
    dockerfile = f'FROM {local}\nLABEL factory.managed="" factory.kind="" factory.recipe_hash=""\n'
    result = subprocess.run(
        ["docker", "build", "-q", "-t", public, "-"],
        input=dockerfile,
        text=True,
        capture_output=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"could not tag {local} as {public}: {result.stderr[-400:]}")


def remove_left_builds(names: list[str]) -> int:
    """Harbor's builds of these tasks that it left untagged (a task image replaced by a rebuild
    keeps its compose labels, ``com.docker.compose.project = <task>__<trial>__env``, and no
    tag): removed; the count."""
    ids = docker(
        "images", "-q", "--filter", "dangling=true", "--filter", "label=com.docker.compose.project",
        check=False,
    ).split()  # fmt: skip
    # an image gone meanwhile just drops out of the listing (no exit in the caller's finally)
    listing = docker(
        "image", "inspect", "--format",
        '{{.Id}} {{index .Config.Labels "com.docker.compose.project"}}', *ids, check=False,
    ) if ids else ""  # fmt: skip
    left = [
        image
        for image, _, project in (line.partition(" ") for line in listing.splitlines())
        if project.partition("__")[0] in names
    ]
    for image in left:
        docker("rmi", image, check=False)
    return len(left)


def factory_side(dirs: list[Path], out: Path, jobs: int) -> tuple[dict[str, str], float]:
    runtime = DockerRuntime(new_run_id("bench-harbor"), pool_size=16)
    validator = Validator(runtime, out / "factory", jobs=jobs, repeats=1, force=True)
    started = time.perf_counter()
    try:
        report = validator.run(dirs)
    finally:
        runtime.close()
    wall = time.perf_counter() - started
    by_path = {Path(t.path).resolve().name: t.outcome.value for t in report.tasks}
    return by_path, wall


def harbor_side(dataset: Path, out: Path, agent: str, jobs: int) -> tuple[dict[str, float], float]:
    jobs_dir = out / "harbor-jobs"
    command = [
        "run",
        "--rm",
        "-v",
        "/var/run/docker.sock:/var/run/docker.sock",
        "-v",
        f"{out}:{out}",
        "-w",
        str(out),
        RUNNER_IMAGE,
        "harbor",
        "run",
        "--path",
        str(dataset),
        "--agent",
        agent,
        "--env",
        HARBOR_ENV,
        "--jobs-dir",
        str(jobs_dir),
        "--job-name",
        agent,
        "--n-concurrent",
        str(jobs),
        "--max-retries",
        "0",
        "--yes",
        "--quiet",
    ]
    started = time.perf_counter()
    result = subprocess.run(["docker", *command], capture_output=True, text=True)
    wall = time.perf_counter() - started
    (out / f"harbor-{agent}.log").write_text(result.stdout + result.stderr)
    rewards: dict[str, float] = {}
    for trial in sorted((jobs_dir / agent).glob("*/result.json")):
        data = json.loads(trial.read_text())
        verifier = data.get("verifier_result") or {}
        reward = (verifier.get("rewards") or {}).get("reward")
        name = str(data.get("task_name") or trial.parent.name.split("__")[0]).split("/")[-1]
        rewards[name] = float("nan") if reward is None else float(reward)
    return rewards, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/factory-harbor-bench"))
    args = parser.parse_args()
    # a SIGTERM still removes the public-name images this run made (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    dirs = [d.resolve() for d in discover_task_dirs(args.tasks)]
    dataset = out / "dataset"
    for path in dirs:  # Harbor reads a folder of task folders; copies, byte for byte
        shutil.copytree(path, dataset / path.name, symlinks=True)

    verdicts, factory_wall = factory_side(dirs, out, args.jobs)

    runtime = DockerRuntime()
    if not runtime.image_exists(RUNNER_IMAGE):
        docker("build", "-t", RUNNER_IMAGE, str(RUNNER_CONTEXT))
    tags = stand_in_tags(dirs, runtime)
    added = [public for public in tags if not runtime.image_exists(public)]
    for public in added:
        stand_in_as(public, tags[public])
    try:
        oracle, oracle_wall = harbor_side(dataset, out, "oracle", args.jobs)
        nop, nop_wall = harbor_side(dataset, out, "nop", args.jobs)
    finally:
        for public in added:
            docker("rmi", "--no-prune", public, check=False)
        removed = remove_left_builds([path.name for path in dirs])
        if removed:
            print(f"removed {removed} untagged image(s) Harbor's builds left")

    rows, agree = [], 0
    for path in dirs:
        name = path.name
        verdict = verdicts.get(name, "missing")
        o, n = oracle.get(name), nop.get(name)
        harbor_valid = o == 1.0 and n == 0.0
        ok = harbor_valid == (verdict == Outcome.VALID.value)
        agree += ok
        rows.append(
            {"task": name, "factory": verdict, "harbor_oracle": o, "harbor_nop": n, "agree": ok}
        )
        print(
            f"{name:48s} factory={verdict:22s} harbor oracle={o} nop={n} {'agree' if ok else 'DISAGREE'}"
        )
    summary = {
        "tasks": len(dirs),
        "agree": agree,
        "factory_wall_sec": round(factory_wall, 1),
        "harbor_oracle_wall_sec": round(oracle_wall, 1),
        "harbor_nop_wall_sec": round(nop_wall, 1),
        "stand_ins": tags,
        "rows": rows,
    }
    (out / "agreement.json").write_text(json.dumps(summary, indent=2))
    print(
        f"\nagreement: {agree}/{len(dirs)}; wall: factory validate {factory_wall:.0f} s "
        f"(nop + oracle, repeats 1), Harbor oracle {oracle_wall:.0f} s + nop {nop_wall:.0f} s "
        f"= {oracle_wall + nop_wall:.0f} s (ratio {(oracle_wall + nop_wall) / factory_wall:.2f}x)"
    )
    if agree != len(dirs):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
