"""One value of a compose service, parsed and checked: Compose's variables, commands,
environments, durations, healthchecks, dependencies, resource limits and builds. Each parser
takes the value, the file it came from (:class:`ComposeSource`, for errors that name the file and
the field) and the field's path; :mod:`factory.tasks.compose` puts a service together from them."""

from __future__ import annotations

import math
import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory.errors import TaskFormatError

_VARIABLE = re.compile(
    r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)
_CONDITIONS = ("service_started", "service_healthy", "service_completed_successfully")


@dataclass(frozen=True)
class ServiceHealthcheck:
    """A service's healthcheck as Compose states it (its defaults are Compose's); how long it
    may keep failing: :func:`factory.runtime.group.compose_readiness`."""

    command: str
    """Run with ``sh -c`` in the service's container; exit 0 means healthy."""
    interval_sec: float = 30.0
    timeout_sec: float = 30.0
    retries: int = 3
    start_period_sec: float = 0.0


class ComposeSource:
    """The file being parsed, for errors that name it and the field; ``closed``: whether
    values from the environment of the process that runs ``docker compose`` are refused."""

    def __init__(self, path: Path, closed: bool = False) -> None:
        self.path = path
        self.closed = closed

    def error(self, field_name: str, message: str) -> TaskFormatError:
        return TaskFormatError(self.path, message, field=field_name)


