"""Every filename of the Harbor task layout, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Where things live inside the container (Harbor's conventions).
CONTAINER_TESTS_DIR = "/tests"
CONTAINER_SOLUTION_DIR = "/solution"
CONTAINER_VERIFIER_LOGS_DIR = "/logs/verifier"
CONTAINER_AGENT_LOGS_DIR = "/logs/agent"
REWARD_TXT = "reward.txt"
REWARD_JSON = "reward.json"


@dataclass(frozen=True)
class TaskPaths:
    """The files of one task directory (Harbor layout)."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "task.toml"

    @property
    def instruction(self) -> Path:
        return self.root / "instruction.md"

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def dockerfile(self) -> Path:
        return self.environment_dir / "Dockerfile"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def solve_script(self) -> Path:
        return self.solution_dir / "solve.sh"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def test_script(self) -> Path:
        return self.tests_dir / "test.sh"

    def is_harbor_task(self) -> bool:
        return self.config.is_file() or (self.instruction.is_file() and self.tests_dir.is_dir())


@dataclass(frozen=True)
class TB1Paths:
    """The files of one Terminal-Bench 1 task directory."""

    root: Path

    @property
    def task_yaml(self) -> Path:
        return self.root / "task.yaml"

    @property
    def dockerfile(self) -> Path:
        return self.root / "Dockerfile"

    @property
    def compose(self) -> Path:
        for name in ("docker-compose.yaml", "docker-compose.yml"):
            if (self.root / name).is_file():
                return self.root / name
        return self.root / "docker-compose.yaml"

    @property
    def run_tests(self) -> Path:
        return self.root / "run-tests.sh"

    @property
    def solution_sh(self) -> Path:
        return self.root / "solution.sh"

    @property
    def solution_yaml(self) -> Path:
        return self.root / "solution.yaml"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    def is_tb1_task(self) -> bool:
        return self.task_yaml.is_file()
