"""The calibration journal: ``SUITE/calibration/journal/<task>.json``, one record per task.

A record says which policy measured the task (the model name, and a fingerprint of how it was
sampled and driven: temperature, tokens per turn, turns, reply prefix, ...), with how many
episodes (k), on which content (:func:`calibration_hash`), and what came out. A rerun skips a
task whose record has the same model, policy fingerprint, k and content hash, so a killed calibration continues where it stopped and a
rerun with another band costs no episode. The episodes' transcripts lie beside it, in
``SUITE/calibration/episodes/<task>/transcript.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from factory.compat import tomllib
from factory.fsutil import write_text_atomic
from factory.tasks.config import TaskConfig
from factory.tasks.hashing import iter_files

CALIBRATION_DIR = "calibration"
CALIBRATION_KEYS = frozenset(
    {
        "pass_rate",
        "calibration_k",
        "calibration_model",
        "calibration_verdict",
        "flake_rate",
        "flake_runs",
    }
)
"""[metadata.factory] keys calibration writes: left out of the content hash."""
RETIREMENT_FILE = "retirement.json"


def calibration_hash(task_dir: Path) -> str:
    """sha256 of the task directory as :func:`hash_tree` sees it, except the calibration's own
    stamps in task.toml (so stamping a task does not make it look changed) and the
    retirement note."""
    digest = hashlib.sha256()
    for path in iter_files(task_dir):
        rel = path.relative_to(task_dir).as_posix()
        if rel == RETIREMENT_FILE:
            continue
        if path.is_symlink():
            digest.update(b"link\0" + rel.encode() + b"\0" + os.readlink(path).encode() + b"\0")
            continue
        mode = b"x" if os.access(path, os.X_OK) else b"-"
        data = path.read_bytes()
        if rel == "task.toml":
            data = _normalised_config(data)
        digest.update(b"file\0" + rel.encode() + b"\0" + mode + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _normalised_config(data: bytes) -> bytes:
    """task.toml as factory reads it (writing it back may reformat numbers and tables),
    without the calibration's own keys."""
    try:
        config = TaskConfig.from_toml(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError):
        return data
    config.set_provenance(config.provenance)  # the form stamping writes
    dumped = config.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    own = dumped["metadata"]["factory"]
    for key in CALIBRATION_KEYS:
        own.pop(key, None)
    return json.dumps(dumped, sort_keys=True, default=str).encode()


class CalibrationRecord(BaseModel):
    task: str
    """The task's directory name (unique in a suite)."""
    model: str
    policy: str = ""
    """Fingerprint of the sampling and harness settings (see :func:`factory.agent.runners.policy_fingerprint`)."""
    k: int
    """Episodes asked for."""
    content_hash: str
    rewards: list[float | None] = Field(default_factory=list)
    """One per episode; None for an episode lost to an infrastructure failure."""
    successes: int = 0
    """Episodes with reward >= 1."""
    episodes: int = 0
    """Episodes scored (k minus infrastructure failures)."""
    pass_rate: float | None = None
    """successes / episodes; None when no episode could be scored."""
    error: str | None = None
    """Why the task has no pass rate (image build failed, every episode lost)."""
    seconds: float = 0.0
    finished_at: float = Field(default_factory=time.time)

    @property
    def infra_failures(self) -> int:
        return sum(r is None for r in self.rewards)


def record_from_rewards(
    task: str,
    model: str,
    k: int,
    content_hash: str,
    rewards: list[float | None],
    seconds: float,
    policy: str = "",
) -> CalibrationRecord:
    scored = [r for r in rewards if r is not None]
    successes = sum(1 for r in scored if r >= 1.0)
    return CalibrationRecord(
        task=task,
        model=model,
        policy=policy,
        k=k,
        content_hash=content_hash,
        rewards=rewards,
        successes=successes,
        episodes=len(scored),
        pass_rate=successes / len(scored) if scored else None,
        error=None if scored else "every episode was lost to an infrastructure failure",
        seconds=round(seconds, 3),
    )


class Journal:
    """The records of one suite (thread-safe: one file per task, written atomically)."""

    def __init__(self, suite: Path) -> None:
        self.root = suite / CALIBRATION_DIR
        self.dir = self.root / "journal"
        self.episodes = self.root / "episodes"

    def path(self, task: str) -> Path:
        return self.dir / f"{task}.json"

    def get(self, task: str) -> CalibrationRecord | None:
        try:
            return CalibrationRecord.model_validate_json(self.path(task).read_text("utf-8"))
        except (OSError, ValidationError, ValueError):
            return None  # absent, or a torn write: measured again

    def fresh(
        self, task: str, model: str, k: int, content_hash: str, policy: str = ""
    ) -> CalibrationRecord | None:
        """The record, if it answers for this model, policy settings, k and content (and has a
        pass rate)."""
        record = self.get(task)
        if (
            record is not None
            and record.model == model
            and record.policy == policy
            and record.k == k
            and record.content_hash == content_hash
            and record.pass_rate is not None
        ):
            return record
        return None

    def put(self, record: CalibrationRecord) -> None:
        write_text_atomic(self.path(record.task), record.model_dump_json(indent=2))

    def episode_dir(self, task: str) -> Path:
        return self.episodes / task

    def transcripts(self, task: str) -> list[dict]:
        """The saved episodes of a task (each: reward, turns, messages)."""
        path = self.episode_dir(task) / "transcript.jsonl"
        if not path.is_file():
            return []
        out = []
        for line in path.read_text("utf-8", errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out
