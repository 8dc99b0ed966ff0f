"""Run BFCL's simulated multi-turn APIs (GorillaFileSystem, TradingBot, ...) without BFCL.

It sits next to the tool backend it serves (:mod:`.bfcl_backend`). Standard library only, and no
import of anything in ``factory``, so the in-container tool server can ship this file verbatim
next to BFCL's ``func_source_code/*.py`` and behave exactly like the host-side simulation in
:mod:`factory.importers.bfcl`.

What it reproduces from ``bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils``:

* instantiation: ``cls()``, then (unless the class is stateless) ``_load_scenario(deepcopy(
  initial_config.get(cls_name, {})), long_context=False)``;
* dispatch: every public bound method of every involved instance, by bare name; when two
  classes share a name the one listed later in ``involved_classes`` wins (as in BFCL);
* results: a ``str`` result verbatim, a ``dict`` as ``json.dumps`` (``str`` if that fails),
  anything else ``str()``; an exception (or an unknown / forbidden name) becomes
  ``"Error during execution: <message>"``;
* state: the public (no leading ``_``) attributes of ``vars(instance)``, which is what BFCL's
  ``state_checker`` compares with ``!=`` after each turn.

Differences, all for determinism or safety: call strings are parsed with :mod:`ast` and only
literal arguments are accepted (BFCL uses ``eval``); modules are executed afresh for each
:func:`create_instances` so no state leaks between entries through module globals or mutable
default arguments; and ``datetime.now()``/``today()`` are frozen at :data:`FROZEN_NOW` in the
API modules that bind the ``datetime`` class (only TravelAPI's age check reads the clock).
"""

from __future__ import annotations

import ast
import copy
import datetime as _dt
import inspect
import json
import math
import sys
import types
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The absolute package BFCL's API modules import their siblings from.
SOURCE_PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"

#: API class -> module stem in ``func_source_code`` (BFCL's CLASS_FILE_PATH_MAPPING, base suite).
CLASS_MODULES: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}

#: Classes BFCL never calls ``_load_scenario`` on (BFCL's STATELESS_CLASSES).
STATELESS_CLASSES = frozenset({"MathAPI"})

#: Names BFCL refuses to execute, whatever instance has them.
FORBIDDEN_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})

#: The instant ``datetime.now()`` / ``datetime.today()`` return inside the API modules
#: (TradingBot's own fixed CURRENT_TIME, so all classes agree on "now").
FROZEN_NOW = _dt.datetime(2024, 9, 1, 10, 30)

ERROR_PREFIX = "Error during execution: "

JSON = Any


class _FrozenDatetime(_dt.datetime):
    """``datetime.datetime`` whose clock is stopped at :data:`FROZEN_NOW`."""

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW if tz is None else FROZEN_NOW.replace(tzinfo=tz)

    @classmethod
    def today(cls) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW


# --------------------------------------------------------------------------- module loading


@lru_cache(maxsize=64)
def _compiled(path: str, mtime_ns: int) -> tuple[types.CodeType, tuple[str, ...]]:
    """Compile ``path`` once and list the sibling modules it imports from SOURCE_PACKAGE."""
    source = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(source, filename=path)
    siblings: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        if node.level == 1 and "." not in node.module:
            siblings.append(node.module)
        elif node.level == 0 and node.module.startswith(SOURCE_PACKAGE + "."):
            siblings.append(node.module[len(SOURCE_PACKAGE) + 1 :])
    return compile(tree, path, "exec"), tuple(dict.fromkeys(siblings))


@contextmanager
def _aliased(modules: Mapping[str, types.ModuleType]) -> Iterator[None]:
    """Temporarily register ``modules`` in ``sys.modules`` (restoring what was there)."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


def _freeze_clock(module: types.ModuleType) -> None:
    """Rebind a module-level ``datetime`` class to the frozen one."""
    if module.__dict__.get("datetime") is _dt.datetime:
        module.datetime = _FrozenDatetime  # type: ignore[attr-defined]


def load_module(
    source_dir: Path, stem: str, loaded: dict[str, types.ModuleType] | None = None
) -> types.ModuleType:
    """Execute ``source_dir/<stem>.py`` as a fresh module, loading its sibling imports first.

    Nothing stays in ``sys.modules``: a sibling (``long_context``) is aliased under its BFCL
    name only while the importing module runs. ``loaded`` shares siblings within one load.
    """
    loaded = {} if loaded is None else loaded
    if stem in loaded:
        return loaded[stem]
    path = Path(source_dir) / f"{stem}.py"
    code, siblings = _compiled(str(path), path.stat().st_mtime_ns)
    deps = {name: load_module(source_dir, name, loaded) for name in siblings}
    module = types.ModuleType(f"_bfcl_api.{stem}")
    module.__file__ = str(path)
    module.__package__ = SOURCE_PACKAGE
    with _aliased({f"{SOURCE_PACKAGE}.{name}": mod for name, mod in deps.items()}):
        exec(code, module.__dict__)
    _freeze_clock(module)
    loaded[stem] = module
    return module


def create_instances(
    source_dir: Path,
    class_names: Iterable[str],
    initial_config: Mapping[str, Any],
    long_context: bool = False,
) -> dict[str, object]:
    """Instantiate each API class the way BFCL does, from freshly executed modules."""
    loaded: dict[str, types.ModuleType] = {}
    instances: dict[str, object] = {}
    for name in class_names:
        if name not in CLASS_MODULES:
            raise KeyError(f"unknown BFCL API class {name!r}; known: {sorted(CLASS_MODULES)}")
        module = load_module(source_dir, CLASS_MODULES[name], loaded)
        instance = getattr(module, name)()
        if name not in STATELESS_CLASSES:
            scenario = copy.deepcopy(dict(initial_config.get(name, {})))
            instance._load_scenario(scenario, long_context=long_context)
        instances[name] = instance
    return instances


# --------------------------------------------------------------------------- dispatch


def method_table(instances: Mapping[str, object]) -> dict[str, Any]:
    """Public bound methods by bare name; a later class overrides an earlier one (as BFCL)."""
    table: dict[str, Any] = {}
    for instance in instances.values():
        for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not name.startswith("_"):
                table[name] = method
    return table


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """Split ``"cd(folder='document')"`` into name, positional and keyword arguments.

    Only ``name(<literals>)`` is accepted; anything else raises ``ValueError``.
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"not a function call: {text!r} ({exc.msg})") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {text!r}")
    try:
        args = [ast.literal_eval(arg) for arg in node.args]
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("**kwargs")
            kwargs[keyword.arg] = ast.literal_eval(keyword.value)
    except ValueError:
        raise ValueError(f"arguments must be literals: {text!r}") from None
    return node.func.id, args, kwargs


