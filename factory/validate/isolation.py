"""Verification isolated from the agent.

The agent (or a reference solution, or a probe) and the verifier share one container, because
the verifier must see the state the agent left: files, users, services it was asked to fix. So
before ``tests/test.sh`` runs, the harness takes back what the agent could use to forge the
verdict, with nothing it runs for that coming from the container's own filesystem: every harness
step runs a statically linked busybox from a read-only volume mounted at ``/.factory``
(:data:`factory.runtime.HARNESS_MOUNT`), so a replaced shell, a planted ``/etc/ld.so.preload``
or a swapped ``python3`` cannot touch it.

1. **Processes.** Right before the agent's first command the harness records the processes that
   exist (``pid:starttime``: the environment's own services). Before the verifier, every process
   that is neither one of those nor a descendant of one (PID 1 excepted) is stopped with SIGSTOP,
   round after round until none is left running: background loops that rewrite the reward,
   watchers that kill ``test.sh``, servers the agent started. They are frozen, not killed, so a
   process a test expects gone still counts as present. (Residual: an environment service the
   agent reconfigured can still act during verification; a task whose tests need a process the
   agent started must start it in ``test.sh``.)
2. **The verifier's toolchain.** From the engine's list of the container's changes against its
   image: files of the image under the code roots (``/bin``, ``/sbin``, ``/lib*``, ``/usr/bin``,
   ``/usr/sbin``, ``/usr/lib*``, ``/usr/local/{bin,sbin,lib*}``, ``/usr/libexec``, the dynamic
   loader's configuration, ``/etc/python3*``) that the agent modified or deleted are restored
   from the image — except inside package folders (``site-packages``, ``dist-packages``,
   ``node_modules``), where packages the agent installed or upgraded are its own business,
   unless they are the test runner itself (pytest and what it imports). Files the agent added
   that would run inside the verifier are removed: ``/etc/ld.so.preload`` and loader
   configuration, ``.pth`` hooks and ``sitecustomize``/``usercustomize`` modules, modules and
   byte code added to the standard library, pytest plugins registered by entry point, pytest
   configuration or ``conftest.py`` at ``/`` (the only ancestor of ``/tests``), and executables
   that shadow an image executable later on ``PATH``.
3. **The tests and the reward.** ``/tests`` is uploaded afresh and ``/logs/verifier`` recreated
   (by busybox); the verifier runs with ``PYTHONNOUSERSITE=1``; the reward is read only from
   what it wrote, and a reward outside [0, 1] is no reward (outcome ``invalid_reward``).

Everything the harness did is returned as an :class:`IsolationReport` and written to the
phase's log (``isolation.log``), so a task author sees why a reference solution that relied on
one of these things failed.
"""

from __future__ import annotations

import io
import posixpath
import re
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from factory.errors import ContainerDiedError
from factory.runtime import BUSYBOX, Sandbox

HARNESS_STEP_TIMEOUT_SEC = 60.0
VERIFIER_ENV = {"PYTHONNOUSERSITE": "1"}
"""Set for the verifier: Python ignores user site-packages (``~/.local``), which come before the
image's packages on ``sys.path`` and are agent-writable."""

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# --- processes ------------------------------------------------------------------------------

# Reads every /proc/<pid>/stat in one busybox awk; prints "pid:starttime" per process. The comm
# field may hold spaces and parentheses: everything up to the last ") " is dropped.
_STAT_FIELDS = 'r = $0; sub(/.*\\) /, "", r); split(r, f, " ")'
_BASELINE_SCRIPT = (
    f"{BUSYBOX} cat /proc/[0-9]*/stat 2>/dev/null | {BUSYBOX} awk '{{ {_STAT_FIELDS}; "
    'print $1 ":" f[20] }\''
)

