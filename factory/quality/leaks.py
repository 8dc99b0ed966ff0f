"""Static leak checks on a task directory: the instruction must not give the answer away, and
neither the solution nor the tests may ship inside the image's build context (the image can
only receive task files through environment/)."""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path

from factory.tasks.hashing import iter_files
from factory.tasks.paths import TaskPaths

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


def scan_image(runtime, task, image: str, strings: tuple[str, ...] | list[str]) -> list[str]:
    """Files of a fresh container of ``image`` that contain any of ``strings`` (plain bytes)."""
    from factory.validate.phases import container_spec

    if not strings:
        return []
    patterns = " ".join(f"-e {shlex.quote(s)}" for s in strings)
    script = (
        f"grep -rlaF {patterns} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
        "--exclude-dir=run 2>/dev/null | head -20; exit 0"
    )
    with runtime.start(container_spec(task, image)) as box:
        result = box.exec(["sh", "-c", script], timeout_sec=300, what="image scan")
    if result.timed_out:
        return ["(the scan of the image timed out)"]
    return [line for line in result.output.splitlines() if line.strip()]
