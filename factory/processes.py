"""This process and others on this machine: whether one is alive (for deciding what a dead run
left behind), and SIGTERM handled as Ctrl-C (so a killed run still removes what it started)."""

from __future__ import annotations

import os
import signal


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists (even one we may not signal)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _interrupt(signum, frame) -> None:  # noqa: ARG001
    raise KeyboardInterrupt


def sigterm_as_ctrl_c() -> None:
    """Make SIGTERM (``kill``, ``timeout``) raise KeyboardInterrupt in the main thread, as Ctrl-C
    does, so ``finally`` blocks run: a runtime's ``close()`` removes the run's containers."""
    signal.signal(signal.SIGTERM, _interrupt)
