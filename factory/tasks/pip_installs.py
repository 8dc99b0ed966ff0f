"""Python installs in shell commands: which packages a ``pip``/``uv`` command line installs and
whether they are pinned (commands as :mod:`factory.tasks.shell_commands` splits them).
:mod:`factory.tasks.lint` uses it for Harbor's unpinned-dependency and runtime-install
rules."""

from __future__ import annotations

import re
from pathlib import Path

_PIP_VALUE_FLAGS = frozenset(
    {
        *("-r", "--requirement", "-c", "--constraint", "-i", "--index-url"),
        *("--extra-index-url", "-t", "--target", "--prefix", "--root", "--cache-dir"),
        *("--python", "-p", "--log", "--src", "--find-links", "-f", "--platform"),
        *("--config-settings", "-C", "--index", "--default-index", "--from"),
        *("--python-version", "--group", "--extra"),
    }
)


def installed_packages(words: list[str]) -> tuple[list[str], bool]:
    """Requirement specs a pip/uv command installs, and whether a constraints file pins them."""
    while words and (words[0] in ("sudo", "exec", "env") or re.fullmatch(r"\w+=\S*", words[0])):
        words = words[1:]
    if not words:
        return [], False
    head, args = Path(words[0]).name, words[1:]
    if head in ("pip", "pip3") or re.fullmatch(r"pip3\.\d+", head):
        args = args[1:] if args[:1] == ["install"] else None
    elif re.fullmatch(r"python(3(\.\d+)?)?", head) and args[:3] == ["-m", "pip", "install"]:
        args = args[3:]
    elif head == "uv" and (args[:2] in (["pip", "install"], ["tool", "install"])):
        args = args[2:]
    elif head == "uv" and args[:1] == ["add"]:
        args = args[1:]
    elif head == "uvx":
        pass
    else:
        return [], False
    if args is None:
        return [], False
    specs: list[str] = []
    constrained = False
    tokens = iter(args)
    for token in tokens:
        flag, equals, value = token.partition("=")
        if flag in ("--with", "-w"):
            specs.append(value if equals else next(tokens, ""))
        elif flag in ("-c", "--constraint"):
            constrained = True
            if not equals:
                next(tokens, None)
        elif flag in ("-e", "--editable"):
            spec = value if equals else next(tokens, "")
            if "://" in spec:
                specs.append(spec)
        elif flag in _PIP_VALUE_FLAGS:
            if not equals:
                next(tokens, None)
        elif not token.startswith("-"):
            if head == "uvx":
                break  # the tool (what --from names, if anything, is the package)
            specs.append(token)
    if specs == ["pip"] and {"-U", "--upgrade"} & set(args):
        return [], constrained
    return specs, constrained


def is_unpinned(spec: str) -> bool:
    """Harbor's idea of an unpinned requirement: no ``==`` version (or commit / hash for URLs);
    local paths, archives and shell variables are left alone."""
    if not spec or "$" in spec or spec.startswith((".", "/", "file:")):
        return False
    if "://" in spec:
        return not re.search(r"@[0-9a-fA-F]{40}(?:#|$)|#sha256=[0-9a-fA-F]{64}$", spec)
    if spec.endswith((".whl", ".tar.gz", ".zip")):
        return False
    name = re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?", spec)
    if name is None:
        return False
    pins = re.findall(r"===?\s*([^,;\s]+)", spec[name.end() :])
    return not any("*" not in version for version in pins)


def package_name(spec: str) -> str:
    """A requirement spec's distribution name, normalised (lower case, ``-`` for ``_``)."""
    return re.split(r"[<>=!~\[;@\s]", spec, maxsplit=1)[0].lower().replace("_", "-")
