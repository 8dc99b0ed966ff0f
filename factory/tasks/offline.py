"""Make imported verifier scripts run without a network.

Public test scripts install their tools at test time: ``apt-get install curl``, uv from
``astral.sh``, then ``uv add pytest==8.4.1`` or ``uvx -w pytest ...``. The importers use
:func:`scan_test_script` to find those installs; the packages are installed at *build* time
instead (see ``templates/import/dockerfile-appendix.j2``) and the internet-only lines are
neutralised. uv itself is the real one from PyPI, at the version the installer named; what the
script's uv commands fetch is put in uv's cache at build time, and the verifier runs uv with
``UV_OFFLINE=1`` (:data:`VERIFIER_ENV`). Every change is described in a note.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path

from factory.errors import TaskFormatError
from factory.inputs import MAX_CONFIG_BYTES, read_text
from factory.tasks.config import EnvironmentConfig
from factory.tasks.safety import link_escapes
from factory.templating import render

_INSTALLER_RE = re.compile(
    r"(curl|wget)\b[^|]*\b(astral\.sh|get\.uv|install\.python-poetry)[^|]*\|\s*(ba)?sh"
)
_UV_VERSION_RE = re.compile(r"astral\.sh/uv/(\d+\.\d+\.\d+)/")
DEFAULT_UV_VERSION = "0.9.30"
"""uv installed when a script installs uv without naming a version (same as factory/base)."""
VERIFIER_ENV = {"UV_OFFLINE": "1"}
"""``[verifier].env`` of an imported task whose tests use uv: resolve from the cache only."""
_SOURCE_CLONES = {
    "googletest": (
        re.compile(
            r"git\s+clone\s+(?:-\S+\s+(?:v?[\d.]+\s+)?)*(?:https?://|git@)github\.com[/:]"
            r"google/googletest(?:\.git)?(?P<opts>(?:\s+(?:-b|--branch|--depth)\s+\S+)*)"
            r"(?:\s+(?P<dest>[\w./-]+))?"
        ),
        "/usr/src/googletest",
        "Debian's googletest sources (1.12 on bookworm, 1.16 on trixie)",
    ),
}
"""Git repositories that test scripts clone and that Debian ships as source packages:
package -> (the clone command, where the package puts the sources, what the note calls them)."""
_UV_FETCH_RE = re.compile(
    r"((?:^|[;&|(])\s*(?:(?:then|do|else|exec|time|sudo|\w+=\S*)\s+)*)"
    r"((?:\S*/)?uvx|(?:\S*/)?uv(?=\s+(?:run|add|pip|tool|sync)\b))(?=\s)",
    re.M,
)
"""uv or uvx in command position, where it may fetch packages: made ``--offline``."""
_APT_RE = re.compile(r"^\s*(sudo\s+)?(apt-get|apt)\s+(-\S+\s+)*(update|install)\b")
_SEGMENT_SPLIT = re.compile(r"\s*(?:&&|;|\|\|)\s*")
_PIP_OPTS_WITH_VALUE = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-c",
    "--constraint",
    "--python",
    "-p",
    "--target",
    "--prefix",
    "-f",
    "--find-links",
    "--group",
    "--extra",
    "--directory",
    "--project",
    "--cache-dir",
    "--python-version",
    "--platform",
}


@dataclass
class ScriptScan:
    """What a test script fetches, and the script with its internet-only lines removed."""

    text: str
    apt_packages: list[str] = field(default_factory=list)
    system_packages: list[str] = field(default_factory=list)
    """pip-installed into the system Python (the script did that itself)."""
    venv_packages: list[str] = field(default_factory=list)
    """uv-managed: fetched into uv's cache at build time."""
    uses_uv: bool = False
    """The script runs uv or uvx (or installed uv)."""
    uv_version: str | None = None
    """The uv version the script's installer named."""
    notes: list[str] = field(default_factory=list)

    @property
    def needs_install(self) -> bool:
        return bool(self.apt_packages or self.system_packages or self.venv_packages or self.uses_uv)


def _spec_name(spec: str) -> str:
    match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return (match.group(1) if match else spec).lower().replace("_", "-")


def _add(target: list[str], items: list[str]) -> None:
    """Append specs, one per package name; a pinned spec replaces an unpinned one."""
    for item in items:
        name = _spec_name(item)
        same = [i for i, existing in enumerate(target) if _spec_name(existing) == name]
        if not same:
            target.append(item)
        elif target[same[0]] == _spec_name(target[same[0]]) and item != name:
            target[same[0]] = item


