"""Fixtures of the unit tests that take a task directory apart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from task_copies import EXAMPLE_TASK


@pytest.fixture
def task_copy(tmp_path: Path) -> Path:
    """A writable copy of a valid example task (tmp_path/task)."""
    dest = tmp_path / "task"
    shutil.copytree(EXAMPLE_TASK, dest)
    return dest
