"""Where a suite's episodes run, behind one interface for the trainer, `factory eval` and TRL.

* :class:`DockerEpisodes` — each episode in a fresh container of the task's own image (any
  task; images built once in :meth:`prepare`).
* :class:`InProcessEpisodes` — tool tasks only, their tool domain called in this process
  (:mod:`factory.agent.tool_episode`): no Docker, no shell.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from enum import Enum
from pathlib import Path
from typing import Protocol

from factory.agent.harness import Episode, HarnessConfig
from factory.agent.suite import SuiteTask
from factory.agent.tool_episode import ToolEpisode, ToolTaskSpec, tool_task_spec


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
            if entry.task.id not in self.specs:
                self.specs[entry.task.id] = tool_task_spec(entry.task)

    def episode(
        self, entry: SuiteTask, harness: HarnessConfig, log_dir: Path | None = None
    ) -> Episode:
        return ToolEpisode(entry.task, harness, log_dir, self.specs[entry.task.id])

    def close(self) -> None:
        pass


def make_backend(
    kind: EnvironmentKind | str, *, run_prefix: str, concurrency: int = 8
) -> EpisodeBackend:
    if EnvironmentKind(kind) is EnvironmentKind.IN_PROCESS:
        return InProcessEpisodes()
    return DockerEpisodes.start(run_prefix, concurrency=concurrency)
