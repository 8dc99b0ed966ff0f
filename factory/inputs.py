"""Reading files that users and task authors wrote, with bounds.

A taxonomy, a ``task.toml`` or a ``task.yaml`` may be hostile or broken: huge, not UTF-8, nested
thousands of levels deep, or a YAML "billion laughs" whose aliases expand to gigabytes. Every
reader here checks size, encoding, nesting depth and (for YAML) the expanded size *before* the
data reaches pydantic, and fails with a :class:`TaskFormatError` that names the file, so the
user sees one line and the process never grows without bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from factory.compat import tomllib
from factory.errors import TaskFormatError

MAX_CONFIG_BYTES = 1 << 20
"""task.toml, task.yaml, docker-compose.yaml, instruction.md, Dockerfile: 1 MiB each."""
MAX_TAXONOMY_BYTES = 4 << 20
"""A taxonomy file (it may carry long LLM prompts in its params): 4 MiB."""
MAX_DEPTH = 32
"""Nesting of tables/lists/mappings in any config file."""
MAX_YAML_NODES = 200_000
"""Nodes of a YAML document once every alias is expanded (what a consumer walks)."""


def special_file_kind(mode: int) -> str | None:
    """'a FIFO', 'a socket', 'a device node', or None for files, folders and links."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node"
    return None


def read_text(path: Path, *, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of a regular file, at most ``max_bytes``; errors name the file.

    A FIFO or device is refused without opening it (opening a FIFO blocks forever).
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise TaskFormatError(path, f"cannot read file ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = special_file_kind(info.st_mode) or "a folder"
        raise TaskFormatError(path, f"not a regular file ({kind})")
    if info.st_size > max_bytes:
        raise TaskFormatError(path, f"file is {info.st_size} bytes; the limit is {max_bytes} bytes")
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise TaskFormatError(path, f"cannot read file ({exc.strerror})") from None
    if len(data) > max_bytes:
        raise TaskFormatError(path, f"file is larger than the limit of {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TaskFormatError(
            path, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}); save it as UTF-8"
        ) from None


def check_depth(data: Any, source: Path | str, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse containers nested deeper than ``max_depth`` (iterative: no recursion limit)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list, tuple)):
            continue
        if depth >= max_depth:
            raise TaskFormatError(source, f"nested more than {max_depth} levels deep")
        if id(item) in seen:
            continue
        seen.add(id(item))
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)


def parse_toml(text: str, source: Path | str) -> dict[str, Any]:
    """tomllib.loads with a depth check; TaskFormatError names the file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(source, f"invalid TOML ({exc})") from None
    except RecursionError:
        raise TaskFormatError(source, f"nested more than {MAX_DEPTH} levels deep") from None
    check_depth(data, source)
    return data


def parse_yaml(
    text: str, source: Path | str, *, max_nodes: int = MAX_YAML_NODES, max_depth: int = MAX_DEPTH
) -> Any:
    """yaml.safe_load, refusing documents whose aliases expand past ``max_nodes`` nodes, that
    nest deeper than ``max_depth`` or that refer to themselves."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise TaskFormatError(source, f"invalid YAML{where} ({problem})") from None
    except RecursionError:
        raise TaskFormatError(source, f"nested more than {max_depth} levels deep") from None
    if node is None:
        return None
    _check_yaml_graph(node, source, max_nodes, max_depth)
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise TaskFormatError(source, f"invalid YAML ({problem})") from None
    finally:
        loader.dispose()


def _check_yaml_graph(root: Any, source: Path | str, max_nodes: int, max_depth: int) -> None:
    """Expanded size and depth of a composed YAML graph, memoised per node (an alias is the
    same node object as its anchor), without recursion."""
    import yaml

    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            kids = _yaml_children(node, yaml)
            size = 1 + sum(sizes[id(k)] for k in kids)
            depth = 1 + max((depths[id(k)] for k in kids), default=0)
            if size > max_nodes:
                raise TaskFormatError(
                    source,
                    f"expands to more than {max_nodes} values (YAML aliases repeat their "
                    "anchors); write the document out or make it smaller",
                )
            if depth > max_depth:
                raise TaskFormatError(source, f"nested more than {max_depth} levels deep")
            sizes[key], depths[key] = size, depth
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise TaskFormatError(source, "a YAML alias refers to a node that contains it")
        on_path.add(key)
        stack.append((node, True))
        for kid in _yaml_children(node, yaml):
            if id(kid) not in sizes:
                stack.append((kid, False))


def _yaml_children(node: Any, yaml: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_yaml_file(path: Path, *, max_bytes: int = MAX_CONFIG_BYTES) -> Any:
    """Read and parse a YAML file with every bound above."""
    return parse_yaml(read_text(path, max_bytes=max_bytes), path)


def load_toml_file(path: Path, *, max_bytes: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """Read and parse a TOML file with every bound above."""
    return parse_toml(read_text(path, max_bytes=max_bytes), path)
