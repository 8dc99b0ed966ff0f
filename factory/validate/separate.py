"""The separate verifier: ``tests/test.sh`` in a fresh container that gets only the artifacts.

For a task whose ``[verifier]`` says ``environment_mode = "separate"`` (or has a
``[verifier.environment]`` table), verification follows Harbor (``harbor.trial.trial``,
``_collect_artifacts_phased`` and ``_run_separate_verifier``):

1. The ``[[verifier.collect]]`` hooks run in the agent's container, in order, each best effort
   (a failing or hung hook is logged, the rest go on): they snapshot runtime state (owners and
   modes, a process list, a database) into files.
2. Every artifact (``/logs/artifacts`` always, then the task's ``artifacts``) is copied out of
   the agent's container, at most :data:`~factory.validate.artifacts.DEFAULT_MAX_ARTIFACT_BYTES`
   each, and made safe (:mod:`factory.validate.artifacts`).
3. A fresh container starts from the task's image with the task's limits and the verifier's
   network policy (``verifier.network_mode`` when set, else the environment's) and waits for
   the healthcheck; it is started in the background as soon as the agent is done
   (:func:`start_verifier`), so its start overlaps steps 1-2 and the isolation before them.
   It gets each artifact back at its source path, owned by root, with one command and one
   archive: a folder is emptied first and its parent made mode 777, a file's parent is
   created with mode 777 (what Harbor's ``empty_dirs``/``ensure_dirs`` do).
4. ``tests/test.sh`` runs there (:func:`factory.validate.phases.run_tests`).

One addition to Harbor: before the hooks run, what the agent left behind is isolated exactly as
for a shared verifier (its processes frozen, the toolchain restored from the image,
:mod:`factory.validate.isolation`), so a hook does not run a binary the agent replaced and no
background process rewrites a file while it is copied. Harbor runs the hooks with the agent's
processes still live; an honest agent's verdict is the same either way.

For a task with sidecars the verifier gets an environment of its own, as in Harbor 0.26
(``Trial._separate_verifier_env`` starts the task's environment afresh, compose file and all):
fresh sidecars on a fresh task network, never the ones the agent changed. State the tests need
from a sidecar travels as for ``main``: a collect hook snapshots it into a file an artifact
carries. Hooks and artifacts come from ``main``. A
``tests/Dockerfile`` or a ``[verifier.environment]`` naming another image are refused before
anything runs (:func:`separate_verifier_problem`).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from factory.archive import tar_paths
from factory.errors import ContainerDiedError, EnvironmentUnhealthyError
from factory.runtime import BUSYBOX, ContainerSpec, Sandbox
from factory.tasks.config import NetworkMode, VerifierEnvironmentMode
from factory.tasks.model import Task
from factory.validate.artifacts import (
    ARTIFACTS_CONVENTION_DIR,
    DEFAULT_MAX_ARTIFACT_BYTES,
    artifact_collisions,
    effective_artifacts,
    placement,
    sanitise,
)

HARNESS_STEP_TIMEOUT_SEC = 60.0
HOOK_GRACE_SEC = 10.0
"""Past a hook's own timeout (enforced in the container), how long the harness waits."""


def is_separate(task: Task) -> bool:
    """Whether ``task``'s verifier runs in its own container."""
    return task.config.verifier.mode is VerifierEnvironmentMode.SEPARATE


def separate_verifier_problem(task: Task) -> str | None:
    """Why factory cannot run ``task``'s separate verifier as Harbor would (None: it can)."""
    if not is_separate(task):
        return None
    verifier = task.config.verifier
    dockerfile = task.paths.tests_dir / "Dockerfile"
    if dockerfile.is_file() or (task.paths.tests_dir / "docker-compose.yaml").is_file():
        return (
            f"{dockerfile}: a verifier image of its own is not supported by factory; the "
            "separate verifier runs from the task's environment image (drop the file)"
        )
    own = verifier.environment
    if own is not None and own.docker_image:
        return (
            f"{task.paths.config}: verifier.environment.docker_image: factory runs the "
            "separate verifier from the task's environment image; drop the key"
        )
    return None


