"""Word lists that several terminal families draw names from (``words.toml``, read by
:class:`~factory.datafiles.WordTable`)."""

from __future__ import annotations

from pathlib import Path

from factory.datafiles import WordTable

_WORDS = WordTable(Path(__file__).parent / "words.toml")

APPS: list[str] = _WORDS["apps"]
TEAMS: list[str] = _WORDS["teams"]
CTF_APPS: list[str] = _WORDS["ctf_apps"]
WORDS: list[str] = _WORDS["words"]
USERS: list[str] = _WORDS["users"]
FWORDS: list[str] = _WORDS["fwords"]
CLEAN_APPS: list[str] = _WORDS["clean_apps"]
