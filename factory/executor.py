"""Where the units of work of a run go: the :class:`Executor` interface and the local executor.

Work fans out in three places: ``validate`` (check one task directory), ``generate`` (certify
one candidate) and ``eval``/``calibrate`` (host the containers of episodes). Those callers hold
an :class:`Executor` and never ask which one it is:

* :class:`LocalExecutor` runs the units in this process, against this machine's engine;
* :class:`factory.distributed.ray_executor.RayExecutor` sends each unit to a node of a Ray
  cluster, which runs it against its own engine and sends back the result and the logs.

A unit of work is a :class:`Work`: a module-level function ``fn(site, task_dir, logs,
**kwargs)`` whose result is plain data (a pydantic model or a dataclass of them), so that it can
run on another machine and come back with its paths rewritten to this one's. ``--jobs`` is one
number everywhere: the units (tasks, candidates, episodes) worked on at once.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from factory.errors import FactoryError

if TYPE_CHECKING:  # this module stays light: the CLI reads DEFAULT_JOBS at start-up
    from concurrent.futures import Future, ThreadPoolExecutor

    from factory.images.task_image import TaskImageBuilder
    from factory.runtime import ContainerSpec, DockerRuntime, Sandbox
    from factory.tasks.model import Task

R = TypeVar("R")

DEFAULT_JOBS = 2
"""``--jobs`` of every command: units of work (tasks, candidates, episodes) at once."""


def docker_pool_size(jobs: int) -> int:
    """Connections to the Docker engine for a run of ``jobs`` units: each unit holds a few
    (its container, the one started ahead, builds, log streams)."""
    return max(16, 4 * jobs)


def _close_unused(future: Future) -> None:
    """Remove a container started ahead of time that no phase needed."""
    if not future.cancelled() and future.exception() is None:
        future.result().close()


class Site:
    """What a unit of work uses where it runs: the engine, the task-image builder (one build per
    content hash), a pool that starts containers ahead of the phase that needs them, the run's
    cancel flag, and what earlier units here learnt (hosts an image build could not reach)."""

    def __init__(
        self, runtime: DockerRuntime, *, images: TaskImageBuilder | None = None, ahead: int = 1
    ) -> None:
        from factory.images.task_image import TaskImageBuilder

        self.runtime = runtime
        self.images = images or TaskImageBuilder(runtime)
        self.ahead = max(1, ahead)
        self.cancelled = threading.Event()
        self.unreachable: dict[str, list[str]] = {}
        """Image reference -> hosts its build could not reach."""
        self._starter: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def start_ahead(self, spec: ContainerSpec) -> Future:
        """Start a container for ``spec`` in the background; :meth:`discard` what goes unused."""
        with self._lock:
            if self._starter is None:
                from concurrent.futures import ThreadPoolExecutor

                self._starter = ThreadPoolExecutor(self.ahead, thread_name_prefix="prestart")
            return self._starter.submit(self.runtime.start, spec)

    @staticmethod
    def discard(future: Future[Sandbox]) -> None:
        future.add_done_callback(_close_unused)

    def close(self, *, cancel: bool = False) -> None:
        """Wait for the containers being started ahead (so none is left behind)."""
        with self._lock:
            starter, self._starter = self._starter, None
        if starter is not None:
            starter.shutdown(wait=True, cancel_futures=cancel)


@dataclass(frozen=True)
class Work(Generic[R]):
    """One unit of work: ``fn(site, task_dir, logs, **kwargs) -> result``.

    ``fn`` must be a module-level function (a remote executor sends it by reference); its
    result must be ``result``-typed plain data that pydantic can dump and load, and every log it
    writes goes under ``logs``."""

    fn: Callable[..., R]
    result: type[R]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self, site: Site, task_dir: Path, logs: Path) -> R:
        logs.mkdir(parents=True, exist_ok=True)
        return self.fn(site, task_dir, logs, **self.kwargs)


@dataclass(frozen=True)
class Done(Generic[R]):
    """A unit's result, and where it ran."""

    result: R
    where: str | None = None
    """Where a remote unit ran (a note for the report); None here."""
    seconds: float | None = None
    """A remote unit: wall time of the whole trip (packing, waiting for a slot, transfers)."""


