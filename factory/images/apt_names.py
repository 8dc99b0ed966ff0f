"""Package names of ``apt-get install`` lines, made to work on a stand-in's Debian release.

Public Dockerfiles are written for Ubuntu (jammy, noble) or for an older Debian; the stand-in
images are Debian bookworm or trixie, and only Debian's archive is reachable here. Each name
is mapped for the stand-in's release:

* the table ``environments/images/offline/ubuntu-packages.toml`` (renamed or Ubuntu-only packages);
* version families: ``openjdk-N-*`` and ``temurin-N-*`` need a JDK of major N, which only
  some releases have (bookworm 17, trixie 21 and 25), so another major is *missing*;
  ``python3.X-*`` becomes the release's own CPython (bookworm 3.11, trixie 3.13), with the
  minor difference stated (as the alias table does for ``python:3.x`` images);
* names another step already provided (a toolchain installed from a registry package) are
  dropped.

What cannot be had is reported by name (:attr:`AptRewrite.missing`), and a build log's
"Unable to locate package" lines are read back the same way (:func:`factory.images.build_log.missing_packages`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from factory.datafiles import load_toml_model
from factory.resources import environments_dir

RELEASE_PYTHON = {"bookworm": "3.11", "trixie": "3.13"}
"""The CPython minor each Debian release ships."""
RELEASE_JDKS = {"bookworm": ("17",), "trixie": ("21", "25")}
"""The OpenJDK majors each Debian release ships."""

_JDK_RE = re.compile(r"^(?:openjdk|temurin)-(\d+)-(jdk|jre)(-headless)?$")
_PYTHON_RE = re.compile(r"^(lib)?python(3\.\d+)(-[a-z0-9.-]+)?$")


class PackageRule(BaseModel):
    """One ``[[package]]`` of ubuntu-packages.toml."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """The name an ``apt-get install`` line uses."""
    bookworm: str | None = None
    """Debian bookworm's name(s), space-separated; '' = dropped; unset = kept."""
    trixie: str | None = None
    """Debian trixie's name(s), space-separated; '' = dropped; unset = kept."""
    why: str = ""
    """Why, for the note."""


class PackageFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    package: list[PackageRule] = Field(default_factory=list)


@cache
def package_rules() -> dict[str, PackageRule]:
    path = environments_dir() / "images" / "offline" / "ubuntu-packages.toml"
    return {rule.name: rule for rule in load_toml_model(path, PackageFile, "package map").package}


@dataclass
class AptRewrite:
    """The package list for one ``apt-get install``, mapped for a release."""

    packages: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def map_package(name: str, release: str) -> tuple[list[str], str | None, str | None]:
    """(names to install, note, what is missing) for one requested package on ``release``."""
    bare, _, version = name.partition("=")
    rule = package_rules().get(bare)
    if rule is not None:
        target = getattr(rule, release, None)
        if target is None:
            return [name], None, None
        names = target.split()
        shown = " ".join(names) if names else "nothing"
        return names, f"apt: {bare} -> {shown} on Debian {release} ({rule.why})", None
    jdk = _JDK_RE.match(bare)
    if jdk:
        major, kind, headless = jdk.group(1), jdk.group(2), jdk.group(3) or ""
        majors = RELEASE_JDKS.get(release, ())
        if major not in majors:
            have = " and ".join(majors) or "none"
            return [], None, f"Java {major} ({bare}; Debian {release} has OpenJDK {have})"
        debian = f"openjdk-{major}-{kind}{headless}"
        if debian == bare:
            return [name], None, None
        return [debian], f"apt: {bare} -> {debian} (Debian's build of the same JDK major)", None
    python = _PYTHON_RE.match(bare)
    have = RELEASE_PYTHON.get(release)
    if python and have and python.group(2) != have:
        suffix = python.group(3) or ""
        if suffix == "-distutils":
            if release == "bookworm":
                return ["python3-distutils"], f"apt: {bare} -> python3-distutils", None
            return [], f"apt: {bare} dropped (CPython {have} has no distutils)", None
        debian = f"{python.group(1) or ''}python{have}{suffix}"
        note = (
            f"apt: {bare} -> {debian} (Debian {release}'s CPython is {have}; the task asked "
            f"for {python.group(2)}, so the minor version differs)"
        )
        return [debian], note, None
    return [name], None, None


def rewrite_packages(packages: list[str], release: str, provided: set[str]) -> AptRewrite:
    """Map every name of one install line; names in ``provided`` are dropped (installed by a
    toolchain provider already)."""
    out = AptRewrite()
    for name in packages:
        bare = name.partition("=")[0]
        if bare in provided:
            out.notes.append(f"apt: {bare} dropped (installed by the toolchain provider)")
            continue
        names, note, missing = map_package(name, release)
        if missing:
            out.missing.append(missing)
            continue
        if note:
            out.notes.append(note)
        out.packages += [n for n in names if n not in out.packages]
    return out
