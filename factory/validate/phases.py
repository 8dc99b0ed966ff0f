"""One validation phase = one fresh container: (solution), then tests, then read the reward.

The verifier never trusts what the solution could have touched: before ``tests/test.sh`` runs,
the processes the solution started are frozen and the verifier's toolchain is restored
(:mod:`factory.validate.isolation`), ``/tests`` is deleted and re-uploaded, and
``/logs/verifier`` is emptied, all by the harness's own static busybox.
"""

from __future__ import annotations

import shlex
import time
import uuid
from concurrent.futures import Future
from pathlib import Path

from factory.errors import (
    CancelledError,
    ContainerDiedError,
    EnvironmentUnhealthyError,
    ExecTimeoutError,
)
from factory.images.task_image import service_images
from factory.runtime import (
    BUSYBOX,
    ContainerSpec,
    DockerRuntime,
    ExecResult,
    Readiness,
    Sandbox,
    ServiceSpec,
    compose_readiness,
)
from factory.tasks.compose import ServiceHealthcheck, sidecar_limits
from factory.tasks.model import Task
from factory.tasks.paths import (
    CONTAINER_SOLUTION_DIR,
    CONTAINER_TESTS_DIR,
    CONTAINER_VERIFIER_LOGS_DIR,
)
from factory.validate.isolation import VERIFIER_ENV, Baseline, capture_baseline, isolate
from factory.validate.outcome import PhaseKind, PhaseResult, parse_reward, reward_is_invalid
from factory.validate.separate import is_separate, start_verifier, verifier_container

HARNESS_STEP_TIMEOUT_SEC = 60.0
_SWAP_FAILED = "factory-harness:tests-not-installed"
_RUN_SCRIPT = 'if command -v bash >/dev/null 2>&1; then exec bash "$0"; else exec sh "$0"; fi'


def container_spec(
    task: Task, image: str, *, labels: dict[str, str] | None = None
) -> ContainerSpec:
    """How to start ``task``'s container from ``image``; with its sidecars (the other services
    of its compose file, images from :func:`service_images`) when it has them."""
    env = task.config.environment
    check = env.healthcheck
    readiness = None
    if check is not None:
        readiness = Readiness(
            command=check.command,
            interval_sec=check.interval_sec,
            timeout_sec=check.timeout_sec,
            retries=check.retries,
            start_period_sec=check.start_period_sec,
            start_interval_sec=check.start_interval_sec or 0.2,
        )
    compose = task.compose
    environment = dict(env.env)
    if compose is not None:
        environment.update(compose.main_env)
        if readiness is None and compose.main_healthcheck is not None:
            readiness = _readiness(compose.main_healthcheck)
    return ContainerSpec(
        image=image,
        cpus=env.effective_cpus,
        memory_mb=env.effective_memory_mb,
        pids_limit=env.pids_limit or 1024,
        storage_mb=env.effective_storage_mb,
        gpus=env.gpus,
        network=env.network_enabled,
        env=environment,
        workdir=env.workdir,
        task_id=task.id,
        labels=labels or {},
        readiness=readiness,
        services=sidecar_specs(task, image),
    )


def _readiness(check: ServiceHealthcheck) -> Readiness:
    return compose_readiness(
        check.command, check.interval_sec, check.timeout_sec, check.retries, check.start_period_sec
    )


def sidecar_specs(task: Task, image: str) -> tuple[ServiceSpec, ...]:
    """The task's sidecars as the runtime starts them, in start order: limits from the compose
    file (or factory's defaults), never above the task's own container's."""
    compose = task.compose
    if compose is None or not compose.sidecars:
        return ()
    images = service_images(task, image)
    env = task.config.environment
    completes = {
        dep
        for wants in [compose.main_depends_on, *(s.depends_on for s in compose.sidecars)]
        for dep, condition in wants.items()
        if condition == "service_completed_successfully"
    }
    specs = []
    for sidecar in compose.sidecars:
        cpus, memory_mb, pids = sidecar_limits(
            sidecar,
            cpus=env.effective_cpus,
            memory_mb=env.effective_memory_mb,
            pids=env.pids_limit or 1024,
        )
        specs.append(
            ServiceSpec(
                name=sidecar.name,
                image=images[sidecar.name],
                command=sidecar.command,
                entrypoint=sidecar.entrypoint,
                env=dict(sidecar.env),
                workdir=sidecar.workdir,
                user=sidecar.user,
                cpus=cpus,
                memory_mb=memory_mb,
                pids_limit=pids,
                readiness=_readiness(sidecar.healthcheck) if sidecar.healthcheck else None,
                image_healthcheck=not sidecar.healthcheck_disabled,
                must_complete=sidecar.name in completes,
            )
        )
    return tuple(specs)


