"""Toolchain installers in public Dockerfiles, satisfied offline on the stand-in images.

Public task Dockerfiles install language toolchains from the internet: the Go tarball from the
Go website, Node.js from its website or from the NodeSource setup script, rustup, SDKMAN,
Adoptium's builds, Ubuntu PPAs (deadsnakes) and other third-party apt repositories. None of
that is reachable here; Debian's archive and the PyPI and npm registries are. When a build
stage runs on a stand-in (``factory/*:bookworm|trixie``), :func:`provide_toolchains` rewrites
each such command of its RUN lines:

* an installer is replaced by the first *offer* of ``environments/images/offline/toolchains.toml``
  that matches the requested version (the major for Node.js and Java, major.minor for Go, any
  1.x for rustup's channels): a Debian package of the stand-in's release first, then a
  registry package; the offer puts the toolchain where the installer would have (``/usr/local/go``,
  ``/usr/local/bin/node``), so the Dockerfile's ``ENV PATH`` lines keep working;
* the commands around it that handled the download (``tar -xzf go.tar.gz``, ``rm go.tar.gz``)
  and third-party apt sources (PPAs, keys, ``sources.list.d`` entries) are dropped;
* ``apt-get install`` package names are mapped for the release (:mod:`factory.images.apt_names`).

Every change is a note naming the Dockerfile line, what was asked for, what is installed
instead and how the versions differ. What has no offer is collected in
:attr:`ToolchainRewrite.missing`, by name.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from factory.datafiles import load_toml_model
from factory.images.apt_names import rewrite_packages
from factory.resources import environments_dir

STAND_IN_RELEASES = ("bookworm", "trixie")
_NODE_PROVIDES = {"nodejs", "npm", "nodejs-doc", "libnode-dev"}


class Toolchain(str, Enum):
    GO = "go"
    NODE = "node"
    RUST = "rust"
    JAVA = "java"


class Offer(BaseModel):
    """One ``[[offer]]`` of toolchains.toml: a way to install a toolchain offline."""

    model_config = ConfigDict(extra="forbid")

    toolchain: Toolchain
    release: str
    """The stand-in's Debian release it installs on; '*' for any."""
    versions: list[str]
    """Versions it can install."""
    source: str
    """How notes name it ({version}, {major} substituted)."""
    install: str
    """Shell command that installs it as root ({version}, {major} substituted)."""

    def render(self, text: str, version: str) -> str:
        return text.replace("{version}", version).replace("{major}", version.split(".")[0])


class OfferFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    offer: list[Offer] = Field(default_factory=list)


@cache
def load_offers() -> tuple[Offer, ...]:
    path = environments_dir() / "images" / "offline" / "toolchains.toml"
    return tuple(load_toml_model(path, OfferFile, "toolchain offers").offer)


@dataclass(frozen=True)
class Request:
    """A toolchain a Dockerfile command installs from the internet."""

    toolchain: Toolchain
    version: str | None
    """As asked ('1.21.5', '20', '17.0.9'); None for a channel such as 'stable' or 'lts'."""
    how: str
    """What the original command did, for the note."""


def _key(toolchain: Toolchain, version: str) -> tuple[str, ...]:
    """The part of a version that must match: major.minor for Go, the major otherwise."""
    return tuple(version.split(".")[: 2 if toolchain is Toolchain.GO else 1])


def _newest_first(version: str) -> tuple[int, ...]:
    return tuple(-int(p) for p in re.findall(r"\d+", version))


def choose_offer(request: Request, release: str) -> tuple[Offer, str] | None:
    """The offer (and version) that installs ``request`` on ``release``: Debian's first, then
    the registries', newest version first; None when nothing matches."""
    candidates: list[tuple[int, tuple[int, ...], Offer, str]] = []
    for offer in load_offers():
        if offer.toolchain is not request.toolchain or offer.release not in (release, "*"):
            continue
        for version in offer.versions:
            if request.version is not None and _key(request.toolchain, version) != _key(
                request.toolchain, request.version
            ):
                continue
            candidates.append((offer.release == "*", _newest_first(version), offer, version))
    if not candidates:
        return None
    _, _, offer, version = min(candidates, key=lambda c: (c[0], c[1]))
    return offer, version


# --- recognising installers -------------------------------------------------------------

