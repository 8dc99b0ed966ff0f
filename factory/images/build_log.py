"""What a task image's build log says beyond success or failure: the hosts the build tried and
failed to reach (nothing but the package registries is reachable here). A build can succeed
regardless (``curl ... | sh`` takes sh's exit status), leaving an image without what those hosts
serve; the hosts are kept per environment hash, so a later run that reuses the image knows too.
"""

from __future__ import annotations

import re
from pathlib import Path

from factory.images.builder import default_cache_dir

# What curl, wget, git, pip, apt and getaddrinfo print when a host cannot be reached.
_UNREACHABLE = re.compile(
    r"Could not resolve (?:host:? |proxy:? )?'?(?P<a>[\w.-]+\.[a-z]{2,})"
    r"|unable to resolve host address [‘'\"]?(?P<b>[\w.-]+)"
    r"|Failed to connect to (?P<c>[\w.-]+)"
    r"|Failed to establish a new connection.*?host='(?P<d>[\w.-]+)'"
    r"|HTTPSConnectionPool\(host='(?P<e>[\w.-]+)'",
    re.IGNORECASE,
)


def unreachable_hosts(build_log: str) -> list[str]:
    """Hosts a build log says could not be reached, in order, once each."""
    hosts: list[str] = []
    for match in _UNREACHABLE.finditer(build_log):
        host = next(g for g in match.groups() if g)
        if host not in hosts:
            hosts.append(host)
    return hosts


def _unreachable_file(env_hash: str) -> Path:
    return default_cache_dir() / "unreachable" / f"{env_hash[:40]}.txt"


def remember_unreachable(env_hash: str, log_path: Path | None) -> list[str]:
    """Scan a fresh build's log and keep what it found beside the image cache, so a later run
    that reuses the image still knows (a failed write is forgotten, never a failed build)."""
    if log_path is None or not log_path.is_file():
        return []
    hosts = unreachable_hosts(log_path.read_text(encoding="utf-8", errors="replace"))
    if hosts:
        try:
            path = _unreachable_file(env_hash)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(hosts) + "\n")
        except OSError:
            pass
    return hosts


def recall_unreachable(env_hash: str) -> list[str]:
    try:
        return _unreachable_file(env_hash).read_text().split()
    except OSError:
        return []
