"""Harbor's separate verifier for the LLM backend's free-form tasks.

A free-form task's tests are model-written, so what they read of the agent's end state must be
declared in the task spec, then checked like the rest of it (:class:`LlmTask`):

* ``verifier_reads`` — absolute paths (files or folders) whose end state the tests read. Each
  travels as an artifact: the fresh container gets the agent's copy at the same path (owned by
  root, group/other write and setuid bits cleared). At most :data:`MAX_READS`, none under
  :data:`NEVER_READ` or the image's code (:data:`CODE_ROOTS`: an agent's copy must never
  replace the verifier's interpreter or tools), none a whole system folder
  (:data:`SYSTEM_ROOTS`).
* ``snapshots`` — state no file carries (processes, open ports, owners and modes, crontabs):
  ``{name, command}``; the command runs as root in the agent's container once the agent is
  done, its stdout lands in ``/logs/state/<name>``, which the tests read. The hook removes that
  path first, so a file the agent planted there never reaches the tests.

Repaired without asking the model (:func:`repair_reads`): the declared ``outputs`` and every
absolute path the tests name as a string literal are added to ``verifier_reads``, and the
account files when the tests look users or groups up. Rejected with the reason (the reply goes
back to the model, :func:`reads_problems`): tests that inspect processes, ports, owners,
permission bits or services directly (a fresh container would answer for itself, not for the
agent's container), tests that read a snapshot the spec does not declare, and reads outside
the bounds.

Deletions: an artifact that is absent is skipped, which would leave the image's copy in the
fresh container. A collect hook records which declared reads exist when the agent is done and
a factory-written ``tests/conftest.py`` removes, before any test, each one that did not.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from factory.families.terminal.state_snapshot import SNAPSHOT_DIR, present_lines
from factory.tasks.config import VerifierCollectConfig

MAX_READS = 16
MAX_SNAPSHOTS = 8
SNAPSHOT_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,39}$")
PRESENT = f"{SNAPSHOT_DIR}/factory-reads"
"""Which declared reads existed in the agent's container (one path a line)."""
NEVER_READ = ("/proc", "/sys", "/dev", "/logs", "/tests")
"""The kernel's pseudo file systems and the harness's own folders."""
CODE_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/ld.so.preload",
              "/etc/ld.so.conf", "/etc/ld.so.conf.d")  # fmt: skip
"""The image's code: the verifier's own interpreter, pytest and tools (python:3.12 images keep
Python under /usr/local). An agent's copy never replaces them."""
SYSTEM_ROOTS = frozenset(
    [
        "/",
        "/bin",
        "/boot",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/opt",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/tmp",
        "/usr",
        "/usr/bin",
        "/usr/lib",
        "/usr/local",
        "/usr/local/bin",
        "/usr/local/lib",
        "/usr/sbin",
        "/usr/share",
        "/var",
        "/var/lib",
        "/var/log",
        "/var/tmp",
    ]
)
"""Whole system folders: never an artifact of their own (too big, and mostly the image's)."""
_LITERAL = re.compile(r"""(?<![\w.])(['"])(/[A-Za-z0-9._@+~/-]*[A-Za-z0-9._@+~-])\1""")
_SNAPSHOT_USE = re.compile(re.escape(SNAPSHOT_DIR) + r"/([A-Za-z0-9._-]+)")
ACCOUNT_FILES = ("/etc/passwd", "/etc/group")
_ACCOUNTS = re.compile(r"\b(?:pwd|grp)\.get|\bgetent\b|\bid\s+-")
STATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "processes",
        re.compile(r"/proc\b|\bpsutil\b|\bpgrep\b|\bpidof\b|\bps\s+-|\bps\s+aux|['\"]ps['\"]"),
    ),
    ("open ports", re.compile(r"\bnetstat\b|\bss\s+-|\blsof\b|\bconnect_ex\(")),
    (
        "owners",
        re.compile(
            r"\bst_uid\b|\bst_gid\b|\.owner\(\)|\.group\(\)|\bgetpwuid\b|\bgetgrgid\b"
            r"|\bstat\s+-c|\bls\s+-[a-zA-Z]*l"
        ),
    ),
    ("permission bits", re.compile(r"\bst_mode\b|\bS_IMODE\b|\bfilemode\(|\bos\.access\(")),
    ("services and crontabs", re.compile(r"\bsystemctl\b|\bcrontab\s+-l|\bservice\s+\S+\s+status")),
)
"""State the tests cannot read in a fresh container: a snapshot must carry it."""


def _norm(path: str) -> str:
    return posixpath.normpath(path.strip())


