"""Host side of the BFCL importer: the multi-turn *base* category of the Berkeley Function
Calling Leaderboard (PyPI ``bfcl-eval``, Apache-2.0) as data, plus a ground-truth simulator.

``bfcl-eval`` itself is never imported (it pulls ~80 packages incl. torch-based
sentence-transformers and a pinned numpy); we only read its files, from one of

* a wheel (``pip download bfcl-eval --no-deps``), unpacked once into the factory cache;
* an unpacked wheel / source checkout / the ``bfcl_eval`` package directory itself;
* an installed ``bfcl_eval`` package (located with ``find_spec``, not imported).

Layout used (paths below the ``bfcl_eval`` package directory)::

    data/BFCL_v4_multi_turn_base.json                   questions, JSON lines
    data/possible_answer/BFCL_v4_multi_turn_base.json   ground truth, JSON lines, same ids
    data/multi_turn_func_doc/<class file>.json          function docs, JSON lines
    eval_checker/multi_turn_eval/func_source_code/*.py  the simulated API classes

The simulator itself lives in :mod:`factory.toolenv.bfcl_runtime` (stdlib only, so the
in-container tool server can ship the same file).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from factory.cache import cache_root
from factory.errors import BfclDataError
from factory.toolenv import bfcl_runtime as rt

PACKAGE = "bfcl_eval"
DISTRIBUTION = "bfcl-eval"
WHEEL_ENV = "FACTORY_BFCL_WHEEL"
CATEGORY = "multi_turn_base"

DATA_DIR = "data"
ANSWER_DIR = "data/possible_answer"
FUNC_DOC_DIR = "data/multi_turn_func_doc"
SOURCE_DIR = "eval_checker/multi_turn_eval/func_source_code"

#: API class -> function-doc file in FUNC_DOC_DIR (BFCL's MULTI_TURN_FUNC_DOC_FILE_MAPPING: each
#: class's docs are named after its source module, :data:`bfcl_runtime.CLASS_MODULES`).
FUNC_DOC_FILES: dict[str, str] = {name: f"{stem}.json" for name, stem in rt.CLASS_MODULES.items()}

#: BFCL parameter types -> JSON Schema types (BFCL's GORILLA_TO_OPENAPI, the part in use).
JSON_SCHEMA_TYPES: dict[str, str] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": "string",
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "array": "array",
}

_QUESTION_RE = re.compile(r"BFCL_v(\d+)_" + CATEGORY + r"\.json")
_WHEEL_RE = re.compile(r"bfcl_eval-([^-]+)-.*\.whl")


# --------------------------------------------------------------------------- models


class BfclSource(BaseModel):
    """Where the BFCL files were found; every path is absolute and exists."""

    model_config = ConfigDict(frozen=True)

    package_dir: Path
    origin: Literal["installed", "wheel", "directory"]
    version: str | None = None
    question_file: Path
    answer_file: Path
    func_doc_dir: Path
    source_dir: Path


class BfclMessage(BaseModel):
    role: str
    content: str


class BfclEntry(BaseModel):
    """One multi-turn base entry joined with its ground truth and function docs."""

    id: str
    question: list[list[BfclMessage]] = Field(description="turns, each a list of messages")
    ground_truth: list[list[str]] = Field(description="per turn, call strings like cd(folder='x')")
    initial_config: dict[str, dict[str, Any]]
    involved_classes: list[str]
    path: list[str] = Field(default_factory=list, description="'Class.method' of the solution")
    excluded_functions: list[str] = Field(default_factory=list)
    functions: list[dict[str, Any]] = Field(
        description="BFCL function docs of the involved classes, minus excluded_functions"
    )
    function_classes: dict[str, str] = Field(description="function name -> API class")

    @property
    def num_turns(self) -> int:
        return len(self.question)


# --------------------------------------------------------------------------- locating


def cache_dir() -> Path:
    """~/.cache/factory (honours FACTORY_CACHE_DIR and XDG_CACHE_HOME)."""
    return cache_root()


def find_wheel() -> Path | None:
    """$FACTORY_BFCL_WHEEL if set, else the newest ``wheels/bfcl_eval-*.whl`` in the cache."""
    if os.environ.get(WHEEL_ENV):
        return Path(os.environ[WHEEL_ENV]).expanduser()
    wheels = sorted((cache_dir() / "wheels").glob("bfcl_eval-*.whl"), key=_wheel_sort_key)
    return wheels[-1] if wheels else None


def _wheel_sort_key(path: Path) -> tuple[int, ...]:
    match = _WHEEL_RE.fullmatch(path.name)
    return tuple(int(p) for p in re.findall(r"\d+", match.group(1))) if match else ()


def locate_bfcl(source: Path | None = None) -> BfclSource:
    """Find the BFCL data root.

    ``source`` may be a ``bfcl_eval-*.whl``, an unpacked wheel or checkout (a directory that
    holds ``bfcl_eval/``) or the ``bfcl_eval`` package directory. Without it: $FACTORY_BFCL_WHEEL,
    then an installed ``bfcl_eval``, then a cached wheel (~/.cache/factory/wheels).
    """
    if source is not None:
        return _from_path(Path(source).expanduser())
    if os.environ.get(WHEEL_ENV):
        return _from_path(Path(os.environ[WHEEL_ENV]).expanduser())
    installed = _installed_package_dir()
    if installed is not None:
        return _validated(installed, "installed", _installed_version())
    wheel = find_wheel()
    if wheel is not None:
        return _from_path(wheel)
    raise BfclDataError(
        f"no BFCL data: {PACKAGE} is not installed, {WHEEL_ENV} is unset and there is no "
        f"{cache_dir() / 'wheels'}/bfcl_eval-*.whl"
    )


def _from_path(path: Path) -> BfclSource:
    if not path.exists():
        raise BfclDataError(f"{path} does not exist")
    if path.is_file():
        if path.suffix != ".whl":
            raise BfclDataError(f"{path} is neither a bfcl_eval wheel nor a directory")
        match = _WHEEL_RE.fullmatch(path.name)
        return _validated(unpack_wheel(path), "wheel", match.group(1) if match else None)
    for candidate in (path, path / PACKAGE):
        if (candidate / DATA_DIR).is_dir() and (candidate / "eval_checker").is_dir():
            return _validated(candidate, "directory", _dist_info_version(candidate.parent))
    raise BfclDataError(f"{path} holds neither {PACKAGE}/data nor data/ and eval_checker/")


def _installed_package_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec(PACKAGE)  # finds, does not execute, a top-level package
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _installed_version() -> str | None:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def _dist_info_version(parent: Path) -> str | None:
    for info in sorted(parent.glob("bfcl_eval-*.dist-info")):
        return info.name[len("bfcl_eval-") : -len(".dist-info")]
    return None


def _validated(package_dir: Path, origin: str, version: str | None) -> BfclSource:
    """Check the layout under ``package_dir``; name every missing piece."""
    question = _question_file(package_dir / DATA_DIR)
    answer = package_dir / ANSWER_DIR / question.name if question else None
    missing = [] if question else [f"{DATA_DIR}/BFCL_v*_{CATEGORY}.json"]
    if answer is not None and not answer.is_file():
        missing.append(f"{ANSWER_DIR}/{answer.name}")
    wanted = [f"{FUNC_DOC_DIR}/{name}" for name in FUNC_DOC_FILES.values()]
    wanted += [f"{SOURCE_DIR}/{stem}.py" for stem in rt.CLASS_MODULES.values()]
    missing += [rel for rel in wanted if not (package_dir / rel).is_file()]
    if missing or question is None or answer is None:
        raise BfclDataError(f"{package_dir} lacks {', '.join(missing)}")
    return BfclSource(
        package_dir=package_dir.resolve(),
        origin=origin,  # type: ignore[arg-type]
        version=version,
        question_file=question.resolve(),
        answer_file=answer.resolve(),
        func_doc_dir=(package_dir / FUNC_DOC_DIR).resolve(),
        source_dir=(package_dir / SOURCE_DIR).resolve(),
    )


def _question_file(data_dir: Path) -> Path | None:
    """The highest-versioned ``BFCL_v<N>_multi_turn_base.json`` in ``data_dir``."""
    found = [
        (int(m.group(1)), p)
        for p in data_dir.glob("BFCL_v*_*.json")
        if (m := _QUESTION_RE.fullmatch(p.name))
    ]
    return max(found)[1] if found else None


# --------------------------------------------------------------------------- wheel cache


def _wanted(member: str) -> bool:
    """Wheel members we unpack: multi-turn data, function docs and API sources."""
    parts = member.split("/")
    if ".." in parts or member.startswith("/") or not member.startswith(PACKAGE + "/"):
        return False
    rel = member[len(PACKAGE) + 1 :]
    return rel.startswith((FUNC_DOC_DIR + "/", SOURCE_DIR + "/")) or (
        rel.startswith(DATA_DIR + "/") and "multi_turn" in rel and "unused" not in rel
    )


def unpack_wheel(wheel: Path, dest_root: Path | None = None) -> Path:
    """Unpack the needed part of ``wheel`` once (keyed by content hash); return the package dir."""
    if not zipfile.is_zipfile(wheel):
        raise BfclDataError(f"{wheel} is not a wheel (zip) file")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:12]
    root = dest_root or cache_dir() / "bfcl"
    dest = root / f"{wheel.stem}-{digest}"
    if not (dest / PACKAGE).is_dir():
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=".unpack-"))
        try:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(tmp, [m for m in archive.namelist() if _wanted(m)])
            try:
                tmp.rename(dest)
            except OSError:  # another process won the race; its copy is identical
                if not (dest / PACKAGE).is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dest / PACKAGE


# --------------------------------------------------------------------------- loading


def _json_lines(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise BfclDataError(f"{path}:{number} is not valid JSON ({exc.msg})") from None
    return rows


def load_function_docs(src: BfclSource, class_name: str) -> list[dict[str, Any]]:
    """BFCL's function docs for one API class, in file order."""
    if class_name not in FUNC_DOC_FILES:
        raise BfclDataError(
            f"unknown BFCL API class {class_name!r} (known: {sorted(FUNC_DOC_FILES)})"
        )
    return _json_lines(src.func_doc_dir / FUNC_DOC_FILES[class_name])


