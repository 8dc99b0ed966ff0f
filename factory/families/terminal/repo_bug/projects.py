"""The real projects of the repo-bug family (``projects.toml``) and their source on the host.

A project's sdist is fetched once, from the package index pip is configured for, into
``~/.cache/factory/repo-bug/sdists`` (``FACTORY_CACHE_DIR`` moves ``~/.cache/factory``) and
checked against the pinned sha256, by the same stdlib script task images run at build time
(``templates/environment/fetch_sdist.py`` of this folder), so both get the same bytes.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import subprocess
import sys
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from factory.errors import FactoryError, TaskFormatError

DATA_FILE = Path(__file__).with_name("projects.toml")
FETCHER = Path(__file__).with_name("templates") / "environment" / "fetch_sdist.py"
PYTEST_PIN = ["pytest==8.3.5", "pluggy==1.6.0", "iniconfig==2.1.0", "packaging==25.0"]
"""The test runner installed in every task image (and the screening image), pinned."""


class Project(BaseModel):
    """One entry of projects.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """Distribution name on the package index."""
    version: str = Field(pattern=r"^[0-9][0-9A-Za-z.+-]*$")
    """The exact release (pinned)."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """Digest of the source distribution."""
    package: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """Import name."""
    root: str = ""
    """Folder of the sdist that holds the package ('' or 'src')."""
    tests: list[str] = Field(min_length=1)
    """Test folders or files, relative to the sdist root."""
    exclude: list[str] = Field(default_factory=list)
    """Source paths (globs relative to the sdist root) that are never mutated."""

    @field_validator("root", "tests", "exclude")
    @classmethod
    def _relative(cls, value: str | list[str]) -> str | list[str]:
        for item in [value] if isinstance(value, str) else value:
            path = PurePosixPath(item)
            if path.is_absolute() or ".." in path.parts:
                raise ValueError(f"{item!r} must be a path inside the project")
        return value

    @property
    def key(self) -> str:
        """'<name>-<version>': names caches and screening records."""
        return f"{self.name}-{self.version}"

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def package_dir(self) -> str:
        return f"{self.root}/{self.package}" if self.root else self.package

    def is_source(self, path: str) -> bool:
        """Whether ``path`` (relative to the sdist root) is library code that may be mutated."""
        if not path.endswith(".py") or not path.startswith(self.package_dir + "/"):
            return False
        parts = PurePosixPath(path).parts
        if any(p in ("tests", "test") for p in parts) or parts[-1].startswith("test_"):
            return False
        return not any(fnmatch.fnmatch(path, pattern) for pattern in self.exclude)

    def is_test(self, path: str) -> bool:
        return path.endswith(".py") and any(
            path == t or path.startswith(t.rstrip("/") + "/") for t in self.tests
        )


class ProjectList(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: list[Project] = Field(min_length=1)


def load_projects(path: Path = DATA_FILE) -> dict[str, Project]:
    """Projects by name; a broken file is a one-line error naming the field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TaskFormatError(path, f"cannot read ({exc})") from None
    try:
        projects = ProjectList.model_validate(data).project
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise TaskFormatError(path, first["msg"], field=where) from None
    names = [p.name for p in projects]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TaskFormatError(path, f"project listed twice: {', '.join(duplicates)}")
    return {p.name: p for p in projects}


def cache_root() -> Path:
    base = os.environ.get("FACTORY_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "factory") / "repo-bug"


class SdistError(FactoryError):
    """A project's source distribution cannot be had or is not the pinned one."""


_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def _lock(key: str) -> threading.Lock:
    with _guard:
        return _locks.setdefault(key, threading.Lock())


def sdist_path(project: Project) -> Path:
    """The pinned sdist in the host cache, downloaded on first use and checked."""
    folder = cache_root() / "sdists"
    with _lock(f"sdist:{project.key}"):
        found = _matching(folder, project)
        if found is None:
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / f"{project.key}.tar.gz"
            run = subprocess.run(
                [sys.executable, str(FETCHER), project.name, project.version, project.sha256,
                 str(target)],
                capture_output=True, text=True, timeout=900, check=False,
            )  # fmt: skip
            found = _matching(folder, project)
            if found is None:
                tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no sdist"]
                raise SdistError(
                    f"cannot fetch the sdist of {project.requirement} ({tail[0]}); check the "
                    f"package index is reachable, or put the file in {folder}"
                )
    return found


def _matching(folder: Path, project: Project) -> Path | None:
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.tar.gz")):
        if hashlib.sha256(path.read_bytes()).hexdigest() == project.sha256:
            return path
    return None


_files: dict[str, dict[str, bytes]] = {}


def project_files(project: Project) -> dict[str, bytes]:
    """Every file of the sdist, by path relative to its root (the top folder stripped)."""
    with _lock(f"files:{project.key}"):
        if project.key not in _files:
            _files[project.key] = _read_sdist(project)
    return _files[project.key]


def _read_sdist(project: Project) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    with tarfile.open(sdist_path(project)) as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue
            parts = PurePosixPath(member.name).parts[1:]
            if not parts or ".." in parts:
                continue
            handle = archive.extractfile(member)
            if handle is not None:
                files["/".join(parts)] = handle.read()
    if not files:
        raise SdistError(f"the sdist of {project.requirement} is empty")
    return files


def _texts(project: Project, keep: Callable[[str], bool]) -> dict[str, str]:
    out = {}
    for path, data in project_files(project).items():
        if keep(path):
            try:
                out[path] = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
    return out


def source_modules(project: Project) -> dict[str, str]:
    """The library modules that may be mutated: path -> text."""
    return _texts(project, project.is_source)


def project_tests(project: Project) -> dict[str, str]:
    """The project's test files: path -> text."""
    return _texts(project, project.is_test)
