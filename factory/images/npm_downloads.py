"""npm packages whose install script downloads a binary from a host that is not the registry.

``npm install`` of a project that depends on ``chromedriver`` runs that package's install
script, which fetches ChromeDriver from Google's storage; ``puppeteer`` fetches a Chrome build,
``phantomjs-prebuilt`` fetches PhantomJS from GitHub. Only the npm registry and Debian's archive
are reachable here, so the install fails and with it every test that runs ``npm install``.

:func:`provide_npm_downloads` reads the task's ``package.json`` files (not those under
``node_modules``) and, when the Dockerfile or the test scripts run an npm/yarn/pnpm install,
handles each such dependency:

* **chromedriver**: Debian's ``chromium`` and ``chromium-driver`` are installed in every stage
  on a stand-in image, and ``CHROMEDRIVER_FILEPATH`` points the package's install script at
  ``/usr/bin/chromedriver``: given a file that is not a zip, the script copies it into place
  instead of downloading (seen here with 2.46.0 and 157.0.0 installed in a container; a zip
  would need another layout before and after 115). Releases 114.0.2 - 117.0.2 read the
  variable only while looking Chrome's version up online: named missing;
* **puppeteer**: its download is skipped (``PUPPETEER_SKIP_DOWNLOAD``, and the older
  ``PUPPETEER_SKIP_CHROMIUM_DOWNLOAD``) and ``PUPPETEER_EXECUTABLE_PATH`` points at Debian's
  Chromium;
* **phantomjs-prebuilt** / **phantomjs**: Debian has no PhantomJS and the npm package only
  downloads it, so it is named missing with the host it comes from.

Each substitution is a note that says which version the package would have fetched and that
Debian's differs; what cannot be had is returned by name (``missing``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from factory.images.toolchains import stand_in_release

DEBIAN_CHROMIUM = {"bookworm": "150", "trixie": "156"}
"""The Chromium/ChromeDriver major each release's archive served on 2026-12-05 (security
updates move it; the build log's ``chromedriver --version`` line has the exact one)."""

_INSTALL_RE = re.compile(
    r"\b(?:npm\s+(?:install|i|ci|add)\b|yarn(?:\s+install)?\b|pnpm\s+(?:install|i)\b)"
)
_FROM_RE = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE)
_DEPENDENCY_KEYS = ("dependencies", "devDependencies", "optionalDependencies")
_MAX_FILES = 20_000
_MAX_READ = 1 << 20


@dataclass(frozen=True)
class Downloader:
    """An npm package whose install script downloads a binary from outside the registry."""

    package: str
    what: str
    """What it downloads, for notes ('ChromeDriver')."""
    host: str
    """Where from (the install script's default)."""
    apt: tuple[str, ...] = ()
    """Debian packages that provide it; empty: nothing reachable does."""
    setup: str = ""
    """Shell run after the apt install (as root)."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables the install script reads instead of downloading."""
    why_missing: str = ""


_NO_PHANTOMJS = (
    "Debian's archive has no phantomjs package (bookworm and trixie) and the npm package "
    "ships no binary of its own"
)

DOWNLOADERS: tuple[Downloader, ...] = (
    Downloader(
        package="chromedriver",
        what="ChromeDriver",
        host="chromedriver.storage.googleapis.com (Chrome for Testing's storage for 115+)",
        apt=("chromium", "chromium-driver"),
        setup="chromedriver --version",
        env=(("CHROMEDRIVER_FILEPATH", "/usr/bin/chromedriver"),),
    ),
    Downloader(
        package="puppeteer",
        what="a Chrome build",
        host="storage.googleapis.com (Chrome for Testing)",
        apt=("chromium",),
        setup="chromium --version",
        env=(
            ("PUPPETEER_SKIP_DOWNLOAD", "true"),
            ("PUPPETEER_SKIP_CHROMIUM_DOWNLOAD", "true"),
            ("PUPPETEER_EXECUTABLE_PATH", "/usr/bin/chromium"),
        ),
    ),
    Downloader(
        package="phantomjs-prebuilt",
        what="PhantomJS",
        host="github.com (Medium/phantomjs releases)",
        why_missing=_NO_PHANTOMJS,
    ),
    Downloader(
        package="phantomjs",
        what="PhantomJS",
        host="github.com (Medium/phantomjs releases)",
        why_missing=_NO_PHANTOMJS,
    ),
)


@dataclass
class NpmRewrite:
    """Result of :func:`provide_npm_downloads`."""

    text: str
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _package_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for count, path in enumerate(root.rglob("package.json")):
        if count > _MAX_FILES:
            break
        if "node_modules" not in path.parts and path.is_file():
            found.append(path)
    return sorted(found)


def _dependencies(path: Path) -> dict[str, str]:
    """Every dependency of one package.json (name -> version range); {} when unreadable."""
    try:
        with path.open("rb") as handle:
            data = json.loads(handle.read(_MAX_READ).decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, str] = {}
    for key in _DEPENDENCY_KEYS:
        section = data.get(key)
        if isinstance(section, dict):
            out.update({str(k): str(v) for k, v in section.items()})
    return out