def load_multi_turn_base(src: BfclSource) -> list[BfclEntry]:
    """All multi-turn base entries, in file order, joined with ground truth and function docs."""
    answers = {row["id"]: row["ground_truth"] for row in _json_lines(src.answer_file)}
    docs = {name: load_function_docs(src, name) for name in FUNC_DOC_FILES}
    entries = []
    for row in _json_lines(src.question_file):
        if row["id"] not in answers:
            raise BfclDataError(f"{src.answer_file} has no ground truth for {row['id']}")
        entries.append(_entry(row, answers[row["id"]], docs))
    return entries


def _entry(
    row: dict[str, Any], ground_truth: list[list[str]], docs: dict[str, list[dict[str, Any]]]
) -> BfclEntry:
    excluded = list(row.get("excluded_function") or [])
    functions: list[dict[str, Any]] = []
    owners: dict[str, str] = {}
    for class_name in row["involved_classes"]:
        if class_name not in docs:
            raise BfclDataError(f"entry {row['id']} involves unknown API class {class_name!r}")
        for doc in docs[class_name]:
            if doc["name"] not in excluded:
                functions.append(doc)
                owners[doc["name"]] = class_name
    if len(ground_truth) != len(row["question"]):
        raise BfclDataError(
            f"entry {row['id']}: {len(row['question'])} turns but {len(ground_truth)} answer turns"
        )
    return BfclEntry(
        id=row["id"],
        question=row["question"],
        ground_truth=ground_truth,
        initial_config=row.get("initial_config") or {},
        involved_classes=row["involved_classes"],
        path=row.get("path") or [],
        excluded_functions=excluded,
        functions=functions,
        function_classes=owners,
    )