def _under(path: str, roots: tuple[str, ...] | list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def read_problem(path: str) -> str | None:
    """Why ``path`` cannot be a declared read (None: it can)."""
    if not path.startswith("/"):
        return f"{path!r} is not an absolute path"
    norm = _norm(path)
    if norm in SYSTEM_ROOTS:
        return f"{path!r} is a whole system folder: name the files or folders the tests read"
    if _under(norm, NEVER_READ):
        return f"{path!r} is under {', '.join(NEVER_READ)} (the harness's or the kernel's)"
    if _under(norm, CODE_ROOTS):
        return (
            f"{path!r} is the image's code ({', '.join(CODE_ROOTS[:6])}): the verifier's own "
            "interpreter and tools never come from the agent's container; have the agent "
            "write what the tests read elsewhere (/app, say)"
        )
    return None


def named_paths(test_py: str) -> list[str]:
    """Absolute paths the tests name as string literals, that could be the agent's."""
    found: list[str] = []
    for _quote, literal in _LITERAL.findall(test_py):
        if "//" in literal:
            continue
        path = _norm(literal)
        if read_problem(path) is None:
            found.append(path)
    return list(dict.fromkeys(found))


def reads_problems(test_py: str, snapshot_names: list[str]) -> list[str]:
    """Why the tests cannot run in a separate verifier as declared (empty: they can)."""
    problems = []
    for what, pattern in STATE_PATTERNS:
        match = pattern.search(test_py)
        if match:
            problems.append(
                f"test_py inspects {what} ({match.group(0).strip()!r}): the tests run in a fresh "
                "container that has only the declared verifier_reads, so read them from a "
                f"snapshot instead (a `snapshots` entry {{name, command}}: the command runs as "
                f"root in the agent's container when it is done, its output is saved to "
                f"{SNAPSHOT_DIR}/<name>)"
            )
    for name in dict.fromkeys(_SNAPSHOT_USE.findall(test_py)):
        if name not in snapshot_names:
            problems.append(
                f"test_py reads {SNAPSHOT_DIR}/{name}, which no `snapshots` entry declares"
            )
    return problems


def repair_reads(declared: list[str], outputs: list[str], test_py: str) -> list[str]:
    """The declared reads plus the outputs, the paths the tests name and the account files
    when the tests look users up (in that order, without repeats)."""
    paths = [_norm(p) for p in declared]
    paths += [_norm(p) for p in outputs if p.startswith("/") and read_problem(p) is None]
    paths += named_paths(test_py)
    if _ACCOUNTS.search(test_py):
        paths += ACCOUNT_FILES
    return list(dict.fromkeys(paths))


def artifact_paths(reads: list[str]) -> list[str]:
    """``reads`` without those inside another one (it travels with its folder; listed too,
    Harbor would skip the folder listed after it)."""
    return [p for p in reads if not any(p != q and _under(p, [q]) for q in reads)]


def snapshot_path(name: str) -> str:
    return f"{SNAPSHOT_DIR}/{name}"


def snapshot_hook(name: str, command: str) -> VerifierCollectConfig:
    """A collect hook (root): the snapshot's path (and its ``.tmp``) removed, then the
    command's stdout written there afresh."""
    path = shlex.quote(snapshot_path(name))
    tmp = shlex.quote(snapshot_path(name) + ".tmp")
    return VerifierCollectConfig(
        command=(
            f"rm -rf {path} {tmp}; mkdir -p {SNAPSHOT_DIR} && "
            f"sh -c {shlex.quote(command)} > {tmp}; mv -f {tmp} {path}"
        ),
        user="0",
    )


def presence_hook(reads: list[str]) -> VerifierCollectConfig:
    """A collect hook (root): which of ``reads`` exist, written afresh to :data:`PRESENT`."""
    out, tmp = shlex.quote(PRESENT), shlex.quote(PRESENT + ".tmp")
    return VerifierCollectConfig(
        command=(
            f"rm -rf {out} {tmp}; mkdir -p {SNAPSHOT_DIR} && "
            f"{{ {present_lines(reads)}; }} > {tmp} && mv -f {tmp} {out}"
        ),
        user="0",
    )


CONFTEST = '''"""Written by factory: the agent's end state as Harbor's separate verifier gets it. Each
path the tests read travels from the agent's container; one that was absent there is removed
here too (an absent artifact would leave the image's copy in place)."""

import os
import shutil
from pathlib import Path

READS = {reads!r}
PRESENT = Path({present!r})


def pytest_sessionstart(session):
    if not PRESENT.is_file():
        raise RuntimeError(f"{{PRESENT}} is missing: the collect hook did not run")
    present = set(PRESENT.read_text().splitlines())
    for path in READS:
        if path in present:
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
'''


def conftest(reads: list[str]) -> str:
    """``tests/conftest.py``: the declared reads absent in the agent's container removed."""
    return CONFTEST.format(reads=list(reads), present=PRESENT)
