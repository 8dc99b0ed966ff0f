"""The layers of the ``factory`` package: no import circle, and no lower layer importing a higher
one. The graph is read from the source (every ``import`` statement, lazy ones inside functions
included), so a layering mistake fails here before it becomes a circle at run time."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

# Lowest first. A module may import modules of its own layer or of lower layers only. Every
# module of factory must belong to exactly one layer (the longest matching prefix wins).
LAYERS: list[tuple[str, list[str]]] = [
    ("foundation", ["factory", "factory.errors", "factory.vocabulary", "factory.fsutil"]),
    ("data files", ["factory.resources", "factory.datafiles", "factory.templating"]),
    # Container side: copied into task images and run there, stdlib only; the host imports it
    # (to compute expected states) but it imports nothing from the host.
    ("container side", ["factory.toolenv", "factory.webenv"]),
    ("external systems", ["factory.runtime", "factory.llm"]),
    ("task formats", ["factory.tasks"]),
    # Other formats in: Terminal-Bench 1 and BFCL become Harbor tasks (validate loads either
    # layout through them).
    ("importers", ["factory.importers"]),
    ("images", ["factory.images"]),
    # Where units of work run (this machine; factory.distributed adds Ray further up).
    ("executor", ["factory.executor"]),
    ("validation", ["factory.validate"]),
    ("quality checks", ["factory.quality"]),
    ("families", ["factory.families"]),
    # The episode harness, eval, and the seam the trainer plugs into.
    ("agents", ["factory.agent", "factory.trainer_plugin"]),
    # Reference solutions found by an agent for tasks that ship none (factory solve).
    ("solving", ["factory.solve"]),
    ("generation", ["factory.generate"]),
    ("suites", ["factory.calibrate", "factory.publish"]),
    ("distribution", ["factory.distributed"]),
    ("command line", ["factory.cli", "factory.__main__"]),
]

REPO = Path(__file__).resolve().parents[2]


def _modules() -> dict[str, Path]:
    """Module name -> source file, following packages whose ``__path__`` points elsewhere
    (the container-side packages live outside ``factory/``)."""
    found: dict[str, Path] = {}
    pending = [("factory", [REPO / "factory"])]
    while pending:
        package, paths = pending.pop()
        for root in paths:
            for path in sorted(Path(root).iterdir()):
                if path.name == "__init__.py":
                    found[package] = path
                elif path.suffix == ".py":
                    found[f"{package}.{path.stem}"] = path
                elif path.is_dir() and (
                    (path / "__init__.py").is_file() or (path / "family.py").is_file()
                ):
                    name = f"{package}.{path.name}"
                    pending.append((name, list(importlib.import_module(name).__path__)))
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    anchor = ".".join(parts[: len(parts) - node.level + 1])
                    base = f"{anchor}.{base}" if base else anchor
                # `from package import module` names the module; `from module import name`
                # the module
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            else:
                continue
            for target in targets:
                resolved = _resolve(target, modules) if target.startswith("factory") else None
                if resolved and resolved != name:
                    graph[name].add(resolved)
    return graph


def _layer(module: str) -> int:
    best = (-1, -1)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best[0]:
                best = (len(prefix), index)
    return best[1]


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return _graph()


def test_every_module_has_a_layer(graph):
    assert "factory.vocabulary" in graph and "factory.families.base" in graph
    assert [m for m in sorted(graph) if _layer(m) < 0] == []


def test_no_lower_layer_imports_a_higher_one(graph):
    upward = {
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if _layer(target) > _layer(module)
    }
    described = [
        f"{m} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
        for m, t in sorted(upward)
    ]
    assert described == []


def test_no_import_circles(graph):
    assert sorted(sorted(c) for c in _cycles(graph)) == []


def test_the_checks_catch_a_circle_and_an_upward_arrow():
    graph = {"factory.families.x": {"factory.generate.y"}, "factory.generate.y": set()}
    assert _layer("factory.families.x") < _layer("factory.generate.y")  # families below generate
    graph["factory.generate.y"].add("factory.families.x")
    assert _cycles(graph) == [{"factory.families.x", "factory.generate.y"}]
