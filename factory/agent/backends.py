"""Where a suite's episodes run, the trainer's ``environment`` setting.

The trainer and TRL's environments hold an :class:`EpisodeBackend`:

* :class:`DockerEpisodes` — each episode in a fresh container of the task's own image (any
  task; images built once in :meth:`prepare`).
* :class:`InProcessEpisodes` — tool tasks only, their tool domain called in this process
  (:mod:`factory.agent.tool_episode`): no Docker, no shell.

``factory eval`` holds an :class:`~factory.executor.Executor` instead; a local model whose
settings say ``environment: in-process`` gets an :class:`InProcessExecutor`, whose
:class:`InProcessSite` plays the episodes of :class:`InProcessEpisodes`. Runners make each
episode with :func:`site_episode`, which knows both kinds of site.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from enum import Enum
from pathlib import Path
from typing import Protocol

from factory.agent.harness import Episode, HarnessConfig
from factory.agent.suite import SuiteTask
from factory.agent.tool_episode import ToolEpisode, ToolTaskSpec, tool_task_spec
from factory.errors import FactoryError
from factory.executor import Done, EpisodeSite, Executor, Work
from factory.tasks.model import Task


class EnvironmentKind(str, Enum):
    DOCKER = "docker"
    """Each task's own container (any task); commands run by bash inside it."""
    IN_PROCESS = "in-process"
    """Tool tasks only: the task's tool domain called in this process (no Docker, no shell)."""


class EpisodeBackend(Protocol):
    def prepare(self, tasks: list[SuiteTask]) -> None:
        """Make every task ready to start episodes (build images, read tool states)."""
        ...

    def episode(
        self, entry: SuiteTask, harness: HarnessConfig, log_dir: Path | None = None
    ) -> Episode:
        """A fresh, not yet started episode of a prepared task."""
        ...

    def close(self) -> None: ...


class DockerEpisodes:
    def __init__(self, runtime) -> None:
        """Episodes in containers of ``runtime`` (a :class:`factory.runtime.DockerRuntime`);
        :meth:`close` closes it."""
        self.runtime = runtime
        self.images: dict[str, str] = {}

    @classmethod
    def start(cls, run_prefix: str, *, concurrency: int = 8) -> DockerEpisodes:
        """A backend with its own runtime, checked reachable."""
        from factory.runtime import DockerRuntime, new_run_id

        runtime = DockerRuntime(new_run_id(run_prefix), pool_size=4 * concurrency)
        runtime.ping()
        return cls(runtime)

    def prepare(self, tasks: list[SuiteTask]) -> None:
        from factory.images.task_image import TaskImageBuilder

        todo = [e for e in tasks if e.task.id not in self.images]
        builder = TaskImageBuilder(self.runtime)
        with ThreadPoolExecutor(max_workers=2) as pool:
            refs = list(pool.map(lambda e: builder.ensure(e.task).ref, todo))
        self.images.update({e.task.id: ref for e, ref in zip(todo, refs, strict=True)})

    def episode(
        self, entry: SuiteTask, harness: HarnessConfig, log_dir: Path | None = None
    ) -> Episode:
        return Episode(self.runtime, entry.task, self.images[entry.task.id], harness, log_dir)

    def close(self) -> None:
        self.runtime.close()


class InProcessEpisodes:
    def __init__(self) -> None:
        self.specs: dict[str, ToolTaskSpec] = {}

    def prepare(self, tasks: list[SuiteTask]) -> None:
        for entry in tasks:
            self.prepare_task(entry.task)

    def prepare_task(self, task: Task) -> None:
        """Read a tool task's domain and states (FactoryError: not a tool task)."""
        if task.id not in self.specs:
            self.specs[task.id] = tool_task_spec(task)

    def episode(
        self, entry: SuiteTask, harness: HarnessConfig, log_dir: Path | None = None
    ) -> Episode:
        return self.task_episode(entry.task, harness, log_dir)

    def task_episode(
        self, task: Task, harness: HarnessConfig, log_dir: Path | None = None
    ) -> Episode:
        return ToolEpisode(task, harness, log_dir, self.specs[task.id])

    def close(self) -> None:
        pass


def make_backend(
    kind: EnvironmentKind | str, *, run_prefix: str, concurrency: int = 8
) -> EpisodeBackend:
    if EnvironmentKind(kind) is EnvironmentKind.IN_PROCESS:
        return InProcessEpisodes()
    return DockerEpisodes.start(run_prefix, concurrency=concurrency)


class InProcessSite(EpisodeSite):
    """An executor's episode site that plays tool tasks in this process (no containers)."""

    runtime = None

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.episodes = InProcessEpisodes()

    def image(self, task: Task) -> str:
        self.episodes.prepare_task(task)
        return ""  # no image: the episode never leaves this process

    def images(self, tasks: list[Task]) -> list[str | FactoryError]:
        """Every task checked up front: a task that is not a tool task is the user's error
        (the setting), not an environment lost to infrastructure."""
        return [self.image(task) for task in tasks]

    def close(self) -> None:
        """Nothing to end: no containers."""


class InProcessExecutor(Executor):
    """``factory eval`` of a local model whose settings say ``environment: in-process``: the
    episodes in this process, nothing on Docker (which need not be running)."""

    def __init__(self, run_id: str, jobs: int = 1) -> None:
        if jobs < 1:
            raise FactoryError("--jobs must be at least 1")
        self.run_id = run_id
        self.runtime = None  # type: ignore[assignment]
        self.slots = jobs

    def run(self, work: Work, task_dir: Path, logs: Path) -> Done:
        raise FactoryError(
            "environment: in-process plays agent episodes only; validation and generation "
            "need Docker (environment: docker)"
        )

    def episode_site(self) -> InProcessSite:
        return InProcessSite(self.slots)

    def describe(self) -> str:
        return f"{self.slots} episode(s) at once in this process (environment: in-process)"

    def cancel(self) -> None:
        """Nothing runs outside the caller's threads."""

    def close(self) -> None:
        """Nothing held."""


def site_episode(
    site: EpisodeSite, task: Task, image: str, harness: HarnessConfig, log_dir: Path | None
) -> Episode:
    """A fresh episode of ``task`` at ``site``: in process at an :class:`InProcessSite`, else in
    a container of ``image`` on the site's engine (a remote site's engine wrapper moves it to
    a node)."""
    if isinstance(site, InProcessSite):
        return site.episodes.task_episode(task, harness, log_dir)
    return Episode(site.runtime, task, image, harness, log_dir)  # type: ignore[arg-type]
