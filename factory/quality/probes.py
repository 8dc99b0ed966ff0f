"""Probes: wrong solutions a task's tests must reject.

* cheat probes — trivial agents: exit 0 at once; create the expected output paths empty;
  forge the reward (write reward files, plant a /tests/test.sh). Any that scores > 0 condemns
  the task.
* mutation probes — a family's near-miss wrong solutions. The fraction the tests reject is the
  task's *verifier strength*.

Each probe is an oracle phase with the probe's script as solve.sh, in a fresh container.
"""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from factory.runtime import DockerRuntime
from factory.tasks.model import Task
from factory.validate.outcome import PhaseKind
from factory.validate.phases import run_phase

FAKE_REWARD = """#!/bin/bash
# A cheating agent: forge what the verifier reads.
mkdir -p /logs/verifier /tests
echo 1 > /logs/verifier/reward.txt
echo '{"reward": 1.0}' > /logs/verifier/reward.json
printf '#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n' > /tests/test.sh
chmod +x /tests/test.sh
"""


def cheat_scripts(outputs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The cheat probes for a task whose agent is expected to produce ``outputs``."""
    scripts = {"exit-0": "#!/bin/bash\nexit 0\n", "fake-reward": FAKE_REWARD}
    if outputs:
        lines = ["#!/bin/bash", "# A lazy agent: create every expected output, empty."]
        for path in outputs:
            quoted = shlex.quote(path.rstrip("/"))
            if path.endswith("/"):
                lines.append(f"mkdir -p {quoted}")
            else:
                lines.append(
                    f'[ -d {quoted} ] || {{ mkdir -p "$(dirname {quoted})" && : > {quoted}; }}'
                )
        scripts["empty-outputs"] = "\n".join(lines) + "\n"
    return scripts


@dataclass
class ProbeResult:
    name: str
    kind: str
    """'cheat' or 'mutation'."""
    reward: float | None
    rejected: bool
    """True when the tests gave this wrong solution no reward."""
    detail: str = ""
    log_dir: str = ""


def run_probes(
    runtime: DockerRuntime,
    task: Task,
    image: str,
    scripts: dict[str, str],
    kind: str,
    log_root: Path,
) -> list[ProbeResult]:
    results = []
    for name, script in scripts.items():
        with tempfile.TemporaryDirectory(prefix="factory-probe-") as tmp:
            solution = Path(tmp)
            (solution / "solve.sh").write_text(script)
            (solution / "solve.sh").chmod(0o755)
            phase = run_phase(
                runtime,
                task,
                image,
                PhaseKind.ORACLE,
                1,
                log_root / f"{kind}-{name}",
                solution_dir=solution,
            )
        if phase.infra_error or phase.timed_out:
            detail = phase.infra_error or f"{phase.timed_out} timed out"
            results.append(ProbeResult(name, kind, None, False, detail, phase.log_dir or ""))
            continue
        reward = phase.reward or 0.0
        results.append(
            ProbeResult(
                name, kind, reward, reward <= 0, phase.reward_error or "", phase.log_dir or ""
            )
        )
    return results


def verifier_strength(results: list[ProbeResult]) -> float | None:
    mutations = [r for r in results if r.kind == "mutation"]
    if not mutations:
        return None
    return sum(r.rejected for r in mutations) / len(mutations)