def _network(task: Task) -> bool:
    verifier = task.config.verifier
    mode = (verifier.model_extra or {}).get("network_mode")
    if mode is not None:
        return mode != NetworkMode.NO_NETWORK.value
    if verifier.environment is not None and (
        verifier.environment.network_mode is not None
        or verifier.environment.allow_internet is not None
    ):
        return verifier.environment.network_enabled
    return task.config.environment.network_enabled


def prepare_agent_container(box: Sandbox) -> None:
    """Create ``/logs/artifacts`` (mode 777) in the agent's container, as Harbor's
    environment does before the agent starts."""
    tool = f"{BUSYBOX} " if box.spec.harness else ""
    box.exec_checked(
        [
            *([BUSYBOX, "sh"] if box.spec.harness else ["sh"]),
            "-c",
            f"{tool}mkdir -p {ARTIFACTS_CONVENTION_DIR} && "
            f"{tool}chmod 777 {ARTIFACTS_CONVENTION_DIR}",
        ],
        timeout_sec=HARNESS_STEP_TIMEOUT_SEC,
        what="creating /logs/artifacts",
        user="0",
    )


def run_collect_hooks(task: Task, box: Sandbox, log: list[str]) -> None:
    """The ``[[verifier.collect]]`` hooks, in order, best effort (see module docstring)."""
    for index, hook in enumerate(task.config.verifier.collect):
        command = ["sh", "-c", hook.command]
        if box.spec.harness:  # the hook's own limit, enforced inside: the container survives
            command = [BUSYBOX, "timeout", "-s", "KILL", str(max(1, int(hook.timeout_sec)))]
            command += ["sh", "-c", hook.command]
        result = box.exec(
            command,
            timeout_sec=hook.timeout_sec + HOOK_GRACE_SEC,
            user=hook.user,
            env=task.config.environment.env,
            what=f"verifier.collect[{index}]",
        )
        log.append(
            f"collect[{index}] exit={result.exit_code} seconds={result.duration_sec:.2f}: "
            f"{hook.command}"
        )
        if result.output.strip():
            log.append("  " + result.output[-2000:].replace("\n", "\n  ").rstrip())


def collect_artifacts(
    task: Task, box: Sandbox, staging: Path, log: list[str], *, max_bytes: int
) -> list[tuple[str, str, Path]]:
    """Copy each artifact out of ``box`` and make it safe; returns (parent, name, local copy)
    for each one that came out."""
    found: list[tuple[str, str, Path]] = []
    artifacts = effective_artifacts(task.config.artifacts)
    skipped = {id(later): first for first, later in artifact_collisions(artifacts)}
    for index, artifact in enumerate(artifacts):
        source = artifact.container_path
        if id(artifact) in skipped:  # as Harbor collects: the first claim wins
            log.append(
                f"artifact {source}: skipped, its copy would land on that of "
                f"{skipped[id(artifact)].source} (listed first)"
            )
            continue
        with tempfile.TemporaryFile(dir=staging) as archive:
            complete = box.copy_out(source, archive, max_bytes=max_bytes)
            if complete is None:
                log.append(f"artifact {source}: absent")
                continue
            if not complete:
                log.append(f"artifact {source}: left out (more than {max_bytes} bytes)")
                continue
            archive.seek(0)
            safe = sanitise(archive, staging / str(index), exclude=artifact.exclude)
        for why in safe.refused:
            log.append(f"artifact {source}: refused {why}")
        if safe.path is None:
            log.append(f"artifact {source}: nothing usable")
            continue
        parent, name = placement(artifact)
        log.append(f"artifact {source}: {'folder' if safe.path.is_dir() else 'file'}")
        found.append((parent, name, safe.path))
    return found


def restore_artifacts(box: Sandbox, artifacts: list[tuple[str, str, Path]]) -> None:
    """Put each artifact at its source path in the verifier's container (as root), in order
    (a later one wins where they overlap): one command prepares every target (a folder is
    emptied and made mode 777, a file's parent is created with mode 777), then one archive
    extracted at ``/`` carries them all."""
    if not artifacts:
        return
    steps: list[str] = []
    args: list[str] = []
    packed: list[tuple[Path, str]] = []
    for parent, name, local in artifacts:
        target = f"{parent.rstrip('/')}/{name}"
        t, p = f'"${{{len(args) + 1}}}"', f'"${{{len(args) + 2}}}"'
        args += [target, parent]
        if local.is_dir():
            steps.append(
                f"{BUSYBOX} rm -rf {t} && {BUSYBOX} mkdir -p {t} && {BUSYBOX} chmod 777 {t} "
                f"&& {BUSYBOX} mkdir -p {p}"
            )
        else:
            steps.append(
                f"{BUSYBOX} rm -rf {t} && {BUSYBOX} mkdir -p {p} && {BUSYBOX} chmod 777 {p}"
            )
        packed.append((local, target.lstrip("/")))
    box.exec_checked(
        [BUSYBOX, "sh", "-c", " && ".join(steps), "restore", *args],
        timeout_sec=HARNESS_STEP_TIMEOUT_SEC,
        what="placing the artifacts",
        user="0",
    )
    box.put_tar("/", tar_paths(packed))


