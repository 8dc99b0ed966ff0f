"""The numbers of ``task.toml`` that factory fills in or bounds: Harbor's defaults for
timeouts and resources, the upper bounds a value must stay under, and Harbor's deprecated
size strings ('2G', '512M') read as megabytes. :mod:`factory.tasks.config` uses them in its
models and imports them from here."""

from __future__ import annotations

import re

DEFAULT_AGENT_TIMEOUT_SEC = 600.0
DEFAULT_VERIFIER_TIMEOUT_SEC = 600.0
DEFAULT_BUILD_TIMEOUT_SEC = 600.0
DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 2048

# Upper bounds: a value past them is a typo or an attack (``timeout_sec = inf`` used to crash
# the run with OverflowError), refused with the file and the field named.
MAX_TIMEOUT_SEC = 86_400.0
"""Any timeout: one day."""
MAX_CPUS = 512.0
MAX_MEMORY_MB = 1 << 20
"""1 TiB."""
MAX_STORAGE_MB = 1 << 24
"""16 TiB."""
MAX_GPUS = 64
MAX_PIDS = 4_194_304
"""The kernel's largest pid_max."""
MAX_HEALTHCHECK_RETRIES = 1_000_000_000
"""Retries are also bounded in time: see :func:`factory.runtime.max_ready_sec`."""


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size_mb(text: str) -> int:
    """Parse Harbor's deprecated size strings ('2G', '512M', '1024') into megabytes."""
    match = _SIZE_RE.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a size such as '2G' or '512M'")
    number, unit = float(match.group(1)), match.group(2).lower()
    factor = {"": 1, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}[unit]
    if number * factor > 1 << 40:  # also catches inf (a 400-digit number)
        raise ValueError(f"'{text}' is not a plausible size")
    return max(1, int(number * factor))