def to_json_schema_tool(doc: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-style ``{"type": "function", ...}`` tool from one BFCL function doc.

    BFCL's own types (``dict``, ``float``, ...) become JSON Schema ones; ``response`` is dropped.
    """
    return {
        "type": "function",
        "function": {
            "name": doc["name"],
            "description": doc.get("description", ""),
            "parameters": _schema(doc.get("parameters") or {"type": "dict", "properties": {}}),
        },
    }


def _schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _schema(value) for key, value in node.items() if key != "properties"}
    if isinstance(node.get("type"), str):
        out["type"] = JSON_SCHEMA_TYPES.get(node["type"], "string")
    if isinstance(node.get("properties"), dict):
        out["properties"] = {name: _schema(sub) for name, sub in node["properties"].items()}
    return out


# --------------------------------------------------------------------------- simulating


def _instances(entry: BfclEntry, src: BfclSource) -> dict[str, object]:
    try:
        return rt.create_instances(src.source_dir, entry.involved_classes, entry.initial_config)
    except ImportError as exc:  # e.g. MathAPI needs mpmath
        raise BfclDataError(
            f"BFCL API module for {entry.id} cannot import {exc.name or exc} (pip install it)"
        ) from exc


def initial_state(entry: BfclEntry, src: BfclSource) -> dict[str, dict[str, Any]]:
    """The state of every involved instance right after ``_load_scenario``."""
    return rt.dump_state(_instances(entry, src))


def parsed_calls(
    texts: Iterable[str], error: type[Exception], where: str
) -> Iterator[tuple[str, list[Any], dict[str, Any]]]:
    """One turn's call strings as ``(name, args, kwargs)``, each parsed when it is reached; one
    that is not ``name(<literals>)`` raises ``error("<where>: <why>")``."""
    for text in texts:
        try:
            call = rt.parse_call(text)
        except ValueError as exc:
            raise error(f"{where}: {exc}") from None
        yield call


def simulate(entry: BfclEntry, src: BfclSource) -> list[dict[str, Any]]:
    """Execute the ground truth on fresh instances; one dict per turn, in order.

    Each dict: ``turn`` (index), ``calls`` (the call strings), ``results`` (BFCL's result
    string per call; failures read ``"Error during execution: ..."``) and ``state``
    (``{class: public attributes}`` after the turn, see :func:`bfcl_runtime.to_jsonable`).
    The last ``state`` is the final state. Deterministic: fresh modules, seeded RNGs, frozen
    clock. A call string that is not ``name(<literals>)`` raises :class:`BfclDataError`.
    """
    instances = _instances(entry, src)
    table = rt.method_table(instances)
    turns: list[dict[str, Any]] = []
    for index, calls in enumerate(entry.ground_truth):
        where = f"entry {entry.id}, turn {index}"
        results = [rt.execute(table, *call) for call in parsed_calls(calls, BfclDataError, where)]
        turns.append(
            {
                "turn": index,
                "calls": list(calls),
                "results": results,
                "state": rt.dump_state(instances),
            }
        )
    return turns


def execution_errors(turns: list[dict[str, Any]]) -> list[str]:
    """Result strings of a simulation that report an exception (not a function's own error)."""
    return [r for turn in turns for r in turn["results"] if r.startswith(rt.ERROR_PREFIX)]