class VerifierStart:
    """The separate verifier's fresh container, started in the background as soon as the
    agent is done (:func:`start_verifier`), so its start and healthcheck overlap the
    isolation, the collect hooks and the artifact copies in the agent's container."""

    def __init__(self, task: Task, agent_box: Sandbox, spec: ContainerSpec) -> None:
        # With sidecars it gets fresh ones on a network of its own (Harbor restarts the whole
        # environment for a separate verifier): a task whose tests ask the agent's sidecars
        # would pass here and fail there.
        self.spec = replace(spec, network=_network(task), join=None)
        self._runtime = agent_box.runtime
        self._box: Sandbox | None = None
        self._error: BaseException | None = None
        self._seconds = 0.0
        self._thread = threading.Thread(target=self._start, name="verifier-start", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        mark = time.monotonic()
        try:
            self._box = self._runtime.start(self.spec)
            self._box.wait_ready()
        except BaseException as exc:  # handed to the caller in result()
            self._error = exc
        finally:
            self._seconds = time.monotonic() - mark

    def result(self) -> tuple[Sandbox, float]:
        """The started, healthy container and the seconds its start took; raises what the
        start raised (a failed healthcheck as :class:`ContainerDiedError`)."""
        self._thread.join()
        if self._box is None and self._error is None:
            raise ContainerDiedError("the separate verifier's container was already removed")
        if self._error is not None:
            if isinstance(self._error, EnvironmentUnhealthyError):
                raise ContainerDiedError(
                    f"the separate verifier's container: {self._error}"
                ) from None
            raise self._error
        assert self._box is not None
        return self._box, self._seconds

    def close(self) -> None:
        """Remove the container (waits for its start first: nothing is left behind); a
        second call does nothing."""
        self._thread.join()
        box, self._box = self._box, None
        if box is not None:
            box.close()


def start_verifier(task: Task, agent_box: Sandbox, spec: ContainerSpec) -> VerifierStart:
    """Start ``task``'s separate verifier container from ``spec`` (the task's,
    :func:`factory.validate.phases.container_spec`) in the background."""
    return VerifierStart(task, agent_box, spec)


@contextmanager
def verifier_container(
    task: Task,
    agent_box: Sandbox,
    starting: VerifierStart,
    log_dir: Path,
    timings: dict[str, float],
    *,
    max_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES,
) -> Iterator[Sandbox]:
    """Hooks and artifacts from ``agent_box`` (already isolated), then the fresh container
    ``starting`` (:func:`start_verifier`) with them in place; closed on exit (also when the
    hooks or copies fail)."""
    log: list[str] = [f"# separate verifier: image {agent_box.spec.image}"]
    staging = Path(tempfile.mkdtemp(prefix="factory-artifacts-"))
    try:
        mark = time.monotonic()
        prepare_agent_container(agent_box)
        run_collect_hooks(task, agent_box, log)
        artifacts = collect_artifacts(task, agent_box, staging, log, max_bytes=max_bytes)
        timings["artifacts"] = time.monotonic() - mark
        mark = time.monotonic()
        fresh, started_sec = starting.result()
        timings["verifier_start_wait"] = time.monotonic() - mark
        timings["verifier_start"] = started_sec
        mark = time.monotonic()
        restore_artifacts(fresh, artifacts)
        timings["artifacts_restore"] = time.monotonic() - mark
        yield fresh
    finally:
        (log_dir / "artifacts.log").write_text("\n".join(log) + "\n", encoding="utf-8")
        starting.close()
        shutil.rmtree(staging, ignore_errors=True)