class EpisodeSite(ABC):
    """Where the containers of agent episodes live while the policy stays in this process."""

    runtime: DockerRuntime | None
    """The engine episodes start their containers on (None: a remote site's nodes)."""
    slots: int
    """Episodes live at once."""

    @abstractmethod
    def image(self, task: Task) -> str:
        """The image an episode of ``task`` starts from (built here, or "" when it is built
        where the episode runs)."""

    def images(self, tasks: list[Task]) -> list[str | FactoryError]:
        """:meth:`image` of each task, two builds at a time; a failed build is its error."""

        def one(task: Task) -> str | FactoryError:
            try:
                return self.image(task)
            except FactoryError as exc:
                return exc

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="image") as pool:
            return list(pool.map(one, tasks))

    def engine(self, engine: Any) -> Any:
        """A rollout engine (``run(episodes, groups) -> (rollouts, stats)``) whose episodes run
        at this site; the engine itself here."""
        return engine

    @abstractmethod
    def close(self) -> None:
        """End the site's hosts (their containers go)."""


class Executor(ABC):
    """Runs the units of work of one run (``run_id``), ``slots`` of them at once."""

    run_id: str
    runtime: DockerRuntime
    """This machine's runtime for the run (a remote executor uses it only for the run id)."""
    slots: int
    queue: int = 0
    """Units handed out beyond ``slots``, so a remote slot never waits for this process."""

    @property
    def threads(self) -> int:
        """Driver threads that hand out units."""
        return self.slots + self.queue

    @abstractmethod
    def run(self, work: Work[R], task_dir: Path, logs: Path) -> Done[R]:
        """Run ``work`` on ``task_dir``; its logs end up in ``logs`` here, and the paths in its
        result name this machine's files. Raises CancelledError after :meth:`cancel`."""

    @abstractmethod
    def episode_site(self) -> EpisodeSite:
        """Where episodes' containers go (close it when the episodes are done)."""

    def describe(self) -> str:
        return f"{self.slots} job(s) on this machine"

    @abstractmethod
    def cancel(self) -> None:
        """Stop the units in flight (between steps) and take no more; idempotent."""

    @abstractmethod
    def close(self) -> None:
        """Release what the executor holds (threads, the engine connection it opened)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalEpisodes(EpisodeSite):
    """Episodes on this machine's engine; images from the executor's builder."""

    def __init__(self, site: Site, slots: int) -> None:
        self.runtime = site.runtime
        self.slots = slots
        self._images = site.images

    def image(self, task: Task) -> str:
        return self._images.ensure(task).ref

    def close(self) -> None:
        """Nothing to end: each episode removes its own container."""


class LocalExecutor(Executor):
    """Units in the calling thread, against this machine's engine; ``jobs`` at once (the
    callers' thread pools), and as many containers started ahead."""

    def __init__(self, runtime: DockerRuntime, jobs: int = 1, *, owns_runtime: bool = False):
        if jobs < 1:
            raise FactoryError("--jobs must be at least 1")
        self.runtime = runtime
        self.run_id = runtime.run_id
        self.slots = jobs
        self.site = Site(runtime, ahead=jobs)
        self._owns_runtime = owns_runtime

    def run(self, work: Work[R], task_dir: Path, logs: Path) -> Done[R]:
        return Done(work(self.site, task_dir, logs))

    def episode_site(self) -> EpisodeSite:
        return LocalEpisodes(self.site, self.slots)

    def cancel(self) -> None:
        self.site.cancelled.set()

    def close(self) -> None:
        try:
            self.site.close(cancel=self.site.cancelled.is_set())
        finally:
            if self._owns_runtime:
                self.runtime.close()