def _asked_version(downloader: Downloader, spec: str) -> str:
    """The binary version a range asks for ('^2.46.0' -> '2.46', '^120.0.0' -> '120')."""
    numbers = re.findall(r"\d+", spec)
    if not numbers:
        return spec or "any"
    if downloader.package == "chromedriver" and numbers[0] == "2" and len(numbers) > 1:
        return f"2.{numbers[1]}"
    return numbers[0]


def _chromedriver_ignores_filepath(spec: str) -> bool:
    """Whether the release npm installs for ``spec`` is one of chromedriver 114.0.2 - 117.0.2,
    whose install script reads CHROMEDRIVER_FILEPATH only together with
    DETECT_CHROMEDRIVER_VERSION, which looks Chrome's version up online (read in the
    registry's tarballs: 114.0.1 and 117.0.3 take the file, 114.0.2, 114.0.3, 115.0.0, 116.0.0
    and 117.0.0 do not). A range resolves to its newest release: ^114 to 114.0.3."""
    match = re.match(r"^\s*([~^=]?)\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$", spec)
    if not match:
        return False
    op, major = match.group(1), int(match.group(2))
    minor, patch = int(match.group(3) or 0), int(match.group(4) or 0)
    pinned = op in ("", "=") and match.group(4) is not None
    if major in (115, 116):
        return True
    if major == 114:
        return not pinned or (minor, patch) >= (0, 2)
    if major == 117:
        return pinned and (minor, patch) < (0, 3)
    return False


def _found(environment: Path) -> list[tuple[Downloader, str, str]]:
    """(downloader, its version range, the package.json that asks) for each one a package.json
    of ``environment`` depends on; once per downloader."""
    found: list[tuple[Downloader, str, str]] = []
    for path in _package_files(environment):
        deps = _dependencies(path)
        for downloader in DOWNLOADERS:
            if downloader.package in deps and all(d is not downloader for d, _, _ in found):
                where = path.relative_to(environment).as_posix()
                found.append((downloader, deps[downloader.package], where))
    return found


def provide_npm_downloads(text: str, environment: Path, scripts: str) -> NpmRewrite:
    """Provide offline what the npm dependencies of ``environment`` download at install time,
    in the Dockerfile ``text`` (whose FROM lines already point at local images); ``scripts`` is
    the text of the scripts that may run the install (tests, solution). Stages not on a
    stand-in are left alone; without an npm/yarn/pnpm install anywhere nothing changes."""
    out = NpmRewrite(text=text)
    if not _INSTALL_RE.search(text) and not _INSTALL_RE.search(scripts):
        return out
    found = _found(environment)
    if not found:
        return out
    images = [m.group(1) for m in map(_FROM_RE.match, text.splitlines()) if m]
    releases = [r for r in map(stand_in_release, images) if r is not None]
    if not releases:
        return out
    provided = []
    for downloader, spec, where in found:
        why = downloader.why_missing
        if downloader.package == "chromedriver" and _chromedriver_ignores_filepath(spec):
            why = (
                "chromedriver 114.0.2 - 117.0.2 take a local file only while looking up "
                "Chrome's version online, so Debian's chromium-driver cannot be given to it"
            )
        if downloader.apt and not why:
            provided.append((downloader, spec, where))
            continue
        out.missing.append(
            f"{downloader.what} (npm package {downloader.package} {spec} in {where}: its "
            f"install script downloads it from {downloader.host}; {why})"
        )
    if not provided:
        return out
    for downloader, spec, where in provided:
        debian = " and ".join(downloader.apt)
        majors = sorted({DEBIAN_CHROMIUM.get(r, "?") for r in releases})
        out.notes.append(
            f"npm {downloader.package} {spec} ({where}) downloads {downloader.what} "
            f"{_asked_version(downloader, spec)} from {downloader.host} at install time -> "
            f"Debian {'/'.join(sorted(set(releases)))}'s {debian} ({' / '.join(majors)}.x), "
            f"given through {', '.join(k for k, _ in downloader.env)}: the version differs "
            "from the one the package would fetch"
        )
    apt = sorted({p for d, _, _ in provided for p in d.apt})
    setup = " && ".join(d.setup for d, _, _ in provided if d.setup)
    run = (
        "RUN apt-get update && apt-get install -y --no-install-recommends "
        + " ".join(apt)
        + " && rm -rf /var/lib/apt/lists/*"
        + (f" && {setup}" if setup else "")
    )
    env = "ENV " + " ".join(f"{k}={v}" for d, _, _ in provided for k, v in d.env)
    lines: list[str] = []
    for line in text.splitlines():
        lines.append(line)
        match = _FROM_RE.match(line)
        if match and stand_in_release(match.group(1)):
            lines += [run, env]
    out.text = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
    return out
