"""When each task image was last used, for `factory images prune` (Docker keeps no such time).

A small SQLite file, ``<cache>/images/usage.sqlite`` (``FACTORY_CACHE_DIR`` or
``XDG_CACHE_HOME`` move it), one row per image tag: the image id, the last time a run asked
for the image (:meth:`TaskImageBuilder.ensure`: a validation, an episode, a probe) and how
often. Many processes and threads write it; a failed write is logged and forgotten, never a
failed run.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

from factory.images.builder import default_cache_dir

log = logging.getLogger(__name__)

_SCHEMA = """CREATE TABLE IF NOT EXISTS usage (
    ref TEXT PRIMARY KEY,
    image_id TEXT,
    last_used REAL NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0
)"""


def usage_db_path() -> Path:
    return default_cache_dir() / "usage.sqlite"


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(path), timeout=10.0)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(_SCHEMA)
    return connection


def record_use(
    ref: str, image_id: str | None = None, *, when: float | None = None, path: Path | None = None
) -> None:
    """Note that ``ref`` was used now (or at ``when``)."""
    try:
        with _connect(path or usage_db_path()) as connection:
            connection.execute(
                "INSERT INTO usage (ref, image_id, last_used, uses) VALUES (?, ?, ?, 1) "
                "ON CONFLICT(ref) DO UPDATE SET last_used = MAX(last_used, excluded.last_used), "
                "uses = uses + 1, image_id = COALESCE(excluded.image_id, image_id)",
                (ref, image_id, time.time() if when is None else when),
            )
        connection.close()
    except (sqlite3.Error, OSError) as exc:
        log.warning("could not record the use of image %s: %s", ref, exc)


def last_used(path: Path | None = None) -> dict[str, float]:
    """ref -> last time used (epoch seconds); also image id -> time, for untagged lookups."""
    db = path or usage_db_path()
    if not db.is_file():
        return {}
    try:
        connection = _connect(db)
        rows = connection.execute("SELECT ref, image_id, last_used FROM usage").fetchall()
        connection.close()
    except sqlite3.Error as exc:
        log.warning("could not read the image usage log %s: %s", db, exc)
        return {}
    found: dict[str, float] = {}
    for ref, image_id, when in rows:
        for key in (ref, image_id):
            if key:
                found[key] = max(found.get(key, 0.0), when)
    return found


def forget(refs: list[str], path: Path | None = None) -> None:
    """Drop the rows of removed images."""
    db = path or usage_db_path()
    if not refs or not db.is_file():
        return
    try:
        with _connect(db) as connection:
            connection.executemany("DELETE FROM usage WHERE ref = ?", [(r,) for r in refs])
        connection.close()
    except sqlite3.Error as exc:
        log.warning("could not update the image usage log %s: %s", db, exc)