def _requirements(args: list[str], requirement_root: Path | None) -> list[str]:
    """Package specs among pip/uv arguments; ``-r FILE`` is read from the tests folder."""
    specs: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-r", "--requirement", "--with-requirements") and i + 1 < len(args):
            specs += _read_requirements(args[i + 1], requirement_root)
            i += 2
            continue
        if arg in ("-w", "--with") and i + 1 < len(args):
            specs += [part for part in args[i + 1].split(",") if part]
            i += 2
            continue
        if arg.startswith("--with="):
            specs += [part for part in arg.split("=", 1)[1].split(",") if part]
        elif arg in _PIP_OPTS_WITH_VALUE:
            i += 1
        elif not arg.startswith("-") and not arg.startswith((".", "/", "$")) and "://" not in arg:
            specs.append(arg)
        i += 1
    return specs


def _read_requirements(path: str, root: Path | None) -> list[str]:
    """Package specs of a requirements file in the tests folder. A file that is a link out of
    that folder, or not a regular file, is never read (its content would be a host file's)."""
    if root is None:
        return []
    candidate = root / Path(path.replace("$TEST_DIR", "").replace("/tests/", "")).name
    if candidate.is_symlink() and link_escapes(candidate, Path(os.path.realpath(root))):
        return []
    try:
        info = os.stat(candidate)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            return []
        text = candidate.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [
        ln.split("#")[0].strip()
        for ln in text.splitlines()
        if ln.split("#")[0].strip() and not ln.startswith("-")
    ]


_REDIRECT_RE = re.compile(r"^(\d*|&)(>>?|<)(&\d*|\S*)$")


def _command_words(words: list[str]) -> list[str]:
    """The words of a simple command: redirections (``2>/dev/null``, ``> log``, ``&>x``) and
    anything from a pipe on are dropped, so they are never read as package names."""
    out: list[str] = []
    skip_target = False
    for word in words:
        if skip_target:
            skip_target = False
            continue
        if word in ("|", "|&"):
            break
        match = _REDIRECT_RE.match(word)
        if match:
            skip_target = not match.group(3)  # a bare `>` takes the next word as its target
            continue
        out.append(word)
    return out


def _scan_segment(words: list[str], scan: ScriptScan, root: Path | None) -> None:
    if not words:
        return
    while words and (words[0] in ("sudo", "exec", "time") or re.fullmatch(r"\w+=\S*", words[0])):
        words = words[1:]
    if not words:
        return
    head = Path(words[0]).name
    rest = words[1:]
    if head in ("pip", "pip3") or (
        re.fullmatch(r"python(3(\.\d+)?)?", head) and rest[:2] == ["-m", "pip"]
    ):
        args = rest[2:] if head.startswith("python") else rest
        if args[:1] == ["install"]:
            _add(scan.system_packages, _requirements(args[1:], root))
        return
    if head in ("uv", "uvx"):
        scan.uses_uv = True
    if head == "uv" and rest:
        sub = rest[0]
        if sub == "add":
            _add(scan.venv_packages, _requirements(rest[1:], root))
        elif sub == "pip" and rest[1:2] == ["install"]:
            _add(scan.venv_packages, _requirements(rest[2:], root))
        elif sub in ("run", "tool") and rest:
            _add(
                scan.venv_packages, [s for s in _requirements(rest[1:], root) if _is_with(rest, s)]
            )
        return
    if head == "uvx":
        with_specs = [s for s in _requirements(rest, root) if _is_with(rest, s)]
        tool = next((w for w in _positional(rest)), None)
        _add(scan.venv_packages, with_specs + ([tool.split("@")[0]] if tool else []))


def _is_with(args: list[str], spec: str) -> bool:
    for i, arg in enumerate(args):
        if (
            arg in ("-w", "--with", "--with-requirements")
            and i + 1 < len(args)
            and spec in args[i + 1].split(",")
        ):
            return True
        if arg.startswith("--with=") and spec in arg.split("=", 1)[1].split(","):
            return True
    return False