def _write(path: Path, result: ExecResult) -> None:
    header = f"# exit={result.exit_code} timed_out={result.timed_out} seconds={result.duration_sec:.3f}\n"
    path.write_text(header + result.output, encoding="utf-8")


def run_phase(
    runtime: DockerRuntime,
    task: Task,
    image: str,
    kind: PhaseKind,
    repeat: int,
    log_dir: Path,
    *,
    container: Future[Sandbox] | None = None,
    solution_dir: Path | None = None,
) -> PhaseResult:
    """Run one phase in a fresh container and collect its reward.

    ``container`` is a container started ahead of time (the validator starts the next phase's
    container while this one runs); without it one is started here. ``solution_dir`` replaces
    the task's solution/ in an oracle phase (the quality probes run wrong solutions this way).
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    result = PhaseResult(kind=kind, repeat=repeat, log_dir=str(log_dir))
    timings = result.timings
    started = time.monotonic()
    try:
        box = container.result() if container else runtime.start(container_spec(task, image))
    except (ContainerDiedError, CancelledError) as exc:
        result.infra_error = str(exc)
        timings["total"] = time.monotonic() - started
        return result
    except EnvironmentUnhealthyError as exc:  # a sidecar's healthcheck
        result.unhealthy = str(exc)
        timings["total"] = time.monotonic() - started
        return result
    try:
        timings["start"] = time.monotonic() - started
        try:
            timings["ready"] = box.wait_ready()
        except EnvironmentUnhealthyError as exc:
            result.unhealthy = str(exc)
            return result
        solution = solution_dir or task.paths.solution_dir
        baseline = None
        if kind is PhaseKind.ORACLE:
            baseline = capture_baseline(box)
            if not _solve(task, box, result, log_dir, solution):
                return result
        verify(task, box, result, log_dir, baseline=baseline)
    except ContainerDiedError as exc:
        message = str(exc)
        state = box.state()
        if state and not state.get("Running", False):
            hint = (
                "it ran out of memory; raise environment.memory_mb"
                if state.get("OOMKilled")
                else "check the image's ENTRYPOINT: it must run the command it is given "
                "(factory keeps the container alive with its own command)"
            )
            message = (
                f"the container stopped (exit {state.get('ExitCode')}) during the phase; {hint}"
            )
        result.infra_error = message
    except ExecTimeoutError as exc:
        result.infra_error = f"harness step hung: {exc}"
    finally:
        box.close()
        timings["total"] = time.monotonic() - started
    return result


def _solve(task: Task, box: Sandbox, result: PhaseResult, log_dir: Path, solution: Path) -> bool:
    """Upload and run solution/solve.sh. False when the phase ends here (timeout)."""
    timings = result.timings
    mark = time.monotonic()
    box.upload_dir(solution, CONTAINER_SOLUTION_DIR)
    timings["upload"] = time.monotonic() - mark
    timeout = task.config.agent.timeout_sec
    solve = box.exec(
        ["sh", "-c", _RUN_SCRIPT, f"{CONTAINER_SOLUTION_DIR}/solve.sh"],
        timeout_sec=timeout,
        env=task.config.solution.env,
        user=task.config.agent.user,
        what="solution/solve.sh",
    )
    timings["solve"] = solve.duration_sec
    _write(log_dir / "solve.log", solve)
    result.solve_exit_code = solve.exit_code
    result.solve_output_tail = solve.output[-600:]
    if solve.timed_out:
        result.timed_out, result.timeout_sec = "solve", timeout
        result.output_tail = solve.output[-2000:]
        return False
    return True


def verify(
    task: Task,
    box: Sandbox,
    result: PhaseResult,
    log_dir: Path,
    *,
    baseline: Baseline | None = None,
) -> None:
    """Install the tests, run tests/test.sh, read the reward into ``result`` (also used by the
    agent harness after an episode). ``baseline``: the processes recorded before the agent's
    first command; when given, what the agent left behind is isolated first (see
    :mod:`factory.validate.isolation`). A task with a separate verifier has its tests run in
    a fresh container that gets only the artifacts (:mod:`factory.validate.separate`)."""
    timings = result.timings
    starting = None
    if is_separate(task):  # its start overlaps the isolation, hooks and copies below
        spec = container_spec(task, box.spec.image, labels=dict(box.spec.labels))
        starting = start_verifier(task, box, spec)
    try:
        if baseline is not None:
            mark = time.monotonic()
            report = isolate(box, baseline)
            timings["isolate"] = time.monotonic() - mark
            result.isolation = report.summary()
            (log_dir / "isolation.log").write_text(report.log_text(), encoding="utf-8")
        if starting is None:
            run_tests(task, box, result, log_dir)
            return
        with verifier_container(task, box, starting, log_dir, timings) as fresh:
            run_tests(task, fresh, result, log_dir)
    finally:
        if starting is not None:
            starting.close()


def run_tests(task: Task, box: Sandbox, result: PhaseResult, log_dir: Path) -> None:
    """Install the tests in ``box``, run tests/test.sh there, read the reward into
    ``result``."""
    timings = result.timings
    verifier = task.config.verifier
    mark = time.monotonic()
    # The tests arrive under a fresh name, then replace whatever sits at /tests (baked into the
    # image, or planted by the solution); /logs/verifier is emptied right before they start.
    staged = f"/.factory-tests-{uuid.uuid4().hex[:12]}"
    box.upload_dir(task.paths.tests_dir, staged)
    timings["upload"] = timings.get("upload", 0.0) + time.monotonic() - mark
    tool = f"{BUSYBOX} " if box.spec.harness else ""
    swap = (
        f"{tool}rm -rf {CONTAINER_TESTS_DIR} {CONTAINER_VERIFIER_LOGS_DIR} && {tool}mv {staged} "
        f"{CONTAINER_TESTS_DIR} && {tool}mkdir -p {CONTAINER_VERIFIER_LOGS_DIR}"
    )
    script = f"{CONTAINER_TESTS_DIR}/test.sh"
    shell = [BUSYBOX, "sh"] if box.spec.harness else ["sh"]
    if verifier.user:
        swap += f" && {tool}chown {verifier.user} {CONTAINER_VERIFIER_LOGS_DIR}"
        box.exec_checked(
            [*shell, "-c", swap],
            timeout_sec=HARNESS_STEP_TIMEOUT_SEC,
            what="verifier set-up",
            user="0" if box.spec.harness else None,
        )
        command = ["sh", "-c", _RUN_SCRIPT, script]
    else:  # one exec: swap (busybox), then the tests with the image's own /bin/sh
        command = [
            *shell,
            "-c",
            f"{swap} || {{ echo {_SWAP_FAILED} >&2; exit 97; }}; "
            f'exec /bin/sh -c {shlex.quote(_RUN_SCRIPT)} "$0"',
            script,
        ]
    test = box.exec(
        command,
        timeout_sec=verifier.timeout_sec,
        env={"TEST_DIR": CONTAINER_TESTS_DIR, **VERIFIER_ENV, **verifier.env},
        user=verifier.user,
        what="tests/test.sh",
    )
    if test.exit_code == 97 and _SWAP_FAILED in test.output:
        raise ContainerDiedError(f"could not install the tests at /tests: {test.output[-300:]}")
    timings["test"] = test.duration_sec
    _write(log_dir / "test.log", test)
    result.test_exit_code = test.exit_code
    result.output_tail = test.output[-2000:]
    if test.timed_out:
        result.timed_out, result.timeout_sec = "test", verifier.timeout_sec
        return
    mark = time.monotonic()
    files = box.download_dir(CONTAINER_VERIFIER_LOGS_DIR)
    timings["collect"] = time.monotonic() - mark
    verifier_dir = log_dir / "verifier"
    for name, content in files.items():
        target = verifier_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    reward, source, metrics, error = parse_reward(files)
    result.reward, result.reward_source, result.metrics, result.reward_error = (
        reward,
        source,
        metrics,
        error,
    )
    result.reward_invalid = reward_is_invalid(source, error)
