"""The archives family's vocabulary (``words.toml``): project names, export folders, file
kinds, vendored libraries, the places a traversing member would land, and the tar formats."""

from __future__ import annotations

from pathlib import Path

from factory.families.terminal.words import WordTable

_WORDS = WordTable(Path(__file__).parent / "words.toml")

PROJECTS: list[str] = _WORDS["projects"]
TOPS: list[str] = _WORDS["tops"]
SUBS: list[str] = _WORDS["subs"]
EXTS: list[str] = _WORDS["exts"]
VENDOR_DIRS: list[str] = _WORDS["vendor_dirs"]
LIBS: list[str] = _WORDS["libs"]
LANDINGS: list[str] = _WORDS["landings"]
SRC_EXCLUDE_SUFFIXES: list[str] = _WORDS["src_exclude_suffixes"]
TAR_FMTS: list[str] = _WORDS["tar_fmts"]
TAR_FLAG: dict[str, str] = _WORDS.typed("tar_flag", dict[str, str])
"""The tar option that picks each format's compression (z, J, j)."""
