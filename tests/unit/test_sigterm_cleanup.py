"""A run killed with SIGTERM (``kill``, ``timeout``) still runs its clean-up, as after Ctrl-C:
the CLI and the benchmark scripts call :func:`factory.processes.sigterm_as_ctrl_c` so that a
runtime's ``close()`` in a ``finally`` removes the run's containers."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import sys, time
sys.path.insert(0, {repo!r})
from factory.processes import sigterm_as_ctrl_c
{install}
try:
    print("ready", flush=True)
    time.sleep(60)
finally:
    open({marker!r}, "w").write("closed")
"""


def _killed(tmp_path: Path, install: str) -> tuple[int, bool]:
    marker = tmp_path / "closed"
    code = CHILD.format(repo=str(REPO), install=install, marker=str(marker))
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    returncode = child.wait(timeout=5)
    return returncode, marker.is_file()


def test_sigterm_runs_the_clean_up_when_handled(tmp_path):
    returncode, closed = _killed(tmp_path, "sigterm_as_ctrl_c()")
    assert closed
    assert returncode != 0  # ended by the interrupt, not as a success


def test_without_it_sigterm_skips_the_clean_up(tmp_path):
    # what happened to bench/reset.py under `timeout`: the container stayed behind
    returncode, closed = _killed(tmp_path, "")
    assert not closed
    assert returncode == -signal.SIGTERM