_GO_RE = re.compile(
    r"(?:go\.dev|golang\.org|dl\.google\.com/go|storage\.googleapis\.com/golang)/(?:dl/)?"
    r"go(\d+\.\d+(?:\.\d+)?)\.linux-[\w.${}-]+\.tar\.gz"
)
_NODE_DIST_RE = re.compile(r"nodejs\.org/dist/v?(\d+)[\d.]*/node-v?[\d.]+-linux-[\w]+\.tar\.\w+")
_NODESOURCE_RE = re.compile(r"deb\.nodesource\.com/(?:setup_|node_)(\d+|lts|current)\.x")
_RUSTUP_RE = re.compile(r"sh\.rustup\.rs|rustup-init|static\.rust-lang\.org/rustup")
_RUST_CHANNEL_RE = re.compile(r"--default-toolchain[= ](\S+)")
_SDK_INSTALL_RE = re.compile(r"\bsdk install ([\w-]+)(?:[ \t]+([\w.-]+))?")
_ADOPTIUM_RE = re.compile(
    r"adoptium/temurin(\d+)-binaries|api\.adoptium\.net/v3/binary/(?:latest|version)/(?:jdk-?)?(\d+)"
)
_APT_REPO_RE = re.compile(
    r"\b(?:add-apt-repository|apt-add-repository|apt-key\s+(?:adv|add))\b"
    r"|/etc/apt/sources\.list|gpg\s+--dearmor|get\.sdkman\.io|sdkman-init\.sh"
)
_APT_INSTALL_RE = re.compile(r"^(\s*(?:sudo\s+)?(?:DEBIAN_FRONTEND=\S+\s+)?apt(?:-get)?\s+)(.*)$")
_DOWNLOAD_TARGET_RE = re.compile(r"\s(?:-o|-O|--output)\s*(\S+)")
_URL_RE = re.compile(r"https?://[^\s'\"]+")


def _request(segment: str) -> Request | None:
    if match := _GO_RE.search(segment):
        return Request(Toolchain.GO, match.group(1), f"Go {match.group(1)} from the Go website")
    if match := _NODE_DIST_RE.search(segment):
        return Request(
            Toolchain.NODE, match.group(1), f"Node.js {match.group(1)} from the Node.js website"
        )
    if match := _NODESOURCE_RE.search(segment):
        major = match.group(1) if match.group(1).isdigit() else None
        what = f"Node.js {major}" if major else f"Node.js ({match.group(1)})"
        return Request(Toolchain.NODE, major, f"{what} from NodeSource's apt repository")
    if _RUSTUP_RE.search(segment):
        channel = _RUST_CHANNEL_RE.search(segment)
        version = channel.group(1) if channel else "stable"
        numbered = version if re.match(r"^1\.\d+", version) else None
        if version not in ("stable", "beta") and numbered is None:
            return Request(Toolchain.RUST, f"rust-{version}", f"Rust {version} from rustup")
        return Request(Toolchain.RUST, numbered, f"Rust {version} from rustup")
    if match := _ADOPTIUM_RE.search(segment):
        major = match.group(1) or match.group(2)
        return Request(Toolchain.JAVA, major, f"Java {major} from Adoptium")
    return None


def split_commands(command: str) -> list[str]:
    """``a && b || c; d`` -> ['a', '&&', 'b', '||', 'c', ';', 'd'], quotes respected."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                current.append(command[i : i + 2])
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif command.startswith(("&&", "||"), i) or ch == ";":
            parts += ["".join(current).strip(), command[i : i + (1 if ch == ";" else 2)]]
            current = []
            i += 1 if ch == ";" else 2
            continue
        elif ch == "\\" and i + 1 < len(command):
            current.append(command[i : i + 2])
            i += 2
            continue
        current.append(ch)
        i += 1
    parts.append("".join(current).strip())
    return parts


# --- rewriting --------------------------------------------------------------------------


@dataclass
class ToolchainRewrite:
    """Result of :func:`provide_toolchains`."""

    text: str
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """What nothing here provides, by name (empty: the Dockerfile can build offline)."""


@dataclass
class _Stage:
    release: str | None
    provided: set[str] = field(default_factory=set)
    downloads: set[str] = field(default_factory=set)


_FROM_RE = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE)
_RUN_RE = re.compile(r"^(\s*RUN\s+)(?!\[)(.*)$", re.IGNORECASE | re.DOTALL)
_VAR_DEF_RE = re.compile(r"^\s*(?:ARG|ENV)\s+([A-Za-z_]\w*)(?:=|\s+)(\S+)\s*$", re.IGNORECASE)
_VAR_RE = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")


def stand_in_release(image: str) -> str | None:
    """'factory/build:bookworm' -> 'bookworm'; None for any image that is not a stand-in."""
    repo, _, tag = image.rpartition(":")
    return tag if repo.startswith("factory/") and tag in STAND_IN_RELEASES else None


def _logical_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, parts = i, [lines[i]]
        while parts[-1].rstrip().endswith("\\") and not parts[-1].lstrip().startswith("#"):
            if i + 1 >= len(lines):
                break
            i += 1
            parts.append(lines[i])
        out.append((start + 1, "\n".join(parts)))
        i += 1
    return out


def _download_names(command: str) -> set[str]:
    """The files a download command leaves: its ``-o``/``-O``/``--output`` target, and the
    URL's last path segment (``wget URL``, ``curl -O URL`` and ``curl -LO URL`` save there)."""
    names = {m.group(1).strip("'\"") for m in _DOWNLOAD_TARGET_RE.finditer(command)}
    for url in _URL_RE.findall(command):
        if base := url.rstrip("/").rsplit("/", 1)[-1]:
            names.add(base)
    return {n for n in names if n and "://" not in n}


