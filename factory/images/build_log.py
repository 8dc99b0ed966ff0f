"""What a task image's build log says beyond success or failure: the hosts the build tried and
failed to reach (nothing but the package registries is reachable here), and the packages apt
could not find. A build can succeed regardless of unreachable hosts (``curl ... | sh`` takes
sh's exit status), leaving an image without what those hosts serve; the hosts are kept per
environment hash, so a later run that reuses the image knows too.
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
# What apt prints for a package it cannot install on this release.
_APT_MISSING = re.compile(
    r"E: Unable to locate package (?P<a>\S+)"
    r"|E: Package '(?P<b>[^']+)' has no installation candidate"
    r"|E: Couldn't find any package by (?:glob|regex) '(?P<c>[^']+)'"
    r"|E: Version '[^']+' for '(?P<d>[^']+)' was not found"
)


def _named(pattern: re.Pattern[str], log: str) -> list[str]:
    """What the matches of ``pattern`` (each names one thing in a group) name in ``log``, in
    order, once each."""
    names: list[str] = []
    for match in pattern.finditer(log):
        name = next(g for g in match.groups() if g)
        if name not in names:
            names.append(name)
    return names


def unreachable_hosts(build_log: str) -> list[str]:
    """Hosts a build log says could not be reached, in order, once each."""
    return _named(_UNREACHABLE, build_log)


def missing_packages(build_log: str) -> list[str]:
    """Package names apt said it could not find, in order, once each."""
    return _named(_APT_MISSING, build_log)


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
