"""TaskSpec: a generated task as frozen data (files + config), before it touches the disk."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from factory.fsutil import staged_directory
from factory.tasks.config import TaskConfig
from factory.vocabulary import Trap


@dataclass(frozen=True)
class TaskSpec:
    """Everything a task directory holds, plus what the quality checks need to know."""

    id: str
    """Directory name in the suite."""
    files: Mapping[str, bytes]
    """Relative path -> content, task.toml excluded (it is rendered from ``config``)."""
    config: TaskConfig
    mutations: Mapping[str, str] = field(default_factory=dict)
    """Near-miss wrong solutions (name -> solve.sh) the tests must reject."""
    cheats: Mapping[str, str] = field(default_factory=dict)
    """The task's own cheat probes (name -> solve.sh) that must score 0, besides the generic
    ones (:func:`factory.validate.probes.cheat_scripts`)."""
    secrets: tuple[str, ...] = ()
    """Answers that must not appear in the instruction."""
    outputs: tuple[str, ...] = ()
    """Container paths the agent is expected to create or change."""
    forbidden_strings: tuple[str, ...] = ()
    """Strings no file of a fresh container may contain."""
    faults: tuple[str, ...] = ()
    """The fault combination (names from the family's grammar); also in the provenance."""
    traps: tuple[Trap, ...] = ()
    """Unannounced traps: none may be named in the instruction."""

    @property
    def instruction(self) -> str:
        return self.files["instruction.md"].decode("utf-8", errors="replace")

    def text_of(self, prefix: str) -> str:
        """Concatenated text of the files under ``prefix`` (e.g. 'tests/')."""
        return "\n".join(
            self.files[p].decode("utf-8", errors="replace")
            for p in sorted(self.files)
            if p.startswith(prefix)
        )

    def content_hash(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + hashlib.sha256(self.files[path]).digest())
        return digest.hexdigest()

    def write(self, dest: Path) -> Path:
        """Write the task directory (atomically replacing ``dest``)."""
        with staged_directory(dest) as root:
            for rel, content in self.files.items():
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
                if rel.endswith(".sh"):
                    target.chmod(0o755)
            (root / "task.toml").write_text(self.config.to_toml())
        return dest
