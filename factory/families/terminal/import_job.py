"""The consumer side of a hard data-processing task: an import job, run hourly by cron as
another account, that picks up the task's output (log-report, csv-json-wrangle, ...).

At ``hard`` a family draws some of :data:`IMPORT_FAULTS` into its grammar: the output folder
the job's account cannot enter, the job's settings naming a stale path or holding a line the
job rejects, and (announced) a checksum file the job requires next to the output. The
instruction names the job and says it must import the output; the tests run the job as shipped
in the image (the separate verifier gets the settings back as an artifact) and read the owners
and modes of the output's folders from a snapshot the collect hook writes.

:class:`ImportJob` gives what the family's templates embed: the image's files and Dockerfile
lines, the reference's fixing commands per fault, the tests, the traps and the verifier's
collect hook and artifacts."""

from __future__ import annotations

import random
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from factory.families.base import Draft
from factory.families.terminal.state_snapshot import STATE_DIR, snapshot_hook
from factory.families.terminal.traps import load_traps, traps_for
from factory.vocabulary import Trap

IMPORT_FAULTS = ["consumer-perms", "import-config", "config-syntax", "checksum"]
"""consumer-perms: the output folder is root-only (mode 700); import-config: the settings
name a stale output path; config-syntax: one settings line lacks its ``=``; checksum
(announced, not a trap): the job wants ``<output>.sha256`` in ``sha256sum -c`` format."""
IMPORT_TRAPS = load_traps(Path(__file__).parent / "import_traps.toml", IMPORT_FAULTS)
"""The job's faults the instruction does not announce: fault -> Trap (import_traps.toml)."""
CONSUMERS = ["dashd", "statsd", "reporter", "metrics", "ingest", "loader", "warehouse"]
HOMES = ("/root", "/home")
"""Folders the job's account (a system account) cannot be counted on to enter."""


def reachable_folder(rng: random.Random, folder: str, folders: Sequence[str]) -> str:
    """``folder`` for the task's output, unless it lies under one of :data:`HOMES`: then one
    of ``folders`` outside them, drawn with ``rng`` (the import job's account must get in)."""
    if not _in_a_home(folder):
        return folder
    return rng.choice([f for f in folders if not _in_a_home(f)])


def _in_a_home(folder: str) -> bool:
    return any(PurePosixPath(folder).is_relative_to(home) for home in HOMES)


def _importer(app: str, conf: str) -> str:
    """The job's program (shipped): its settings, then the output, checked."""
    return f'''#!/usr/bin/env python3
"""Import the {app} output into the dashboard (run by cron, see /etc/cron.d/{app}-import)."""
import hashlib
import json
import os
import sys

CONF = {conf!r}


def fail(msg):
    print(f"{app}-import: {{msg}}", file=sys.stderr)
    sys.exit(1)


settings = {{}}
for number, line in enumerate(open(CONF, encoding="utf-8"), 1):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    if "=" not in line:
        fail(f"{{CONF}}, line {{number}}: expected 'key = value', got {{line!r}}")
    key, _, value = line.partition("=")
    settings[key.strip()] = value.strip()
path = settings.get("source") or fail("no source path in " + CONF)
try:
    data = open(path, "rb").read()
except OSError as exc:
    fail(f"cannot read the source: {{exc}}")
text = data.decode("utf-8")
if settings.get("format") == "json":
    try:
        rows = json.loads(text)
    except ValueError as exc:
        fail(f"{{path}}: not JSON: {{exc}}")
    count = len(rows)
else:
    lines = text.split("\\n")
    if lines[0] != settings.get("header"):
        fail(f"{{path}}: unexpected header {{lines[0]!r}}")
    count = len([x for x in lines[1:] if x])
if settings.get("checksum") == "required":
    try:
        digest, name = open(path + ".sha256", encoding="utf-8").read().split()
    except (OSError, ValueError) as exc:
        fail(f"no usable checksum file {{path}}.sha256: {{exc}}")
    if name.lstrip("*") not in (path, os.path.basename(path)):
        fail(f"the checksum file names {{name!r}}, not the source")
    if digest != hashlib.sha256(data).hexdigest():
        fail("checksum mismatch")
print(f"imported {{count}} records from {{path}}")
'''


