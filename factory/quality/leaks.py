"""Leak checks. Static ones on a task directory: the instruction must not give the answer away,
and neither the solution nor the tests may ship inside the image's build context (the image can
only receive task files through environment/). And :func:`scan_image` on the built image: no
file the task's build added to its base image may hold a forbidden string."""

from __future__ import annotations

import hashlib
import logging
import re
import shlex
from dataclasses import replace
from pathlib import Path

from factory.errors import CancelledError, FactoryError
from factory.tasks.hashing import iter_files
from factory.tasks.paths import TaskPaths

log = logging.getLogger(__name__)

MIN_SHARED_BYTES = 64
"""Files this small (a shebang, an empty __init__.py) may legitimately appear on both sides."""


def _digests(folder: Path) -> dict[str, str]:
    out = {}
    if folder.is_dir():
        for path in iter_files(folder):
            data = path.read_bytes()
            if len(data.strip()) >= MIN_SHARED_BYTES:
                out[hashlib.sha256(data.strip()).hexdigest()] = path.relative_to(
                    folder.parent
                ).as_posix()
    return out


def _mentions(text: str, secret: str) -> bool:
    if re.fullmatch(r"[\w.\-]+", secret):
        return re.search(rf"(?<![\w.\-]){re.escape(secret)}(?![\w\-]|\.\w)", text) is not None
    return secret in text


def instruction_leaks(instruction: str, secrets: list[str] | tuple[str, ...]) -> list[str]:
    """One line per answer the instruction text gives away."""
    return [
        f"instruction.md gives away the answer {secret[:60]!r}"
        for secret in secrets
        if secret and _mentions(instruction, secret)
    ]


def find_leaks(task_dir: Path, secrets: list[str] | tuple[str, ...] = ()) -> list[str]:
    """One line per leak found (empty list: none)."""
    paths = TaskPaths(task_dir)
    instruction = paths.instruction.read_text(encoding="utf-8", errors="replace")
    leaks = instruction_leaks(instruction, secrets)
    hidden = {**_digests(paths.solution_dir), **_digests(paths.tests_dir)}
    for path in iter_files(paths.environment_dir) if paths.environment_dir.is_dir() else []:
        digest = hashlib.sha256(path.read_bytes().strip()).hexdigest()
        if digest in hidden:
            rel = path.relative_to(task_dir).as_posix()
            leaks.append(f"{rel} is a copy of {hidden[digest]}: the image would contain it")
    return leaks


SCAN_CAP = 200
"""At most this many files holding a forbidden string are compared with the base image."""

SCAN_TIMEOUT_SEC = 300

_EXCLUDED = " ".join(f"--exclude-dir={d}" for d in ("proc", "sys", "dev", "run"))

_SUMS = 'printf \'%s %s\\n\' "$({ sha256sum < "$f"; } 2>/dev/null | cut -c1-64)" "$f"'
"""One ``<sha256> <path>`` line for the file ``$f`` (an empty digest where it is unreadable)."""


def scan_image(
    runtime,
    task,
    image: str,
    strings: tuple[str, ...] | list[str],
    *,
    base: str | None = None,
) -> list[str]:
    """Files of a fresh container of ``image`` that contain any of ``strings`` (plain bytes)
    and that the task's build added or changed: a file of the same path and content in a fresh
    container of ``base`` (the image the task's Dockerfile builds on) came with the base image,
    not from the task (pip's vendored pygments may hold a line of a project). Without a
    ``base``, or when its container cannot be started or checked, every file is reported."""
    from factory.validate.phases import container_spec

    if not strings:
        return []
    patterns = " ".join(f"-e {shlex.quote(s)}" for s in strings)
    # grep ends each name with NUL; tr makes that the line end and a newline inside a name
    # \001, so a crafted name cannot pose as two files (its digest is then empty: reported)
    script = (
        f"grep -rlaZF {patterns} / {_EXCLUDED} 2>/dev/null | tr '\\n\\000' '\\001\\n' | "
        f"head -{SCAN_CAP + 1} | while IFS= read -r f; do {_SUMS}; done; exit 0"
    )
    spec = container_spec(task, image)
    with runtime.start(spec) as box:
        result = box.exec(["sh", "-c", script], timeout_sec=SCAN_TIMEOUT_SEC, what="image scan")
    if result.timed_out:
        return ["(the scan of the image timed out)"]
    hits = parse_sums(result.output)
    if not hits or base is None:
        return [path for path, _ in hits]
    shown = hits[:SCAN_CAP]
    in_base = _base_sums(runtime, replace(spec, image=base, readiness=None, services=()), shown)
    if in_base is None:
        return [path for path, _ in hits]
    found = added_or_changed(shown, in_base)
    came_with_base = [path for path, _ in shown if path not in found]
    if came_with_base:
        log.info("image scan: came with the base image %s: %s", base, ", ".join(came_with_base))
    if len(hits) > SCAN_CAP:
        found.append(
            f"(more than {SCAN_CAP} files hold a forbidden string: the rest were not "
            f"compared with the base image {base})"
        )
    return found


def _base_sums(runtime, spec, hits: list[tuple[str, str]]) -> dict[str, str] | None:
    """``<path> -> sha256`` of those of the ``hits`` paths that a fresh container of
    ``spec.image`` has as regular files; None when that container cannot be started or the
    check does not finish (the caller then reports every hit)."""
    script = f'for f in "$@"; do [ -f "$f" ] && {_SUMS}; done; exit 0'
    try:
        with runtime.start(spec) as box:
            result = box.exec(
                ["sh", "-c", script, "sh", *(path for path, _ in hits)],
                timeout_sec=SCAN_TIMEOUT_SEC,
                what="base image scan",
            )
    except CancelledError:
        raise
    except FactoryError as exc:
        log.warning("image scan: the base image %s cannot be checked (%s)", spec.image, exc)
        return None
    if result.timed_out or result.exit_code != 0 or result.truncated:
        log.warning("image scan: the check of the base image %s did not finish", spec.image)
        return None
    return dict(parse_sums(result.output))


def parse_sums(output: str) -> list[tuple[str, str]]:
    """``(path, sha256)`` pairs from lines ``<sha256> <path>`` (the digest may be empty)."""
    pairs = []
    for line in output.split("\n"):
        digest, _, path = line.partition(" ")
        if path.strip():
            pairs.append((path, digest))
    return pairs


def added_or_changed(hits: list[tuple[str, str]], base: dict[str, str]) -> list[str]:
    """The paths of ``hits`` (path, sha256) that the base image (``base``: path -> sha256)
    lacks or holds with other content; a file whose digest could not be taken counts as
    changed."""
    return [path for path, digest in hits if not digest or base.get(path) != digest]
