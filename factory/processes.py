"""Whether a process on this machine is alive (for deciding what a dead run left behind)."""

from __future__ import annotations

import os


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