_TESTS = '''

def test_the_import_job_imports_the_output():
    """The job as shipped in the image, with the settings the agent left."""
    import subprocess

    done = subprocess.run(["python3", IMPORTER], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"from {IMPORT_OUT}"), done.stdout


def test_the_import_account_can_read_the_output():
    """Owners and modes as the agent left them (the collect hook's snapshot): every folder on
    the way must let the job's account in, and the output must let it read."""
    import grp
    import pwd
    import stat

    user = pwd.getpwnam(CONSUMER)
    groups = {user.pw_gid} | {g.gr_gid for g in grp.getgrall() if CONSUMER in g.gr_mem}
    found = {}
    for line in Path(STATE).read_text().splitlines():
        uid, gid, raw, path = line.split(" ", 3)
        found[path] = None if uid == "-" else (int(uid), int(gid), int(raw, 16))
    for path in CHECKED:
        assert found.get(path) is not None, f"{path} is missing"
        uid, gid, mode = found[path]
        shift = 6 if uid == user.pw_uid else 3 if gid in groups else 0
        need = stat.S_IROTH if path == IMPORT_OUT else stat.S_IXOTH
        verb = "read" if path == IMPORT_OUT else "enter"
        assert (mode >> shift) & need, f"{CONSUMER} cannot {verb} {path}"
'''
_CHECKSUM_TEST = """

def test_checksum_file_matches_the_output():
    import hashlib

    digest, name = Path(IMPORT_OUT + ".sha256").read_text().split()
    assert name.lstrip("*") in (IMPORT_OUT, Path(IMPORT_OUT).name), f"it names {name!r}"
    assert digest == hashlib.sha256(Path(IMPORT_OUT).read_bytes()).hexdigest(), "mismatch"
"""


class Wiring(NamedTuple):
    """What a hard draft takes from its import job and its faults (see :meth:`ImportJob.wire`)."""

    outputs: list[str]
    """Outputs besides the family's own: the job's settings (and checksum file)."""
    artifacts: list[str]
    collect: list[str]
    traps: list[Trap]
    mutations: dict[str, str]

    @classmethod
    def none(cls) -> Wiring:
        """A draft without an import job: nothing to add."""
        return cls([], [], [], [], {})

    def draft(self, outputs: list[str], **fields: Any) -> Draft:
        """The task's draft: ``fields``, the family's ``outputs`` then the job's, and the job's
        artifacts, collect hook, traps and near misses; the tests run in a separate verifier."""
        return Draft(
            outputs=outputs + self.outputs,
            separate_verifier=True,
            artifacts=self.artifacts,
            collect=self.collect,
            traps=self.traps,
            mutations=self.mutations,
            **fields,
        )


