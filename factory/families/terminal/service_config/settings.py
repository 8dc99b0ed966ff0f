"""The settings of a service-config service: names, sections and keys per format (names.toml),
their docs, and rendering a configuration file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from factory.datafiles import load_toml_model

SC_FORMATS = {"ini": "conf", "toml": "toml", "yaml": "yaml", "env": "env"}
SC_FORMAT_DOC = {
    "ini": "an INI file: [section] headers, `key = value` lines, `;` or `#` comments",
    "toml": "a TOML file: [section] tables; strings quoted, integers and booleans bare",
    "yaml": "a YAML-style file: an unindented `section:` line, then indented `key: value` lines",
    "env": "an environment-style file: `SECTION_KEY=value` lines (no sections), `#` comments",
}
SC_FAULTS = ["port", "bind", "data", "maintenance", "no_auth", "typo"]
"""Faults of the service's own configuration file (plus ``name``)."""
SC_SYSTEM_FAULTS = [
    "env-override",
    "env-config-path",
    "token-perms",
    "log-dir-missing",
    "log-dir-owner",
    "stale-pid",
]
"""Faults around the service (medium and hard): what the launcher loads, the token file's
permissions, the log directory, a PID file left behind."""
SC_TRAP_NAMES = {
    "env-override": "the environment file overrides the port",
    "env-config-path": "the environment file points at another configuration file",
    "token-perms": "the service user cannot read the token file",
    "log-dir-missing": "the log directory does not exist",
    "log-dir-owner": "the log directory belongs to root",
    "stale-pid": "a PID file names a live process",
}
SC_FRONT_FAULTS = ["upstream-port", "upstream-token", "front-bind", "front-port"]
"""Faults of the second service's configuration (hard, when there is one)."""

SC_DOCS = {
    "bind": ("str", "address to listen on (default 0.0.0.0, all interfaces)"),
    "port": ("int", "TCP port (required)"),
    "name": ("str", "service name reported by the API (default: the program name)"),
    "data": ("str", "file listing the entries, one per line (required)"),
    "maintenance": ("bool", "true/false: answer 503 on the API route (default false)"),
    "token_file": ("str", "file holding the bearer token that protects the API route"),
    "token": ("str", "the bearer token itself (alternative to the token file)"),
    "log_file": ("str", "access log file, one line per request (default: no log)"),
    "url": ("str", "base URL of the upstream service, e.g. http://host:port (required)"),
    "up_token_file": ("str", "file holding the upstream's bearer token (required)"),
}

SECTIONS = ("server", "app", "auth", "log", "upstream")
"""The configuration's sections, by their logical names."""


class _Names(BaseModel):
    """The names a task draws (names.toml)."""

    model_config = ConfigDict(extra="forbid")

    roles: list[str]
    front_roles: list[str]
    nouns: list[str]
    words: list[str]
    health: list[str]
    sections: dict[str, list[str]]
    """Per section of the configuration (those of :data:`SECTIONS`): the names it may get."""
    keys: dict[str, list[str]]
    """Per logical setting (those of :data:`SC_DOCS`): the names its key may get."""

    @model_validator(mode="after")
    def _complete(self) -> _Names:
        if sorted(self.sections) != sorted(SECTIONS):
            raise ValueError(f"sections: must name exactly {', '.join(SECTIONS)}")
        if sorted(self.keys) != sorted(SC_DOCS):
            raise ValueError(f"keys: must name exactly the settings {', '.join(SC_DOCS)}")
        return self


SC_NAMES = load_toml_model(Path(__file__).parent / "names.toml", _Names, "service-config names")


def _sc_sections(
    schema: dict[str, tuple[str, str, str, Any]], settings: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """A configuration, {section: {key: value}}, from logical settings (``schema``: logical
    name -> (section, key, type, default)); a None value leaves the setting out."""
    out: dict[str, dict[str, Any]] = {}
    for logical, value in settings.items():
        if value is None:
            continue
        section, k = schema[logical][0], schema[logical][1]
        out.setdefault(section, {})[k] = value
    return out


def _sc_render(fmt: str, svc: str, values: dict[str, dict[str, Any]]) -> str:
    """Render {section: {key: value}} in one of the config formats."""

    def scalar(v: Any, quote: bool) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int) or not quote:
            return str(v)
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [f"# {svc} configuration"]
    for section, table in values.items():
        if not table:
            continue
        if fmt == "env":
            lines += [f"{section}_{k}".upper() + f"={scalar(v, False)}" for k, v in table.items()]
            continue
        lines.append("")
        if fmt == "yaml":
            lines.append(f"{section}:")
            lines += [f"  {k}: {scalar(v, False)}" for k, v in table.items()]
        else:
            lines.append(f"[{section}]")
            lines += [f"{k} = {scalar(v, fmt == 'toml')}" for k, v in table.items()]
    return "\n".join(lines) + "\n"