def _rewrite_segment(
    segment: str, line_no: int, stage: _Stage, variables: dict[str, str], out: ToolchainRewrite
) -> str:
    release = stage.release or ""
    expanded = _VAR_RE.sub(lambda m: variables.get(m.group(1), m.group(0)), segment)
    request = _request(expanded)
    if request is not None:
        if request.toolchain is Toolchain.NODE:
            stage.provided |= _NODE_PROVIDES
        if "|" not in expanded:  # piped into tar: nothing is left on disk to handle later
            stage.downloads |= _download_names(expanded)
        return _substitute(request, line_no, release, out)
    if _SDK_INSTALL_RE.search(expanded):
        return _rewrite_sdkman(expanded, line_no, release, out)
    if _APT_REPO_RE.search(expanded):
        out.notes.append(
            f"Dockerfile line {line_no}: dropped `{' '.join(segment.split())[:70]}` (a "
            "third-party apt source or installer: unreachable offline; Debian's archive serves)"
        )
        return "true"
    if stage.downloads and any(name in expanded.split() for name in stage.downloads):
        return "true"  # handled the replaced download (tar -xzf go.tar.gz, rm go.tar.gz)
    if re.match(r"^\s*(?:\S+/)?rustup\s", expanded):
        out.notes.append(
            f"Dockerfile line {line_no}: dropped `{' '.join(segment.split())[:60]}` (rustup "
            "is not installed: Debian's Rust has its own components)"
        )
        return "true"
    apt = _APT_INSTALL_RE.match(segment)
    if apt:
        return _rewrite_apt(apt.group(1), apt.group(2), line_no, stage, out)
    return segment


def _substitute(request: Request, line_no: int, release: str, out: ToolchainRewrite) -> str:
    """The install command of the offer for ``request`` (its note recorded), or ``false`` (a
    build step that fails) with the request recorded as missing."""
    chosen = choose_offer(request, release)
    if chosen is None:
        out.missing.append(f"{request.how} (no offline offer for Debian {release})")
        return "false"
    offer, version = chosen
    out.notes.append(
        f"Dockerfile line {line_no}: {request.how} -> {offer.render(offer.source, version)}"
        + _difference(request, version)
    )
    return offer.render(offer.install, version)


def _rewrite_sdkman(segment: str, line_no: int, release: str, out: ToolchainRewrite) -> str:
    """Every ``sdk install`` of a segment (often several inside one ``bash -c "..."``)."""
    commands = []
    for match in _SDK_INSTALL_RE.finditer(segment):
        tool, version = match.group(1), match.group(2) or ""
        if tool == "java":
            major = re.match(r"\d+", version)
            request = Request(
                Toolchain.JAVA, major.group(0) if major else None, f"Java {version} from SDKMAN"
            )
            command = _substitute(request, line_no, release, out)
            if command == "false":
                return command
            commands.append(command)
        elif tool == "maven":
            out.notes.append(
                f"Dockerfile line {line_no}: Maven {version} from SDKMAN -> Debian {release}'s "
                "maven (its own release)"
            )
            commands.append("apt-get update && apt-get install -y --no-install-recommends maven")
        else:
            out.missing.append(f"{f'{tool} {version}'.strip()} from SDKMAN (no offline offer)")
            return "false"
    return " && ".join(commands)


