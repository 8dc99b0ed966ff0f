"""What Harbor (the PyPI package, 0.26) accepts in ``task.toml``, as data for `factory lint`.

factory's own :class:`~factory.tasks.config.TaskConfig` keeps unknown keys (it must round-trip
other tools' files), so it cannot tell which keys Harbor would call unknown. These tables can.
Update them with Harbor: ``harbor.models.task.config`` is the source.
"""

from __future__ import annotations

CURRENT_SCHEMA_VERSION = "1.4"
"""``TaskConfig.schema_version``'s default in the Harbor release these tables follow."""

MCP_TRANSPORTS = ("stdio", "sse", "streamable-http")
"""MCP transports Harbor's schema names (it quietly rewrites a legacy ``"http"``)."""

TASK_NAME_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$"
"""``[task].name``: ``org/name``."""

_NETWORK = {"network_mode", "allowed_hosts"}
_ENVIRONMENT = {
    "build_timeout_sec",
    "docker_image",
    "os",
    "cpus",
    "memory_mb",
    "storage_mb",
    "gpus",
    "gpu_types",
    "tpu",
    "mcp_servers",
    "env",
    "skills_dir",
    "healthcheck",
    "workdir",
    "allow_internet",
    "memory",
    "storage",
    *_NETWORK,
}

# Known keys per table. A value that is a string names another table (its keys are checked
# too); "list:<table>" a list of such tables; None a leaf (any value).
TABLES: dict[str, dict[str, str | None]] = {
    "task.toml": {
        "schema_version": None,
        "version": None,
        "source": None,
        "multi_step_reward_strategy": None,
        "task": "task",
        "metadata": None,
        "verifier": "verifier",
        "agent": "agent",
        "environment": "environment",
        "solution": "solution",
        "steps": None,
        "artifacts": None,
    },
    "task": {
        "name": None,
        "version": None,
        "description": None,
        "authors": "list:author",
        "keywords": None,
    },
    "author": {"name": None, "email": None},
    "verifier": {
        "timeout_sec": None,
        "env": None,
        "user": None,
        "environment_mode": None,
        "environment": "environment",
        "collect": None,
        **dict.fromkeys(_NETWORK),
    },
    "agent": {"timeout_sec": None, "user": None, **dict.fromkeys(_NETWORK)},
    "solution": {"env": None},
    "environment": {
        **dict.fromkeys(_ENVIRONMENT),
        "healthcheck": "healthcheck",
        "mcp_servers": "list:mcp_server",
        "tpu": "tpu",
    },
    "healthcheck": dict.fromkeys(
        (
            "command",
            "interval_sec",
            "timeout_sec",
            "start_period_sec",
            "start_interval_sec",
            "retries",
        )
    ),
    "mcp_server": dict.fromkeys(("name", "transport", "url", "command", "args", "headers")),
    "tpu": {"type": None, "topology": None},
}


def unknown_keys(data: object, table: str = "task.toml", prefix: str = "") -> list[str]:
    """Dotted paths of the keys in ``data`` that Harbor's schema does not know."""
    if not isinstance(data, dict):
        return []
    known = TABLES[table]
    found: list[str] = []
    for key, value in data.items():
        where = f"{prefix}.{key}" if prefix else str(key)
        if key not in known:
            found.append(where)
            continue
        child = known[key]
        if child is None:
            continue
        if child.startswith("list:"):
            if isinstance(value, list):
                for index, item in enumerate(value):
                    found += unknown_keys(item, child[5:], f"{where}[{index}]")
        else:
            found += unknown_keys(value, child, where)
    return found
