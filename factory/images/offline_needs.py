"""What a task's tests download when they run, that nothing reachable here serves.

A Dockerfile can build offline and the tests still fail at once, because the build tool they
call fetches its own distribution or dependencies from hosts other than the package
registries: the Gradle wrapper downloads Gradle (and Maven Central's artifacts), cargo
fetches crates, ``go`` fetches modules. :func:`test_time_downloads` names each such need of a
task whose test scripts call that tool and whose files do not vendor what it fetches, so the
verdict says what is missing instead of a failed oracle run.
"""

from __future__ import annotations

import re
from pathlib import Path

DEBIAN_GRADLE = "4.4.1"
"""The only Gradle Debian packages (bookworm and trixie)."""
_MAX_FILES = 20_000
_MAX_READ = 1 << 20
"""Bytes read of each manifest (a hostile one may be huge; the names are near the top)."""
_GRADLE_URL_RE = re.compile(r"distributionUrl\s*=\s*\S*gradle-([\d.]+)-(?:bin|all)\.zip")
_CARGO_SECTION_RE = re.compile(r"^\[(?:dev-|build-)?dependencies\]\s*$")
_GO_REQUIRE_RE = re.compile(r"^\s*require\s*(?:\(|(\S+))", re.MULTILINE)
_GO_MODULE_RE = re.compile(r"^\s+(\S+)\s+v\S+", re.MULTILINE)


def _files(root: Path, name: str) -> list[Path]:
    found: list[Path] = []
    for count, path in enumerate(root.rglob(name)):
        if count > _MAX_FILES:
            break
        if not {"node_modules", "target", "vendor", ".git"} & set(path.parts):
            found.append(path)
    return sorted(found)


def _head(path: Path) -> str:
    """The first ``_MAX_READ`` bytes of a manifest, as text ('' when it is not a regular file
    or cannot be read)."""
    if not path.is_file():  # a FIFO or a device would block or never end
        return ""
    try:
        with path.open("rb") as handle:
            return handle.read(_MAX_READ).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _cargo_dependencies(text: str) -> list[str]:
    names: list[str] = []
    in_section = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_section = bool(_CARGO_SECTION_RE.match(stripped))
            continue
        if in_section and "=" in stripped and not stripped.startswith("#"):
            names.append(stripped.split("=", 1)[0].strip())
    return names


def _vendored_crates(root: Path) -> bool:
    for config in [*_files(root, "config.toml"), *_files(root, "config")]:
        if config.parent.name == ".cargo" and "[source" in _head(config):
            return True
    return any(root.rglob("vendor/*/Cargo.toml"))


def test_time_downloads(environment: Path, scripts: str) -> list[str]:
    """Needs of the task in ``environment`` whose test/solution scripts (``scripts``, their
    text) or the shell scripts of ``environment`` they call (DevEval's
    ``unit_test_script.sh``) run a tool that downloads them."""
    missing: list[str] = []
    scripts = "\n".join([scripts, *(_head(path) for path in _files(environment, "*.sh")[:50])])
    if re.search(r"\bgradlew?\b", scripts):
        for props in _files(environment, "gradle-wrapper.properties"):
            match = _GRADLE_URL_RE.search(_head(props))
            if match and not any(environment.rglob(f"gradle-{match.group(1)}-*.zip")):
                missing.append(
                    f"Gradle {match.group(1)} ({props.relative_to(environment)}: the wrapper "
                    f"downloads it, and the build's Maven Central dependencies, when the tests "
                    f"run; Debian has Gradle {DEBIAN_GRADLE} only)"
                )
                break
    if re.search(r"\bcargo\b", scripts) and not _vendored_crates(environment):
        for manifest in _files(environment, "Cargo.toml"):
            crates = _cargo_dependencies(_head(manifest))
            if crates:
                missing.append(
                    f"crates {', '.join(crates)} ({manifest.relative_to(environment)}: crates.io "
                    "cannot be reached; vendor them with `cargo vendor`)"
                )
    if re.search(r"\bgo (?:test|build|run|mod)\b", scripts):
        for gomod in _files(environment, "go.mod"):
            if (gomod.parent / "vendor").is_dir():
                continue
            text = _head(gomod)
            modules = [m.group(1) for m in _GO_REQUIRE_RE.finditer(text) if m.group(1)]
            modules += _GO_MODULE_RE.findall(text.split("require (", 1)[-1].split(")")[0]) * (
                "require (" in text
            )
            if modules:
                missing.append(
                    f"Go modules {', '.join(modules)} ({gomod.relative_to(environment)}: the "
                    "module proxy cannot be reached; vendor them with `go mod vendor`)"
                )
    return missing
