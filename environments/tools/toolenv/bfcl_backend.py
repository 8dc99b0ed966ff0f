"""Tool-server backend for tasks imported from BFCL's multi-turn category (stdlib only).

The server (``python3 -m toolenv.server --backend bfcl --config bfcl_task.json``) serves the
entry's API classes (GorillaFileSystem, TradingBot, ...) run from BFCL's own sources by
``bfcl_runtime`` (copied into the task next to this module), exactly as the importer's host-side
ground-truth simulation runs them.

The config file (JSON) holds:

* ``id``                 the BFCL entry id;
* ``involved_classes``   API classes, in BFCL's order (it decides clashes between method names);
* ``initial_config``     BFCL's per-class scenario;
* ``tools``              the functions offered, in OpenAI's tool format (the entry's function
                         docs minus its ``excluded_function``); nothing else can be called;
* ``source_dir``         folder of BFCL's ``func_source_code/*.py`` (relative: to the config);
* ``policy``             optional text for ``/policy`` and the MCP instructions.

A call takes JSON arguments by name and runs the method as ``method(**arguments)``. Its result is
BFCL's result string (a dict return value as ``json.dumps``, an exception as ``"Error during
execution: ..."``); the agent gets a JSON-object result decoded, the log keeps the exact string
under ``result``, which is what BFCL's response check compares.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import bfcl_runtime as rt  # its neighbour, on the host and in a task container

DEFAULT_POLICY = (
    "These tools operate simulated systems ({classes}). Their state exists only behind the tools: "
    "act through tool calls, one request at a time, and use what earlier calls returned."
)


class BfclBackend:
    """BFCL API instances behind the tool server (see the module docstring)."""

    name = "bfcl"

    def __init__(self, config: dict[str, Any], source_dir: Path) -> None:
        self.entry_id = str(config.get("id", "bfcl"))
        self.involved_classes = list(config["involved_classes"])
        self.initial_config = config.get("initial_config") or {}
        self.source_dir = Path(source_dir)
        self.tools = {tool["function"]["name"]: tool for tool in config["tools"]}
        self.policy = config.get("policy") or DEFAULT_POLICY.format(
            classes=", ".join(self.involved_classes)
        )
        self.log: list[dict] = []
        self.reset()

    @classmethod
    def from_file(cls, path: Path) -> BfclBackend:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
        source = Path(config.get("source_dir", "bfcl_api"))
        return cls(config, source if source.is_absolute() else Path(path).parent / source)

    # --- the Backend protocol of toolenv.server ------------------------------------------
    def reset(self) -> None:
        self.instances = rt.create_instances(
            self.source_dir, self.involved_classes, self.initial_config
        )
        table = rt.method_table(self.instances)
        self.table = {name: method for name, method in table.items() if name in self.tools}
        self.log = []

    def openai_tools(self) -> list[dict]:
        return list(self.tools.values())

    def mcp_tools(self) -> list[dict]:
        return [
            {
                "name": tool["function"]["name"],
                "description": tool["function"].get("description", ""),
                "inputSchema": tool["function"]["parameters"],
            }
            for tool in self.tools.values()
        ]

    def call(self, name: str, arguments: Any) -> dict:
        """Run one call; ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ...}``."""
        if name not in self.table:
            text = f"unknown tool '{name}'; tools: {', '.join(sorted(self.tools))}"
            result = rt.ERROR_PREFIX + text
        elif not isinstance(arguments, dict):
            result = rt.ERROR_PREFIX + f"{name}: arguments must be a JSON object"
        else:
            result = rt.execute(self.table, name, (), arguments)
        ok = not result.startswith(rt.ERROR_PREFIX)
        self.log.append({"tool": name, "arguments": arguments, "ok": ok, "result": result})
        if not ok:
            return {"ok": False, "error": result}
        return {"ok": True, "result": decoded(result)}

    def changes_state(self, name: str, outcome: dict) -> bool:
        return True  # any method may change its instance; dumping the state is cheap

    def snapshot(self) -> dict:
        return {"state": rt.dump_state(self.instances), "log": list(self.log)}


def decoded(result: str) -> Any:
    """A result string that is a JSON object, decoded (BFCL's dict results); else the string."""
    if result.startswith("{"):
        try:
            return json.loads(result)
        except ValueError:
            pass
    return result