def _positional(args: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("-w", "--with", "-p", "--python", "--from", "--with-requirements"):
            i += 2
            continue
        if not arg.startswith("-"):
            return args[i:]
        i += 1
    return out


def scan_test_script(text: str, *, name: str, requirement_root: Path | None = None) -> ScriptScan:
    """Find the script's installs and neutralise lines that only work online."""
    scan = ScriptScan(text="")
    out: list[str] = []
    for line in _logical_lines(text):
        stripped = " ".join(part.strip().rstrip("\\").strip() for part in line.splitlines())
        if stripped.startswith("#") or not stripped:
            out.append(line)
            continue
        if _INSTALLER_RE.search(line):
            out.append(
                f": # factory: removed (needs the internet; uv is installed at build time): {stripped}"
            )
            if "poetry" not in _INSTALLER_RE.search(line).group(2):
                scan.uses_uv = True
                version = _UV_VERSION_RE.search(line)
                scan.uv_version = scan.uv_version or (version.group(1) if version else None)
            scan.notes.append(f"{name}: removed the installer download `{stripped[:80]}`")
            continue
        line, stripped = _replace_clones(line, stripped, scan, name)
        segments = _SEGMENT_SPLIT.split(stripped)
        apt_segment = False
        for segment in segments:
            try:
                words = _command_words(shlex.split(segment, comments=True))
            except ValueError:
                continue
            if _APT_RE.match(segment):
                apt_segment = True
                if "install" in words:
                    index = words.index("install")
                    _add(
                        scan.apt_packages, [w for w in words[index + 1 :] if not w.startswith("-")]
                    )
                continue
            _scan_segment(words, scan, requirement_root)
        if "--offline" not in line:
            offline = _UV_FETCH_RE.sub(r"\1\2 --offline", line)
            if offline != line:
                note = f"{name}: uv runs `--offline` (from its build-time cache)"
                if note not in scan.notes:
                    scan.notes.append(note)
                line = offline
        if apt_segment and all(_APT_RE.match(s) or not s for s in segments):
            out.append(f": # factory: moved to the image build: {stripped}")
            scan.notes.append(f"{name}: moved `{stripped[:80]}` to the image build")
            continue
        out.append(line)
    scan.text = "\n".join(out) + ("\n" if text.endswith("\n") else "")
    if scan.system_packages:
        scan.notes.append(
            f"{name}: pre-installed {' '.join(scan.system_packages)} (pip) at build time"
        )
    if scan.venv_packages:
        scan.notes.append(
            f"{name}: {' '.join(scan.venv_packages)} fetched into uv's cache at build time (what "
            "uv fetched at test time); the verifier runs uv with UV_OFFLINE=1"
        )
    return scan


def _replace_clones(line: str, stripped: str, scan: ScriptScan, name: str) -> tuple[str, str]:
    """``git clone`` of a repository Debian ships as sources -> a copy of those sources, the
    package installed at build time (GitHub cannot be reached offline)."""
    for package, (pattern, path, what) in _SOURCE_CLONES.items():
        match = pattern.search(stripped)
        if match is None:
            continue
        dest = match.group("dest") or package
        copy = f"cp -r {path} {shlex.quote(dest)}"
        _add(scan.apt_packages, [package])
        scan.notes.append(
            f"{name}: `{match.group(0)[:70]}` -> {what}, installed at build time (the "
            "version differs from the cloned one)"
        )
        stripped = stripped[: match.start()] + copy + stripped[match.end() :]
        line = stripped
    return line, stripped


def _logical_lines(text: str) -> list[str]:
    """Physical lines joined where a line ends with a backslash continuation."""
    logical: list[str] = []
    pending: list[str] = []
    for line in text.splitlines():
        pending.append(line)
        if not line.rstrip().endswith("\\"):
            logical.append("\n".join(pending))
            pending = []
    if pending:
        logical.append("\n".join(pending))
    return logical


def merge_scans(scans: list[ScriptScan]) -> ScriptScan:
    merged = ScriptScan(text="")
    for scan in scans:
        _add(merged.apt_packages, scan.apt_packages)
        _add(merged.system_packages, scan.system_packages)
        _add(merged.venv_packages, scan.venv_packages)
        merged.uses_uv = merged.uses_uv or scan.uses_uv
        merged.uv_version = merged.uv_version or scan.uv_version
        merged.notes += scan.notes
    return merged


def last_user(dockerfile: str) -> str | None:
    """The USER in effect at the end of the Dockerfile (None: root / unset)."""
    user = None
    for line in dockerfile.splitlines():
        match = re.match(r"^\s*USER\s+(\S+)", line, re.IGNORECASE)
        if match:
            user = match.group(1)
        elif re.match(r"^\s*FROM\s", line, re.IGNORECASE):
            user = None
    return None if user in (None, "root", "0") else user


def dockerfile_appendix(scan: ScriptScan, dockerfile: str) -> str:
    """Dockerfile lines that install the scanned packages at build time ('' if none)."""
    if not scan.needs_install:
        return ""
    return render(
        "import/dockerfile-appendix.j2",
        apt_packages=scan.apt_packages,
        system_packages=scan.system_packages,
        venv_packages=scan.venv_packages,
        uv=scan.uses_uv,
        uv_version=scan.uv_version or DEFAULT_UV_VERSION,
        restore_user=last_user(dockerfile),
    )


def with_build_time_installs(dockerfile: str, scan: ScriptScan) -> str:
    """The Dockerfile followed by the lines that install what ``scan`` found."""
    return dockerfile.rstrip("\n") + "\n" + dockerfile_appendix(scan, dockerfile)


def undeclared_network_fetches(
    environment: EnvironmentConfig, test_script: Path
) -> ScriptScan | None:
    """What ``tests/test.sh`` fetches at test time when the task declares no network at all
    (neither ``network_mode`` nor ``allow_internet``), else None. Harbor gives such a task the
    internet; factory runs it offline, so the two harnesses' verdicts differ."""
    if environment.network_mode is not None or environment.allow_internet is not None:
        return None
    try:
        text = read_text(test_script)  # bounded; never opens a FIFO
    except TaskFormatError:
        return None
    scan = scan_test_script(text, name=test_script.name)
    return scan if scan.needs_install else None
