"""Shell commands of a task's scripts as the linters read them: logical lines (continuations
joined, comments and here-documents skipped), each split into commands, and whether a command
downloads something from the internet.

Docker-free and dependency-free; :mod:`factory.tasks.lint` uses it for Harbor's
``verifier-network-download`` rule (a separate verifier that fetches at trial time).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from urllib.parse import urlsplit

_SEPARATORS = frozenset({";", "&&", "||", "&", "|", "|&"})
_PROBE_FLAGS = frozenset({"--spider", "-O-", "-qO-"})
"""wget flags that print or discard what they fetch (a service probe, not a download)."""
_OUTPUT_FLAGS = frozenset({"-o", "--output", "-O", "--output-document"})
_DISCARDED = frozenset({"", "-", "/dev/null"})


def shell_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, logical line) with continuations joined; comments and
    here-document bodies skipped."""
    pending, start, heredoc = "", 0, None
    for number, raw in enumerate(text.splitlines(), 1):
        if heredoc is not None:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line, pending = pending + raw, ""
        match = re.search(r"<<-?\s*(['\"]?)(\w+)\1", re.sub(r"'[^']*'|\"[^\"]*\"", "", line))
        heredoc = match.group(2) if match else None
        yield start, line
    if pending:
        yield start, pending


def command_chain(line: str) -> list[tuple[list[str], str]]:
    """The commands of one logical shell line with the operator after each (``""`` after the
    last): ``curl -sSf URL | sh`` -> ``[(["curl", "-sSf", "URL"], "|"), (["sh"], "")]``.
    A line the shell lexer cannot read (an open quote) has no commands."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    chain: list[tuple[list[str], str]] = []
    words: list[str] = []
    try:
        for token in lexer:
            if token in _SEPARATORS:
                if words:
                    chain.append((words, token))
                words = []
            else:
                words.append(token)
    except ValueError:
        return []
    if words:
        chain.append((words, ""))
    return chain


def shell_commands(line: str) -> list[list[str]]:
    """The simple commands of a logical line (split at ``;``, ``&&``, ``||``, ``&``, ``|``),
    as words; nothing when the line does not parse."""
    return [words for words, _ in command_chain(line)]


def _external(arg: str) -> bool:
    """A URL (or an scp-style git address) on another machine: a dotted host name that is
    not loopback (``127.*``) nor ``*.localhost``; service names such as ``http://kv:8080``
    are sidecars of the task, not the internet."""
    if re.match(r"git@[^:]+\.[^:]+:", arg):
        return True
    try:
        host = urlsplit(arg.removeprefix("--url=")).hostname
    except ValueError:
        return False
    return bool(
        host and "." in host and not host.startswith("127.") and not host.endswith(".localhost")
    )


def _saves(tool: str, args: list[str]) -> bool:
    """Whether curl/wget keeps what it fetched (a file, not stdout or /dev/null)."""
    if _PROBE_FLAGS & set(args):
        return False
    for index, arg in enumerate(args):
        if arg in _OUTPUT_FLAGS or arg == ">":
            if tool == "curl" and arg == "-O":
                return True  # curl -O: the remote file's own name
            target = args[index + 1] if index + 1 < len(args) else ""
        elif arg.startswith(("--output=", "--output-document=")):
            target = arg.partition("=")[2]
        elif tool == "curl" and arg.startswith("-o"):
            target = arg[2:]
        else:
            continue
        return target not in _DISCARDED and "$" not in target
    if tool == "wget":
        return True  # wget saves to a file unless told otherwise
    return any(arg.startswith(">") and arg != ">/dev/null" for arg in args)


def downloads(words: list[str], piped_into: list[str] | None = None) -> bool:
    """Whether one command fetches something from the internet and keeps or runs it:
    ``git clone`` of an external repository, ``curl``/``wget`` of an external URL piped into
    ``sh``/``bash`` or saved to a file. A health probe (output discarded or printed) is not
    a download."""
    if not words:
        return False
    tool, args = words[0], words[1:]
    if tool not in ("curl", "wget", "git") or not any(_external(arg) for arg in args):
        return False
    if tool == "git":
        return args[:1] == ["clone"]
    if (piped_into or [])[:1] in (["sh"], ["bash"]):
        return True
    return _saves(tool, args)
