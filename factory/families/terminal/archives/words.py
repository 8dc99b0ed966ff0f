"""The archives family's vocabulary: project names, export folders, file kinds, vendored
libraries, the places a traversing member would land, and the tar formats."""

from __future__ import annotations

PROJECTS = [
    "aurora",
    "basalt",
    "cinder",
    "deltaops",
    "ember",
    "fjord",
    "granite",
    "helix",
    "ionic",
    "juniper",
    "kestrel",
    "lumen",
    "magpie",
    "nimbus",
    "onyx",
    "prism",
    "quartz",
    "raven",
    "sable",
    "tundra",
    "umbra",
    "vortex",
    "willow",
    "zephyr",
]


# --- archives ------------------------------------------------------------------------------

TOPS = [
    "config",
    "data",
    "docs",
    "reports",
    "scripts",
    "assets",
    "logs",
    "exports",
    "templates",
    "migrations",
    "fixtures",
    "metrics",
    "schemas",
    "notebooks",
]
SUBS = [
    "2022",
    "2023",
    "2024",
    "q1",
    "q2",
    "q3",
    "q4",
    "eu",
    "us",
    "apac",
    "daily",
    "weekly",
    "raw",
    "clean",
    "v1",
    "v2",
    "staging",
    "prod",
    "shared",
    "team",
]
EXTS = ["csv", "json", "yaml", "txt", "md", "sql", "xml", "ini", "tsv", "html"]
VENDOR_DIRS = ["vendor", "third_party", "bundles", "deps", "packages"]
LIBS = ["zlibng", "tinyxml", "yamlcpp", "fmtlib", "cjson", "lz4", "miniz", "inih", "utf8proc"]
LANDINGS = ["/etc/cron.d", "/usr/local/bin", "/root", "/etc/profile.d", "/var/spool/cron"]
SRC_EXCLUDE_SUFFIXES = ["~", ".log", ".tmp", ".swp", ".bak", ".orig"]

TAR_FMTS = ["tar.gz", "tgz", "tar.xz", "tar.bz2"]
TAR_FLAG = {"tar.gz": "z", "tgz": "z", "tar.xz": "J", "tar.bz2": "j"}