@dataclass
class ImportJob:
    """The import job of one task."""

    app: str
    consumer: str
    out: str
    header: str | None
    """The first line the job expects (a CSV or text output); None: the output is JSON."""
    faults: list[str] = field(default_factory=list)
    """The drawn faults of :data:`IMPORT_FAULTS`."""
    stale: str = ""

    @classmethod
    def draw(
        cls, rng: random.Random, app: str, out: str, header: str | None, faults: Sequence[str]
    ) -> ImportJob:
        """The job of ``app`` importing ``out``; ``faults`` are the task's, of which the job
        keeps those of :data:`IMPORT_FAULTS`."""
        stale = f"/var/tmp/{app}-{rng.choice(['export', 'latest', 'previous'])}"
        stale += PurePosixPath(out).suffix
        own = sorted(f for f in faults if f in IMPORT_FAULTS)
        return cls(app, rng.choice(CONSUMERS), out, header, own, stale)

    @property
    def outdir(self) -> str:
        return str(PurePosixPath(self.out).parent)

    @property
    def conf(self) -> str:
        return f"/etc/{self.app}/import.conf"

    @property
    def importer(self) -> str:
        return f"/usr/local/bin/{self.app}-import"

    @property
    def cron(self) -> str:
        return f"/etc/cron.d/{self.app}-import"

    @property
    def state(self) -> str:
        return f"{STATE_DIR}/import.stat"

    @property
    def checked(self) -> list[str]:
        """The folders the job's account must enter (below /), then the output."""
        parents = list(reversed(PurePosixPath(self.out).parents))[1:]
        return [str(p) for p in parents] + [self.out]

    def settings(self) -> str:
        lines = [
            f"# {self.app}-import: where the hourly import finds its source",
            f"source = {self.stale if 'import-config' in self.faults else self.out}",
            f"format = {'json' if self.header is None else 'csv'}",
        ]
        if self.header is not None:
            lines.append(f"header = {self.header}")
        check = "required" if "checksum" in self.faults else "none"
        sep = " " if "config-syntax" in self.faults else " = "
        lines.append(f"checksum{sep}{check}")
        return "\n".join(lines) + "\n"

    def files(self) -> dict[str, str]:
        """The image's files (paths relative to the task root)."""
        return {
            "environment/import/import.conf": self.settings(),
            "environment/import/cron": (
                f"# import the {self.app} output into the dashboard, hourly\n"
                f"17 * * * * {self.consumer} {self.importer}\n"
            ),
            "environment/import/importer": _importer(self.app, self.conf),
        }

    def docker(self) -> str:
        """Dockerfile lines: the job, its account and the output folder."""
        mode = "700" if "consumer-perms" in self.faults else "755"
        return "\n".join(
            [
                f"COPY import/import.conf {self.conf}",
                f"COPY import/cron {self.cron}",
                f"COPY import/importer {self.importer}",
                f"RUN useradd -r -M -s /usr/sbin/nologin {self.consumer} \\",
                f"    && chmod 644 {self.conf} {self.cron} && chmod 755 {self.importer} \\",
                f"    && mkdir -p {self.outdir} && chmod {mode} {self.outdir}",
            ]
        )

    def fixes(self) -> dict[str, list[str]]:
        """The reference's commands per fault (in order; run after the output is written)."""
        name = PurePosixPath(self.out).name
        return {
            "consumer-perms": [
                f"chgrp {self.consumer} {self.outdir}",
                f"chmod 750 {self.outdir}",
            ],
            "import-config": [f"sed -i 's|^source = .*|source = {self.out}|' {self.conf}"],
            "config-syntax": [f"sed -i 's/^checksum  *\\([a-z]\\)/checksum = \\1/' {self.conf}"],
            "checksum": [f"cd {self.outdir} && sha256sum {name} > {name}.sha256"],
        }

    def solve_lines(self, slip: str = "") -> list[str]:
        """The fixing commands of the drawn faults (``slip`` left unfixed), then the job run
        as its account (not in a near miss)."""
        lines = []
        for fault, commands in self.fixes().items():
            if fault in self.faults and fault != slip:
                lines += commands
        if not slip:
            lines.append(f"runuser -u {self.consumer} -- {self.importer}")
        return lines

    def instruction(self) -> str:
        text = (
            f"The output is picked up by an import job that cron runs as the `{self.consumer}` "
            f"account (`{self.cron}`: it runs `{self.importer}`, whose settings are "
            f"`{self.conf}`). When you are done, that job must import `{self.out}` as it is; "
            f"you can run it yourself with `runuser -u {self.consumer} -- {self.importer}`."
        )
        if "checksum" in self.faults:
            text += (
                " The job only imports a file that has a checksum file next to it: write "
                f"`{self.out}.sha256`, the SHA-256 of `{self.out}` in the format that "
                "`sha256sum -c` reads."
            )
        return text

    def tests(self) -> str:
        """Test functions (the test module imports ``Path``)."""
        head = "\n".join(
            [
                "",
                f"CONSUMER = {self.consumer!r}",
                f"IMPORTER = {self.importer!r}",
                f"IMPORT_OUT = {self.out!r}",
                f"STATE = {self.state!r}",
                f"CHECKED = {self.checked!r}",
            ]
        )
        return head + _TESTS + (_CHECKSUM_TEST if "checksum" in self.faults else "")

    def traps(self) -> list[Trap]:
        return traps_for(IMPORT_TRAPS, self.faults)

    def outputs(self) -> list[str]:
        return [self.conf] + ([f"{self.out}.sha256"] if "checksum" in self.faults else [])

    def collect(self) -> list[str]:
        paths = " ".join(shlex.quote(c) for c in self.checked)
        return [
            snapshot_hook(
                {
                    "import.stat": f"for f in {paths}; do "
                    'stat -c "%u %g %f %n" -- "$f" 2>/dev/null'
                    ' || printf -- "- - - %s\\n" "$f"; done'
                }
            )
        ]

    def wire(
        self,
        faults: Sequence[str],
        own_traps: Mapping[str, Trap],
        near_misses: dict[str, str],
    ) -> Wiring:
        """The draft's parts for a hard task of ``faults`` (the family's and the job's): the
        job's outputs, artifacts and collect hook; the traps, the family's (``own_traps``:
        fault -> :class:`Trap`) then the job's; the ``near_misses`` (one per fault, see
        :func:`~factory.families.terminal.near_miss.near_misses`)."""
        return Wiring(
            outputs=self.outputs(),
            artifacts=[self.state],
            collect=self.collect(),
            traps=traps_for(own_traps, faults) + self.traps(),
            mutations=near_misses,
        )

    def context(self) -> dict[str, Any]:
        """Template values (plain data)."""
        return {
            "consumer": self.consumer,
            "conf": self.conf,
            "importer": self.importer,
            "docker": self.docker(),
            "instruction": self.instruction(),
            "tests": self.tests(),
            "faults": list(self.faults),
            "fixes": self.fixes(),
            "run": f"runuser -u {self.consumer} -- {self.importer}",
        }