def interpolate(value: Any, variables: Mapping[str, str], where: ComposeSource, at: str) -> Any:
    """Compose's ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?err}``,
    ``${VAR:+alt}``, ``$VAR`` and ``$$`` in every string of ``value`` (an unset variable is
    empty, as in Compose)."""
    if isinstance(value, dict):
        return {
            k: interpolate(v, variables, where, f"{at}.{k}" if at else str(k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [interpolate(v, variables, where, f"{at}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "$" not in value:
        return value

    def one(match: re.Match[str]) -> str:
        if match.group(1):
            return "$"
        name = match.group(2) or match.group(5)
        op, arg = match.group(3), match.group(4) or ""
        found = variables.get(name)
        if found is None and where.closed:
            raise where.error(
                at,
                f"variable {name} is not one Harbor sets ({', '.join(sorted(variables))}): "
                "`docker compose` would take it from the environment of the machine that runs "
                "the task (its secrets too); put the value in the file or in task.toml's "
                "[environment.env]",
            )
        if op in (":-", "-"):
            use_default = found is None or (op == ":-" and found == "")
            return arg if use_default else str(found)
        if op in (":?", "?"):
            if found is None or (op == ":?" and found == ""):
                raise where.error(at, f"variable {name} is required: {arg or 'not set'}")
            return str(found)
        if op in (":+", "+"):
            present = found is not None and (op == "+" or found != "")
            return arg if present else ""
        return "" if found is None else str(found)

    return _VARIABLE.sub(one, value)


def parse_command(value: Any, where: ComposeSource, at: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise where.error(at, f"cannot be split into words: {exc}") from None
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return tuple(str(v) for v in value)
    raise where.error(at, "must be a string or a list of strings")


_FROM_HOST = (
    "a variable without a value takes the value of the machine that runs `docker compose` "
    "(its secrets too); give it a value"
)


def parse_env(value: Any, where: ComposeSource, at: str) -> dict[str, str]:
    if value is None:
        return {}
    pairs: dict[str, str] = {}
    if isinstance(value, list):
        for item in value:
            key, sep, val = str(item).partition("=")
            if sep:
                pairs[key] = val
            elif where.closed:  # Compose fills `- NAME` from its own process's environment
                raise where.error(f"{at}.{key}", _FROM_HOST)
    elif isinstance(value, dict):
        for key, val in value.items():
            if val is None and where.closed:  # `NAME:` (null) likewise
                raise where.error(f"{at}.{key}", _FROM_HOST)
            if val is not None:
                pairs[str(key)] = str(val).lower() if isinstance(val, bool) else str(val)
    else:
        raise where.error(at, "must be a list of NAME=value or a mapping")
    return pairs


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)")


def parse_duration(value: Any, where: ComposeSource, at: str) -> float:
    """Compose durations ('1m30s', '500ms', '10s', or a number of seconds) in seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        text = str(value).strip()
        parts = _DURATION.findall(text)
        if not text or "".join(n + u for n, u in parts) != text:
            raise where.error(at, f"'{value}' is not a duration such as '10s' or '1m30s'")
        scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
        seconds = sum(float(n) * scale[u] for n, u in parts)
    if not math.isfinite(seconds) or seconds < 0 or seconds > 86_400:
        raise where.error(at, f"'{value}' is not a duration between 0 and 24h")
    return seconds


def parse_healthcheck(
    value: Any, where: ComposeSource, at: str
) -> tuple[ServiceHealthcheck | None, bool]:
    """(the check, whether it is disabled)."""
    if value is None:
        return None, False
    if not isinstance(value, dict):
        raise where.error(at, "must be a mapping (test, interval, timeout, retries, ...)")
    unknown = sorted(
        set(value)
        - {"test", "interval", "timeout", "retries", "start_period", "start_interval", "disable"}
    )
    if unknown:
        raise where.error(f"{at}.{unknown[0]}", "not a healthcheck field")
    if value.get("disable") is True:
        return None, True
    test = value.get("test")
    if test is None:
        raise where.error(f"{at}.test", "missing (the command that says the service is up)")
    if isinstance(test, str):
        command = test
    elif isinstance(test, list) and test and all(isinstance(t, str) for t in test):
        kind, rest = test[0], test[1:]
        if kind == "NONE":
            return None, True
        if kind == "CMD-SHELL" and len(rest) == 1:
            command = rest[0]
        elif kind == "CMD" and rest:
            command = shlex.join(rest)
        else:
            raise where.error(f"{at}.test", "must be [CMD, ...], [CMD-SHELL, cmd] or a string")
    else:
        raise where.error(f"{at}.test", "must be a string or a list of strings")
    retries = value.get("retries", 3)
    if not isinstance(retries, int) or isinstance(retries, bool) or not 1 <= retries <= 10_000:
        raise where.error(f"{at}.retries", "must be a whole number from 1 to 10000")
    check = ServiceHealthcheck(
        command=command,
        interval_sec=max(
            0.1, parse_duration(value.get("interval", "30s"), where, f"{at}.interval")
        ),
        timeout_sec=max(0.1, parse_duration(value.get("timeout", "30s"), where, f"{at}.timeout")),
        retries=retries,
        start_period_sec=parse_duration(value.get("start_period", 0), where, f"{at}.start_period"),
    )
    return check, False


def parse_depends_on(value: Any, where: ComposeSource, at: str) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {name: "service_started" for name in value}
    if not isinstance(value, dict):
        raise where.error(at, "must be a list of services or a mapping")
    found: dict[str, str] = {}
    for name, spec in value.items():
        spec = spec or {}
        if not isinstance(spec, dict):
            raise where.error(f"{at}.{name}", "must be a mapping with a condition")
        condition = spec.get("condition", "service_started")
        if condition not in _CONDITIONS:
            raise where.error(f"{at}.{name}.condition", f"must be one of {', '.join(_CONDITIONS)}")
        found[str(name)] = condition
    return found


def parse_memory_mb(value: Any, where: ComposeSource, at: str) -> int:
    text = str(value).strip().lower()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", text)
    if not match:
        raise where.error(at, f"'{value}' is not a size such as '512m' or '1g'")
    number, unit = float(match.group(1)), match.group(2)
    if not unit:  # Compose: a bare number is bytes
        return max(1, int(number) >> 20)
    factor = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}[unit]
    return max(1, int(number * factor))


def parse_limits(
    service: dict[str, Any], where: ComposeSource, at: str
) -> tuple[float | None, int | None, int | None]:
    deploy = service.get("deploy") or {}
    if not isinstance(deploy, dict):
        raise where.error(f"{at}.deploy", "must be a mapping")
    unknown = sorted(set(deploy) - {"resources", "restart_policy", "labels", "replicas"})
    if unknown:
        raise where.error(f"{at}.deploy.{unknown[0]}", "not supported by factory")
    if deploy.get("replicas", 1) != 1:
        raise where.error(f"{at}.deploy.replicas", "one container per service")
    resources = deploy.get("resources") or {}
    if not isinstance(resources, dict):
        raise where.error(f"{at}.deploy.resources", "must be a mapping")
    if (resources.get("reservations") or {}).get("devices"):
        raise where.error(
            f"{at}.deploy.resources.reservations.devices", "host devices are not allowed"
        )
    limits = resources.get("limits") or {}
    if not isinstance(limits, dict):
        raise where.error(f"{at}.deploy.resources.limits", "must be a mapping")
    cpus_value = limits.get("cpus", service.get("cpus"))
    memory_value = limits.get("memory", service.get("mem_limit"))
    pids_value = limits.get("pids", service.get("pids_limit"))
    cpus = memory = pids = None
    if cpus_value is not None:
        try:
            cpus = float(cpus_value)
        except (TypeError, ValueError):
            cpus = -1.0
        if not math.isfinite(cpus) or not 0 < cpus <= 256:
            raise where.error(
                f"{at}.deploy.resources.limits.cpus", f"'{cpus_value}' is not a CPU count"
            )
    if memory_value is not None:
        memory = parse_memory_mb(memory_value, where, f"{at}.deploy.resources.limits.memory")
    if pids_value is not None:
        if not isinstance(pids_value, int) or isinstance(pids_value, bool) or pids_value < 1:
            raise where.error(f"{at}.deploy.resources.limits.pids", "must be a positive number")
        pids = pids_value
    return cpus, memory, pids


def parse_build(
    value: Any, where: ComposeSource, at: str, environment_dir: Path
) -> tuple[str, str]:
    """(context relative to ``environment/``, Dockerfile relative to the context)."""
    if isinstance(value, str):
        context, dockerfile = value, "Dockerfile"
    elif isinstance(value, dict):
        unknown = sorted(set(value) - {"context", "dockerfile"})
        if unknown:
            raise where.error(
                f"{at}.{unknown[0]}", "not supported by factory (context and dockerfile are)"
            )
        context = str(value.get("context", "."))
        dockerfile = str(value.get("dockerfile", "Dockerfile"))
    else:
        raise where.error(at, "must be a folder or a mapping with context and dockerfile")
    for name, text in (("context", context), ("dockerfile", dockerfile)):
        if "://" in text or text.startswith("git@"):
            raise where.error(f"{at}.{name}", "remote build contexts cannot be fetched here")
        if posixpath.isabs(text):
            raise where.error(f"{at}.{name}", f"'{text}' must be relative to environment/")
    normal = posixpath.normpath(context)
    if normal == ".." or normal.startswith("../"):
        raise where.error(f"{at}.context", f"'{context}' is outside environment/")
    rel_dockerfile = posixpath.normpath(posixpath.join(normal, dockerfile))
    if rel_dockerfile == ".." or rel_dockerfile.startswith("../"):
        raise where.error(f"{at}.dockerfile", f"'{dockerfile}' is outside environment/")
    root = environment_dir.resolve()
    for name, rel in (("context", normal), ("dockerfile", rel_dockerfile)):
        # A symbolic link on the way (the folder itself, or one above it) would send what it
        # points at, the host's files, into the build and so into the image.
        real = (environment_dir / rel).resolve()
        if real != root and root not in real.parents:
            raise where.error(
                f"{at}.{name}", f"'{rel}' leads outside environment/ (a symbolic link)"
            )
    if not (environment_dir / normal).is_dir():
        raise where.error(f"{at}.context", f"'{context}' is not a folder in environment/")
    if not (environment_dir / rel_dockerfile).is_file():
        raise where.error(f"{at}.dockerfile", f"environment/{rel_dockerfile} is missing")
    return normal, posixpath.relpath(rel_dockerfile, normal)
