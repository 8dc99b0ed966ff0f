"""Helpers of the unit tests that take a task directory apart (see conftest.py's task_copy)."""

from __future__ import annotations

from pathlib import Path

EXAMPLE_TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "access-log-report"


def one_line(error: Exception) -> str:
    """The error's message, asserted to be one short line."""
    text = str(error)
    assert "\n" not in text and len(text) < 400, text
    return text