def _rewrite_apt(head: str, rest: str, line_no: int, stage: _Stage, out: ToolchainRewrite) -> str:
    try:
        words = shlex.split(rest)
    except ValueError:
        return head + rest
    if "install" not in words:
        return head + rest
    index = words.index("install")
    options = [w for w in words[index + 1 :] if w.startswith("-")]
    packages = [w for w in words[index + 1 :] if not w.startswith("-")]
    mapped = rewrite_packages(packages, stage.release or "", stage.provided)
    out.notes += [f"Dockerfile line {line_no}: {note}" for note in mapped.notes]
    out.missing += mapped.missing
    if mapped.packages == packages:
        return head + rest
    if not mapped.packages:
        return "true"
    return head + " ".join(
        shlex.quote(w) for w in [*words[: index + 1], *options, *mapped.packages]
    )


def _difference(request: Request, version: str) -> str:
    if request.version is None:
        return f" (the installer takes the newest release; this is {version}, which may be older)"
    if version == request.version:
        return ""
    same = ".".join(_key(request.toolchain, version))
    return (
        f" (asked for {request.version}, installs {version}: the same {same} line, "
        "another release within it)"
    )


def provide_toolchains(text: str) -> ToolchainRewrite:
    """Rewrite the internet-only toolchain installs of a Dockerfile whose ``FROM`` lines already
    point at local images (see :func:`factory.images.aliases.rewrite_dockerfile`). Stages on an
    image that is not a stand-in are left alone."""
    out = ToolchainRewrite(text="")
    lines: list[str] = []
    stage = _Stage(release=None)
    variables: dict[str, str] = {}
    for line_no, line in _logical_lines(text):
        if match := _FROM_RE.match(line):
            stage = _Stage(release=stand_in_release(match.group(1)))
        elif match := _VAR_DEF_RE.match(line):
            variables[match.group(1)] = match.group(2).strip("'\"")
        run = _RUN_RE.match(line)
        if run is None or stage.release is None or line.lstrip().startswith("#"):
            lines.append(line)
            continue
        command = " ".join(part.rstrip().rstrip("\\").strip() for part in run.group(2).split("\n"))
        parts = split_commands(command)
        new = [
            p if i % 2 else _rewrite_segment(p, line_no, stage, variables, out)
            for i, p in enumerate(parts)
        ]
        if new == parts:
            lines.append(line)
        else:
            lines.append(run.group(1) + " ".join(p for p in new if p))
    out.text = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
    return out


def provide_on_another_release(
    text: str, first: ToolchainRewrite, available: Callable[[str], bool]
) -> tuple[ToolchainRewrite, dict[str, str]] | None:
    """When ``first`` (``provide_toolchains(text)``) misses something, try the same Dockerfile
    with every stand-in base swapped for its sibling on the other Debian release
    (``factory/build:bookworm`` -> ``factory/build:trixie``): an Ubuntu jammy Dockerfile that
    installs ``openjdk-21-jdk`` cannot have it on bookworm (OpenJDK 17) but can on trixie.

    Returns the rewrite on the other release and the swaps (old image -> new) when nothing is
    missing there and every sibling is ``available`` (which may build it from its recipe: it is
    asked only then); None otherwise."""
    if not first.missing:
        return None
    for release in STAND_IN_RELEASES:
        swaps: dict[str, str] = {}
        lines = []
        for line in text.splitlines():
            match = _FROM_RE.match(line)
            old = stand_in_release(match.group(1)) if match else None
            if match and old is not None and old != release:
                image = match.group(1)
                swaps[image] = f"{image.rpartition(':')[0]}:{release}"
                line = line[: match.start(1)] + swaps[image] + line[match.end(1) :]
            lines.append(line)
        if not swaps:
            continue
        candidate = provide_toolchains("\n".join(lines) + ("\n" if text.endswith("\n") else ""))
        if candidate.missing or not all(available(image) for image in swaps.values()):
            continue
        for image, sibling in swaps.items():
            candidate.notes.insert(
                0,
                f"base {image} -> {sibling}: the Dockerfile asks for what Debian "
                f"{stand_in_release(image)} lacks ({'; '.join(first.missing)}); Debian "
                f"{release} has it as its own build of the same version line (another update "
                f"release than the original image's), and the rest of {release} is newer "
                f"than {stand_in_release(image)}",
            )
        return candidate, swaps
    return None