# Prints the pids to stop: neither in the baseline nor below a baseline process (PID 1 does not
# count: orphans are re-parented to it), not this script or its children, not stopped already
# (by an earlier round: a process waiting in the kernel, e.g. for a vfork child, stops only when
# it leaves that wait, but it cannot run any code of its own before).
_FREEZE_AWK = (
    'BEGIN { n = split(keep, k, " "); for (i = 1; i <= n; i++) base[k[i]] = 1; '
    'n = split(done, k, " "); for (i = 1; i <= n; i++) sent[k[i]] = 1 } '
    f"{{ {_STAT_FIELDS}; p = $1; st[p] = f[1]; pp[p] = f[2]; t0[p] = f[20]; seen[p] = 1 }} "
    "END { for (p in seen) { "
    'if (p == 1 || p == self || (p in sent) || ((p ":" t0[p]) in base) || st[p] ~ /^[TtZX]/) '
    "continue; "
    "q = pp[p]; ok = 0; d = 0; "
    'while (q != "" && q != 0 && q != 1 && d < 512) { '
    'if (q == self || ((q ":" t0[q]) in base)) { ok = 1; break } q = pp[q]; d++ } '
    "if (!ok) print p } }"
)
_FREEZE_SCRIPT = (
    'keep="$1"; self=$$; all=""; round=0; '
    "while [ $round -lt 40 ]; do "
    f"found=$({BUSYBOX} cat /proc/[0-9]*/stat 2>/dev/null | "
    f'{BUSYBOX} awk -v keep="$keep" -v self="$self" -v done="$all" \'{_FREEZE_AWK}\'); '
    '[ -z "$found" ] && break; '
    'for p in $found; do kill -STOP "$p" 2>/dev/null; done; '
    'all="$all $found"; round=$((round + 1)); done; '
    'for p in $all; do c="?"; read -r c < /proc/$p/comm 2>/dev/null; echo "frozen $p $c"; done; '
    'echo "rounds $round"'
)


@dataclass(frozen=True)
class Baseline:
    """The processes that existed before the agent's first command."""

    processes: frozenset[str]
    """``pid:starttime`` (starttime in clock ticks since boot, so a reused pid never matches)."""


def _root_script(box: Sandbox, script: str, *args: str, what: str, doing: str) -> str:
    """The output of busybox ``sh -c script`` run as root in the container; a failure means
    the container is gone (ContainerDiedError: "cannot ``doing``")."""
    result = box.exec(
        [BUSYBOX, "sh", "-c", script, *args],
        timeout_sec=HARNESS_STEP_TIMEOUT_SEC,
        user="0",
        env={},
        workdir="/",  # the agent may have removed its working directory
        what=what,
    )
    if result.timed_out or result.exit_code != 0:
        raise ContainerDiedError(f"cannot {doing}: {result.output[-200:]}")
    return result.output


def capture_baseline(box: Sandbox) -> Baseline:
    """Record the container's processes now (call right before the agent starts)."""
    output = _root_script(
        box, _BASELINE_SCRIPT, what="process baseline", doing="list the container's processes"
    )
    entries = {line.strip() for line in output.splitlines() if ":" in line}
    return Baseline(frozenset(entries))


def freeze_agent_processes(box: Sandbox, baseline: Baseline) -> list[str]:
    """SIGSTOP every process the agent started; returns ``"pid comm"`` of each one."""
    output = _root_script(
        box,
        _FREEZE_SCRIPT,
        "freeze",
        " ".join(sorted(baseline.processes)),
        what="freezing the agent's processes",
        doing="freeze the agent's processes",
    )
    return [line[len("frozen ") :] for line in output.splitlines() if line.startswith("frozen ")]


# --- the verifier's toolchain -----------------------------------------------------------


class ChangeKind(int, Enum):
    """The engine's kinds of filesystem change (``docker diff``)."""

    MODIFIED = 0
    ADDED = 1
    DELETED = 2


@dataclass(frozen=True)
class Change:
    path: str
    kind: ChangeKind
    is_dir: bool | None = None
    """None when the engine did not say (its diff does not)."""


