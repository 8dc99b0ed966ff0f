"""Translate BuildKit-only Dockerfile syntax for the legacy builder (the engine here has no
buildx). Public task Dockerfiles use a few BuildKit features; each has a legacy equivalent:

* here-documents: ``RUN <<EOF`` (a script), ``RUN python3 <<EOF`` (stdin of a command) and
  ``COPY <<EOF /path`` (a file) become a RUN that decodes the body from base64;
* ``RUN --mount=type=cache|tmpfs``, ``RUN --network=…``, ``COPY --link`` and ``--chmod`` flags:
  caches and links only speed builds up, so they are dropped; ``--chmod`` becomes a ``chmod``.

Other mount types (bind, secret, ssh) cannot be emulated and raise :class:`ImageBuildError`
with a message naming the line.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import shlex
from dataclasses import dataclass, field

from factory.errors import ImageBuildError

_HEREDOC_RE = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_INSTRUCTION_RE = re.compile(r"^(\s*)(RUN|COPY|ADD)\s+(.*)$", re.IGNORECASE | re.DOTALL)
_SHELL_RE = re.compile(r"^\s*SHELL\s+(\[.*\])\s*$", re.IGNORECASE)
_FLAG_RE = re.compile(r"^--([a-z-]+)(?:=(\S*))?$")
_TMP = "/tmp/.factory-heredoc"


@dataclass
class CompatResult:
    text: str
    notes: list[str] = field(default_factory=list)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _split_flags(rest: str) -> tuple[list[str], str]:
    flags = []
    while True:
        match = re.match(r"(--\S+)\s+", rest)
        if not match:
            return flags, rest
        flags.append(match.group(1))
        rest = rest[match.end() :]


def _keep_flags(
    keyword: str, flags: list[str], line_no: int, notes: list[str]
) -> tuple[list[str], str | None]:
    """Flags the legacy builder understands, and a --chmod mode if there was one."""
    kept, chmod = [], None
    for flag in flags:
        match = _FLAG_RE.match(flag)
        name, value = (match.group(1), match.group(2) or "") if match else (flag, "")
        if keyword == "RUN" and name == "mount":
            kind = dict(p.split("=", 1) for p in value.split(",") if "=" in p).get("type", "bind")
            if kind not in ("cache", "tmpfs"):
                raise ImageBuildError(
                    f"Dockerfile line {line_no}: RUN --mount=type={kind} needs BuildKit, which "
                    "this engine lacks; copy the files in with COPY instead"
                )
            notes.append(
                f"Dockerfile line {line_no}: dropped RUN --mount=type={kind} (BuildKit cache)"
            )
        elif keyword == "RUN" and name in ("network", "security"):
            notes.append(f"Dockerfile line {line_no}: dropped RUN --{name} (BuildKit only)")
        elif keyword in ("COPY", "ADD") and name == "link":
            notes.append(f"Dockerfile line {line_no}: dropped {keyword} --link (BuildKit only)")
        elif keyword in ("COPY", "ADD") and name == "chmod":
            chmod = value
        else:
            kept.append(flag)
    return kept, chmod


def _logical_instructions(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, physical lines) per instruction, heredoc bodies included."""
    lines = text.splitlines()
    out: list[tuple[int, list[str]]] = []
    i = 0
    while i < len(lines):
        start = i
        group = [lines[i]]
        while (
            group[-1].rstrip().endswith("\\")
            and i + 1 < len(lines)
            and not group[-1].lstrip().startswith("#")
        ):
            i += 1
            group.append(lines[i])
        heads = " ".join(group)
        if _INSTRUCTION_RE.match(heads) and not heads.lstrip().startswith("#"):
            for match in _HEREDOC_RE.finditer(heads):
                delimiter = match.group(3)
                while i + 1 < len(lines):
                    i += 1
                    group.append(lines[i])
                    stripped = lines[i].lstrip("\t") if match.group(1) else lines[i]
                    if stripped == delimiter:
                        break
        out.append((start + 1, group))
        i += 1
    return out


def _heredoc_body(group: list[str], header_lines: int, strip_tabs: bool) -> str:
    body = group[header_lines:-1]
    if strip_tabs:
        body = [line.lstrip("\t") for line in body]
    return "\n".join(body) + "\n"


def make_legacy_compatible(text: str) -> CompatResult:
    """Rewrite BuildKit-only syntax; a Dockerfile without any comes back unchanged."""
    result = CompatResult(text="")
    out: list[str] = []
    shell = "/bin/sh"
    for line_no, group in _logical_instructions(text):
        head_count = 1
        while head_count < len(group) and group[head_count - 1].rstrip().endswith("\\"):
            head_count += 1
        header = " ".join(part.rstrip().rstrip("\\").strip() for part in group[:head_count])
        shell_match = _SHELL_RE.match(header)
        if shell_match:
            with contextlib.suppress(ValueError, IndexError, TypeError):
                shell = json.loads(shell_match.group(1))[0]
        match = _INSTRUCTION_RE.match(header)
        if not match or header.lstrip().startswith("#"):
            out.extend(group)
            continue
        indent, keyword, rest = match.group(1), match.group(2).upper(), match.group(3)
        flags, rest = _split_flags(rest)
        kept, chmod = _keep_flags(keyword, flags, line_no, result.notes)
        heredocs = list(_HEREDOC_RE.finditer(rest))
        if len(heredocs) > 1:
            raise ImageBuildError(
                f"Dockerfile line {line_no}: several here-documents in one {keyword} need "
                "BuildKit; split them into one instruction each"
            )
        flag_text = "".join(f"{f} " for f in kept)
        if not heredocs:
            if kept == flags and chmod is None:
                out.extend(group)
                continue
            out.append(f"{indent}{keyword} {flag_text}{rest}")
            if chmod is not None:
                target = shlex.split(rest)[-1] if rest.strip() else "."
                out.append(f"{indent}RUN chmod -R {chmod} {shlex.quote(target)}")
                result.notes.append(
                    f"Dockerfile line {line_no}: {keyword} --chmod became a RUN chmod"
                )
            continue
        heredoc = heredocs[0]
        body = _heredoc_body(group, head_count, bool(heredoc.group(1)))
        before = rest[: heredoc.start()].strip()
        after = rest[heredoc.end() :].strip()
        encoded = _b64(body)
        if keyword == "RUN":
            command = f"{before} {after}".strip()
            if command:
                runner = f"{command} < {_TMP}"
            elif body.startswith("#!"):
                runner = f"chmod +x {_TMP} && {_TMP}"
            else:
                runner = f"{shlex.quote(shell)} {_TMP}"
            out.append(
                f"{indent}RUN {flag_text}echo {encoded} | base64 -d > {_TMP} && {runner} && rm -f {_TMP}"
            )
        else:
            destination = after or before
            if not destination:
                raise ImageBuildError(
                    f"Dockerfile line {line_no}: {keyword} here-document without a destination"
                )
            target = shlex.quote(destination)
            out.append(
                f'{indent}RUN mkdir -p "$(dirname {target})" && echo {encoded} | base64 -d > {target}'
                + (f" && chmod {chmod} {target}" if chmod else "")
            )
        result.notes.append(
            f"Dockerfile line {line_no}: {keyword} here-document rewritten for the legacy builder"
        )
    result.text = "\n".join(out) + ("\n" if text.endswith("\n") else "")
    return result