def format_result(value: Any) -> str:
    """Render a return value the way BFCL feeds it back to the model."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def execute(
    table: Mapping[str, Any],
    name: str,
    args: Iterable[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> str:
    """Call ``name`` from ``table`` and return BFCL's result string (errors included)."""
    if name in FORBIDDEN_NAMES:
        return f"{ERROR_PREFIX}Function call {name} is not allowed."
    method = table.get(name)
    if method is None:
        return f"{ERROR_PREFIX}name '{name}' is not defined"
    try:
        return format_result(method(*list(args), **dict(kwargs or {})))
    except Exception as exc:  # noqa: BLE001 - BFCL reports every exception as a result
        return f"{ERROR_PREFIX}{exc}"


def execute_text(table: Mapping[str, Any], text: str) -> str:
    """Parse and execute one call string such as ``"mkdir(dir_name='temp')"``."""
    try:
        name, args, kwargs = parse_call(text)
    except ValueError as exc:
        return f"{ERROR_PREFIX}{exc}"
    return execute(table, name, args, kwargs)


# --------------------------------------------------------------------------- state


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int)):
        return json.dumps(key)
    return str(key)


def to_jsonable(value: Any, _ancestors: tuple[int, ...] = ()) -> JSON:
    """A deterministic JSON-able rendering of an attribute value.

    * ``str``/``int``/``bool``/``None`` and finite floats as they are; NaN/inf as strings;
    * ``dict``: keys made strings (``1`` -> ``"1"``; if that collides with an existing string
      key the non-string key becomes ``"<type>:<key>"``), insertion order kept;
    * ``list``/``tuple`` -> list; ``set``/``frozenset`` -> list sorted by JSON text;
    * ``date``/``datetime`` -> ISO string;
    * any other object with ``__dict__`` -> ``{"__class__": name, <public attrs>}``, omitting
      attributes that point back to an object being rendered (e.g. ``Directory.parent``) --
      this matches the ``__eq__`` of BFCL's File/Directory, which ignore ``parent`` and
      the private ``_last_modified`` timestamp;
    * anything else (functions, RNGs without ``__dict__``...) -> ``{"__unserialisable__": type}``.
    """
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if id(value) in _ancestors:
        return {"__cycle__": type(value).__name__}
    inner = (*_ancestors, id(value))
    if isinstance(value, Mapping):
        out: dict[str, JSON] = {}
        for key, item in value.items():
            text = _key(key)
            if text in out and not isinstance(key, str):
                text = f"{type(key).__name__}:{text}"
            out[text] = to_jsonable(item, inner)
        return out
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item, inner) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(item, inner) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if hasattr(value, "__dict__") and not callable(value):
        return {"__class__": type(value).__name__, **_public_attrs(value, inner)}
    return {"__unserialisable__": type(value).__name__}


def _public_attrs(obj: object, ancestors: tuple[int, ...]) -> dict[str, JSON]:
    """Public attributes of ``obj``; ones that refer back to an ancestor are left out."""
    out: dict[str, JSON] = {}
    for name, value in vars(obj).items():
        if name.startswith("_") or id(value) in ancestors:
            continue
        out[name] = to_jsonable(value, ancestors)
    return out


def instance_state(instance: object) -> dict[str, JSON]:
    """What BFCL's ``state_checker`` compares: the public attributes of ``vars(instance)``."""
    return _public_attrs(instance, (id(instance),))


def dump_state(instances: Mapping[str, object]) -> dict[str, dict[str, JSON]]:
    """``{class_name: instance_state(instance)}`` for every involved instance."""
    return {name: instance_state(instance) for name, instance in instances.items()}