_CODE_ROOTS = (
    "/bin/",
    "/sbin/",
    "/lib/",
    "/lib32/",
    "/lib64/",
    "/libx32/",
    "/usr/bin/",
    "/usr/sbin/",
    "/usr/libexec/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
    "/etc/ld.so.conf.d/",
)
_CODE_ROOT_PATTERNS = (
    re.compile(r"^/usr/(local/)?lib(32|64|x32)?/"),
    re.compile(r"^/etc/python3[^/]*/"),
)
_CODE_FILES = ("/etc/ld.so.preload", "/etc/ld.so.conf")
_PACKAGE_DIR = re.compile(r"^(.*?/(?:site-packages|dist-packages|node_modules))/([^/]+)")
_STDLIB_DIR = re.compile(r"^/usr/(?:local/)?lib/python3(?:\.\d+)?/")
_TEST_RUNNER = frozenset(
    {"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "exceptiongroup", "tomli", "py"}
)
"""Top-level Python packages the verifier's test runner imports: protected wherever installed."""
_ROOT_PYTEST_FILES = frozenset(
    {"/conftest.py", "/pytest.ini", "/pyproject.toml", "/tox.ini", "/setup.cfg"}
)
_HOOK_MODULES = re.compile(r"(^|/)(sitecustomize|usercustomize)(\.[^/]*)?\.py[c]?$")


def _package_name(entry: str) -> str:
    """'pytest-8.3.2.dist-info' -> 'pytest'; 'py.py' -> 'py'; '_pytest' -> '_pytest'."""
    name = re.sub(r"\.(py|pth|so)$", "", entry)
    name = re.sub(r"-[0-9][^/]*\.(dist|egg)-info$", "", name)
    return re.sub(r"\.(dist|egg)-info$", "", name).split(".")[0].lower().replace("-", "_")


def _in_code_roots(path: str) -> bool:
    return (
        path in _CODE_FILES
        or path.startswith(_CODE_ROOTS)
        or any(p.match(path) for p in _CODE_ROOT_PATTERNS)
    )


def _protected(path: str) -> bool:
    """True when the verifier's toolchain includes ``path`` (restore it if the agent changed it)."""
    if path in _ROOT_PYTEST_FILES:
        return True
    if not _in_code_roots(path):
        return False
    package = _PACKAGE_DIR.match(path)
    if package is None:
        return True
    return _package_name(package.group(2)) in _TEST_RUNNER


@dataclass
class RepairPlan:
    """What to put back from the image and what to take away before the verifier runs."""

    restore: list[str] = field(default_factory=list)
    """Image paths the agent modified or deleted (restored from the image)."""
    remove: list[str] = field(default_factory=list)
    """Paths the agent added that would run inside the verifier."""
    reasons: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.restore or self.remove)


def plan_repairs(
    changes: Iterable[Change],
    *,
    path_dirs: Iterable[str],
    image_kind: Callable[[str], str | None],
    live_text: Callable[[str], str],
) -> RepairPlan:
    """Decide what :func:`repair_toolchain` does for ``changes`` (the container's diff).

    ``image_kind(path)`` says what the image has at ``path`` ('dir', 'file' or None);
    ``live_text(path)`` reads a (small) file of the live container.
    """
    changes = sorted(changes, key=lambda c: c.path)
    paths = {c.path for c in changes}
    plan = RepairPlan()
    path_dirs = [d.rstrip("/") for d in path_dirs if d.startswith("/")]

    def covered(path: str, chosen: list[str]) -> bool:
        return any(path == p or path.startswith(p + "/") for p in chosen)

    for change in changes:
        path = change.path
        if covered(path, plan.restore) or covered(path, plan.remove):
            continue
        if change.kind is ChangeKind.ADDED:
            why = _added_hook(path, path_dirs, image_kind, live_text)
            if why:
                plan.remove.append(path)
                plan.reasons[path] = why
            continue
        if not _protected(path):
            continue
        if change.kind is ChangeKind.MODIFIED:
            if change.is_dir or (
                change.is_dir is None
                and (any(p.startswith(path + "/") for p in paths) or image_kind(path) != "file")
            ):
                continue  # a directory whose contents changed: its entries are listed too
            plan.restore.append(path)
            plan.reasons[path] = "modified"
        else:
            plan.restore.append(path)
            plan.reasons[path] = "deleted"
    return plan


