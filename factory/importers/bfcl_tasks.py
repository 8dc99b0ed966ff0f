"""BFCL multi-turn base entries -> Harbor tool tasks that run offline (`factory import --format bfcl`).

One task per entry (``bfcl-multi-turn-base-<n>``)::

    instruction.md            the user's turns as one numbered list of requests + how to call tools
    environment/Dockerfile    python:3.12-slim-bookworm (+ python3-mpmath for MathAPI entries)
    environment/toolenv/      our tool server with the BFCL backend and bfcl_runtime
    environment/bfcl_api/     BFCL's sources of the involved API classes (+ long_context.py)
    environment/bfcl_task.json  the entry's classes, initial_config and tools
    environment/start-tools.sh  ENTRYPOINT: starts the server on 127.0.0.1:8000
    solution/solve.sh         the ground-truth calls replayed with `tool call` (arguments by name)
    tests/ground_truth.json   the entry's classes, initial_config and ground-truth call strings
    tests/bfcl_runtime.py, tests/bfcl_api/   the simulator again, for the verifier
    tests/test_outputs.py     final-state check + response check through GET /state

The verifier simulates the ground truth itself, with the container's Python: result strings hold
floats whose last digits depend on the interpreter (``sum`` of floats changed in Python 3.12), so
an expectation computed on the host would not match on every image.

Before a task is written, its reference solution is replayed on the host through the very backend
the container serves (arguments by name, after a JSON round trip); an entry whose replay does not
reproduce the simulated results and final state is skipped with the reason, as is one whose
do-nothing run would pass. Nothing stops the batch: the report lists every skip.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.errors import BfclDataError
from factory.fsutil import staged_directory, write_text_atomic
from factory.importers import bfcl
from factory.resources import templates_dir, toolenv_dir
from factory.tasks.config import (
    AgentConfig,
    EnvironmentConfig,
    FactoryProvenance,
    NetworkMode,
    TaskConfig,
    TaskSection,
    VerifierConfig,
    unique,
)
from factory.tasks.model import load_harbor_task
from factory.tasks.new_config import new_task_config
from factory.tasks.tool_server import HEALTHCHECK, TOOL_PORT, mcp_servers
from factory.templating import render
from factory.toolenv import bfcl_runtime as rt
from factory.toolenv.bfcl_backend import BfclBackend

SOURCE = "import:bfcl-multi-turn-base"
LICENSE = "Apache-2.0"
REPORT_NAME = ".bfcl-import.json"
"""Import report in the output folder (hidden: ``DIR/*`` globs only the tasks)."""
TEMPLATES = "import/bfcl"
TOOLENV_DIR = toolenv_dir()  # environments/tools/toolenv
_KIT_FILES = ("__init__.py", "core.py", "server.py", "mcp.py", "cli.py", "bfcl_backend.py")
#: BFCL module every API class imports (its long-context filler data).
_SHARED_MODULES = ("long_context",)

#: How the instruction names each API class.
SYSTEMS: dict[str, str] = {
    "GorillaFileSystem": "a file system",
    "MathAPI": "a calculator",
    "MessageAPI": "a messaging service",
    "TwitterAPI": "a Twitter account",
    "TicketAPI": "a support-ticket system",
    "TradingBot": "a stock-trading account",
    "TravelAPI": "a travel-booking service",
    "VehicleControlAPI": "a car's controls",
}
#: Debian packages an API class needs in the container.
PACKAGES: dict[str, list[str]] = {"MathAPI": ["python3-mpmath"]}


class BfclSkip(Exception):
    """An entry that cannot become a fail-to-pass task; the message says why."""


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments)


@dataclass
class EntryResult:
    entry_id: str
    task_id: str
    dest: Path | None = None
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None


@dataclass
class ImportReport:
    source: str
    version: str | None
    results: list[EntryResult] = field(default_factory=list)

    @property
    def imported(self) -> list[EntryResult]:
        return [r for r in self.results if r.skipped is None]

    @property
    def skipped(self) -> list[EntryResult]:
        return [r for r in self.results if r.skipped is not None]

    def to_json(self) -> str:
        return json.dumps(
            {
                "source": self.source,
                "version": self.version,
                "imported": len(self.imported),
                "skipped": len(self.skipped),
                "tasks": [
                    {
                        "entry": r.entry_id,
                        "task": r.task_id,
                        **({"path": str(r.dest)} if r.dest else {}),
                        **({"skipped": r.skipped} if r.skipped else {}),
                    }
                    for r in self.results
                ],
            },
            indent=2,
        )


# --------------------------------------------------------------------------- naming


def task_id_for(entry_id: str) -> str:
    """``multi_turn_base_12`` -> ``bfcl-multi-turn-base-12``."""
    return "bfcl-" + re.sub(r"[^a-z0-9]+", "-", entry_id.lower()).strip("-")


def select_entries(
    entries: list[bfcl.BfclEntry], ids: list[str] | None = None, limit: int | None = None
) -> list[bfcl.BfclEntry]:
    """Entries named by ``ids`` (BFCL id, task id or bare number), in file order, then ``limit``."""
    chosen = entries
    if ids:
        by_key: dict[str, bfcl.BfclEntry] = {}
        for entry in entries:
            by_key[entry.id] = by_key[task_id_for(entry.id)] = entry
            by_key[entry.id.rsplit("_", 1)[-1]] = entry
        unknown = [i for i in ids if i not in by_key]
        if unknown:
            raise BfclDataError(f"no multi-turn base entry {', '.join(unknown)}")
        wanted = {by_key[i].id for i in ids}
        chosen = [e for e in entries if e.id in wanted]
    return chosen if limit is None else chosen[:limit]


# --------------------------------------------------------------------------- calls


def named_arguments(doc: dict[str, Any], args: list[Any], kwargs: dict[str, Any]) -> dict:
    """Keyword arguments for a call written ``name(a, b, k=v)``: positional ones take the
    parameter names of the function doc, in the doc's order."""
    params = list((doc.get("parameters") or {}).get("properties") or {})
    if len(args) > len(params):
        raise BfclSkip(
            f"{doc['name']} takes {len(params)} parameter(s) but the ground truth passes "
            f"{len(args)} positionally"
        )
    named = dict(zip(params, args, strict=False))
    clash = sorted(set(named) & set(kwargs))
    if clash:
        raise BfclSkip(f"{doc['name']}: {', '.join(clash)} given both by position and by name")
    return {**named, **kwargs}


def ground_truth_calls(entry: bfcl.BfclEntry) -> list[list[Call]]:
    """The entry's ground truth as calls with named arguments, per turn."""
    docs = {doc["name"]: doc for doc in entry.functions}
    turns = []
    for index, texts in enumerate(entry.ground_truth):
        calls = []
        for name, args, kwargs in bfcl.parsed_calls(texts, BfclSkip, f"turn {index + 1}"):
            if name not in docs:
                raise BfclSkip(f"turn {index + 1}: {name} is not among the entry's tools")
            calls.append(Call(name, named_arguments(docs[name], args, kwargs)))
        turns.append(calls)
    return turns


# --------------------------------------------------------------------------- conversion


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value))


def backend_config(entry: bfcl.BfclEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "involved_classes": entry.involved_classes,
        "initial_config": entry.initial_config,
        "tools": [bfcl.to_json_schema_tool(doc) for doc in entry.functions],
        "source_dir": "bfcl_api",
    }


def replay(entry: bfcl.BfclEntry, src: bfcl.BfclSource, calls: list[list[Call]]) -> BfclBackend:
    """The reference solution run through the backend the container serves (JSON arguments)."""
    backend = BfclBackend(backend_config(entry), src.source_dir)
    for turn in calls:
        for call in turn:
            backend.call(call.name, _jsonable(call.arguments))
    return backend


def check_entry(
    entry: bfcl.BfclEntry, src: bfcl.BfclSource
) -> tuple[list[list[Call]], dict[str, Any], dict[str, Any]]:
    """(calls by name per turn, initial state, final state); raises BfclSkip when the entry
    cannot be a fail-to-pass task."""
    turns = bfcl.simulate(entry, src)
    errors = bfcl.execution_errors(turns)
    if errors:
        raise BfclSkip(f"the ground truth fails to execute: {errors[0][:200]}")
    calls = ground_truth_calls(entry)
    backend = replay(entry, src, calls)
    got = [item["result"] for item in backend.log]
    want = [result for turn in turns for result in turn["results"]]
    if got != want:
        first = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), len(got)
        )
        raise BfclSkip(
            "replaying the ground truth with named JSON arguments gives "
            f"{(got[first:] or ['nothing'])[0][:120]!r} instead of "
            f"{(want[first:] or ['nothing'])[0][:120]!r} (call {first + 1})"
        )
    final = _jsonable(turns[-1]["state"])
    if _jsonable(backend.snapshot()["state"]) != final:
        raise BfclSkip("replaying the ground truth with named JSON arguments ends in another state")
    initial = _jsonable(bfcl.initial_state(entry, src))
    if final == initial and not want:
        raise BfclSkip("a run without any call would pass: no state change and no results")
    return calls, initial, final


def conversion_notes(
    entry: bfcl.BfclEntry, src: bfcl.BfclSource, *, unchanged_state: bool
) -> list[str]:
    notes = [
        f"imported from BFCL (bfcl-eval {src.version or '?'}, {LICENSE}) entry {entry.id}; "
        f"data and API sources are the Berkeley Function Calling Leaderboard's, {LICENSE}",
        f"multi-turn flattened: the {entry.num_turns} user turns form one instruction, a "
        "numbered list of requests in order (BFCL feeds them one at a time after each reply)",
        "per-turn checks replaced: the final state must equal the ground truth's (BFCL's state "
        "rule: all public attributes of every API instance, checked here after the last request "
        "only) and every turn's ground-truth result strings must appear among the results of all "
        "calls made (BFCL's response check against the calls 'so far' becomes: over the episode)",
        "tools served over HTTP/MCP with JSON arguments by name (BFCL: Python call syntax); "
        "results are BFCL's result strings; clock frozen at 2024-09-01 10:30; the reference "
        "solution names positional ground-truth arguments after the function docs",
    ]
    if entry.excluded_functions:
        notes.append(
            f"excluded_function {', '.join(entry.excluded_functions)}: not offered as tools and "
            "refused by the tool server (the entry's data excludes them; bfcl-eval's own loader "
            "no longer drops them from the function docs)"
        )
    empty = [str(i + 1) for i, calls in enumerate(entry.ground_truth) if not calls]
    if empty:
        notes.append(
            f"request(s) {', '.join(empty)} have no ground-truth call; BFCL's irrelevance check "
            "(no call in that turn) is not enforced, only the final state"
        )
    if unchanged_state:
        notes.append(
            "the ground truth leaves the state as it was: only the response check tells a run "
            "that does nothing from a correct one"
        )
    if any(c in PACKAGES for c in entry.involved_classes):
        notes.append("MathAPI needs mpmath: python3-mpmath is installed at build time")
    return notes


def convert_entry(entry: bfcl.BfclEntry, src: bfcl.BfclSource, dest: Path) -> list[str]:
    """Write the task for ``entry`` into ``dest`` (replaced); returns the conversion notes.

    Raises :class:`BfclSkip` (nothing written) when the entry cannot be a fail-to-pass task.
    """
    calls, initial, final = check_entry(entry, src)
    notes = conversion_notes(entry, src, unchanged_state=final == initial)
    task_id = task_id_for(entry.id)
    packages = sorted({p for c in entry.involved_classes for p in PACKAGES.get(c, [])})
    context = {
        "entry_id": entry.id,
        "port": TOOL_PORT,
        "systems": _systems(entry.involved_classes),
        "requests": [" ".join(m.content.strip() for m in turn) for turn in entry.question],
        "turns": [{"calls": turn} for turn in calls],
        "packages": packages,
    }
    ground_truth = {
        "entry": entry.id,
        "port": TOOL_PORT,
        "involved_classes": entry.involved_classes,
        "initial_config": entry.initial_config,
        "ground_truth": entry.ground_truth,
    }
    with staged_directory(dest) as staging:
        env_dir = staging / "environment"
        kit = env_dir / "toolenv"
        kit.mkdir(parents=True)
        for rel in _KIT_FILES:
            shutil.copyfile(TOOLENV_DIR / rel, kit / rel)
        shutil.copyfile(rt.__file__, kit / "bfcl_runtime.py")
        tests = staging / "tests"
        modules = [*_SHARED_MODULES, *(rt.CLASS_MODULES[c] for c in entry.involved_classes)]
        for folder in (env_dir, tests):  # the server's copy and the verifier's
            (folder / "bfcl_api").mkdir(parents=True)
            for stem in dict.fromkeys(modules):
                shutil.copyfile(src.source_dir / f"{stem}.py", folder / "bfcl_api" / f"{stem}.py")
        _write(env_dir / "bfcl_task.json", json.dumps(backend_config(entry), indent=1) + "\n")
        _write(env_dir / "Dockerfile", render(f"{TEMPLATES}/Dockerfile.j2", **context))
        _write(env_dir / "start-tools.sh", render(f"{TEMPLATES}/start-tools.sh.j2", **context), 1)
        _write(staging / "instruction.md", render(f"{TEMPLATES}/instruction.md.j2", **context))
        _write(staging / "solution/solve.sh", render(f"{TEMPLATES}/solve.sh.j2", **context), 1)
        _write(tests / "test.sh", render("families/_shared/pytest_test.sh.j2"), 1)
        shutil.copyfile(templates_dir() / TEMPLATES / "test_outputs.py", tests / "test_outputs.py")
        shutil.copyfile(rt.__file__, tests / "bfcl_runtime.py")
        _write(tests / "ground_truth.json", json.dumps(ground_truth, indent=1) + "\n")
        _write(staging / "task.toml", _config(entry, src, task_id, notes).to_toml())
    load_harbor_task(dest)  # the layout must load like any other task
    return notes


def _write(path: Path, text: str, executable: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)


def _systems(classes: list[str]) -> str:
    names = [f"{SYSTEMS.get(c, c)} ({c})" for c in classes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _config(
    entry: bfcl.BfclEntry, src: bfcl.BfclSource, task_id: str, notes: list[str]
) -> TaskConfig:
    classes = [c.lower() for c in entry.involved_classes]
    return new_task_config(
        FactoryProvenance(
            source=SOURCE, source_path=f"{src.question_file}#{entry.id}", notes=notes
        ),
        task=TaskSection(
            name=task_id,
            description=f"BFCL multi-turn base entry {entry.id}, {entry.num_turns} requests",
            keywords=unique(["tool-use", "bfcl", "multi-turn", *classes]),
        ),
        metadata={
            "category": "tool-use",
            "tags": unique(["tool-use", "bfcl", "multi-turn", *classes]),
            "license": LICENSE,
            "bfcl_id": entry.id,
        },
        verifier=VerifierConfig(timeout_sec=120.0),
        agent=AgentConfig(timeout_sec=900.0),
        environment=EnvironmentConfig(
            network_mode=NetworkMode.NO_NETWORK,
            cpus=1,
            memory_mb=1024,
            healthcheck=dict(HEALTHCHECK),
            mcp_servers=mcp_servers("bfcl"),
        ),
    )


# --------------------------------------------------------------------------- batch


def import_bfcl(
    out: Path,
    *,
    source: Path | None = None,
    ids: list[str] | None = None,
    limit: int | None = None,
    on_result: Any = None,
) -> ImportReport:
    """Import multi-turn base entries into ``out``; writes the report ``out/.bfcl-import.json``."""
    src = bfcl.locate_bfcl(source)
    entries = select_entries(bfcl.load_multi_turn_base(src), ids, limit)
    report = ImportReport(source=str(source or src.package_dir), version=src.version)
    out.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        result = EntryResult(entry.id, task_id_for(entry.id))
        try:
            result.notes = convert_entry(entry, src, out / result.task_id)
            result.dest = out / result.task_id
        except (BfclSkip, BfclDataError) as exc:
            result.skipped = str(exc)
        report.results.append(result)
        if on_result is not None:
            on_result(result)
    write_text_atomic(out / REPORT_NAME, report.to_json() + "\n")
    return report