def _added_hook(
    path: str,
    path_dirs: list[str],
    image_kind: Callable[[str], str | None],
    live_text: Callable[[str], str],
) -> str | None:
    """Why an added path would run inside the verifier (None when it would not)."""
    if path in _ROOT_PYTEST_FILES:
        return "pytest configuration above /tests"
    if path == "/etc/ld.so.preload" or path.startswith("/etc/ld.so.conf.d/"):
        return "dynamic loader configuration"
    if _HOOK_MODULES.search(path):
        return "Python start-up hook"
    package = _PACKAGE_DIR.match(path)
    if package is not None and _in_code_roots(path):
        site, entry = package.group(1), package.group(2)
        rest = path[len(site) + 1 :]
        if entry.endswith(".pth") and rest == entry:
            return "Python .pth hook"
        if _package_name(entry) in _TEST_RUNNER:
            return "test runner package"
        if rest.endswith(".dist-info/entry_points.txt") and "pytest11" in live_text(path):
            return "pytest plugin entry point"
        return None
    if _STDLIB_DIR.match(path):
        return "added to the Python standard library"
    parent, name = posixpath.split(path)
    if parent in path_dirs:
        later = path_dirs[path_dirs.index(parent) + 1 :]
        for directory in later:
            if image_kind(f"{directory}/{name}") == "file":
                return f"shadows {directory}/{name} on PATH"
    return None


# --- doing it ---------------------------------------------------------------------------


@dataclass
class IsolationReport:
    """What the harness did to one container before its verifier ran."""

    frozen: list[str] = field(default_factory=list)
    """``pid comm`` of each process the agent started (stopped)."""
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        parts = []
        if self.frozen:
            parts.append(f"froze {len(self.frozen)} process(es) the agent started")
        if self.restored:
            parts.append(f"restored {len(self.restored)} toolchain path(s) from the image")
        if self.removed:
            parts.append(f"removed {len(self.removed)} added hook(s)")
        return "; ".join(parts) or "nothing to undo"

    def log_text(self) -> str:
        lines = [f"# verifier isolation: {self.summary()}"]
        lines += [f"frozen   {entry}" for entry in self.frozen]
        lines += [f"restored {p} ({self.reasons.get(p, '')})" for p in self.restored]
        lines += [f"removed  {p} ({self.reasons.get(p, '')})" for p in self.removed]
        return "\n".join(lines) + "\n"


_ARG_BUDGET = 64 * 1024


def _remove(box: Sandbox, paths: list[str]) -> None:
    batch: list[str] = []
    size = 0
    for path in [*paths, None]:
        if path is not None and size + len(path) < _ARG_BUDGET:
            batch.append(path)
            size += len(path) + 1
            continue
        if batch:
            box.exec_checked(
                [BUSYBOX, "rm", "-rf", "--", *batch],
                timeout_sec=HARNESS_STEP_TIMEOUT_SEC,
                what="removing what the agent planted",
                user="0",
            )
        batch, size = ([path], len(path) + 1) if path is not None else ([], 0)


def repair_toolchain(box: Sandbox, report: IsolationReport) -> None:
    """Restore the verifier's toolchain from the image and remove planted hooks (see module
    docstring); fills ``report``."""
    runtime, image = box.runtime, box.spec.image
    changes = [Change(path, ChangeKind(kind), is_dir) for path, kind, is_dir in box.changes()]
    if not changes:
        return
    plan = plan_repairs(
        changes,
        path_dirs=runtime.image_path_env(image).split(":"),
        image_kind=box.image_kind,
        live_text=lambda p: box.read_text(p, limit=64 * 1024),
    )
    if not plan:
        return
    _remove(box, plan.remove + plan.restore)
    for path in plan.restore:
        data = runtime.image_archive(image, path)
        if data is not None:
            box.put_tar(posixpath.dirname(path) or "/", data)
    report.restored, report.removed, report.reasons = plan.restore, plan.remove, plan.reasons


def isolate(box: Sandbox, baseline: Baseline) -> IsolationReport:
    """Everything the harness does between the agent's last command and the verifier."""
    report = IsolationReport()
    report.frozen = freeze_agent_processes(box, baseline)
    repair_toolchain(box, report)
    return report


def single_file_tar(name: str, content: bytes, mode: int = 0o644) -> bytes:
    """A tar holding one regular file (for tests and small uploads)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(name)
        info.size = len(content)
        info.mode = mode
        archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()
