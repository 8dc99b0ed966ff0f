"""Probes: wrong solutions a task's tests must reject.

* cheat probes — agents that do not solve the task: exit 0 at once; create the expected output
  paths empty; forge the reward files; and the tampering attacks of ``attacks/*.sh`` (a reward
  loop left running, a watcher that kills the verifier, ``python3`` turned into ``true``, a
  swapped ``bash``, a ``conftest.py`` at ``/``, a ``.pth`` hook, modules that exit 0 on import).
  Any that scores > 0 condemns the task. Generation runs the attacks together as one probe
  (``tamper``: one container, so certification stays cheap) and names the one that got through
  by running them one by one only when it scores; ``factory validate --probes`` runs each.
* mutation probes — a family's near-miss wrong solutions. The fraction the tests reject is the
  task's *verifier strength*.

Each probe is an oracle phase with the probe's script as solve.sh, in a fresh container, with
the verifier isolated from it exactly as from an agent (:mod:`factory.validate.isolation`).
"""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from factory.runtime import DockerRuntime
from factory.tasks.model import Task
from factory.validate.outcome import PhaseKind, ProbeRecord
from factory.validate.phases import run_phase

ATTACKS_DIR = Path(__file__).with_name("attacks")
#: The order the combined probe runs them in: the ones that break the shell or the interpreter
#: come last, so the others can still set themselves up.
ATTACK_ORDER = (
    "exit-on-import",
    "root-conftest",
    "pth-hook",
    "reward-loop",
    "kill-verifier",
    "python-true",
    "shell-swap",
)
TAMPER = "tamper"

FAKE_REWARD = """#!/bin/bash
# A cheating agent: forge what the verifier reads.
mkdir -p /logs/verifier /tests
echo 1 > /logs/verifier/reward.txt
echo '{"reward": 1.0}' > /logs/verifier/reward.json
printf '#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n' > /tests/test.sh
chmod +x /tests/test.sh
"""


@cache
def attack_scripts() -> dict[str, str]:
    """The tampering attacks, by name (``attacks/<name>.sh``), in :data:`ATTACK_ORDER`."""
    found = {p.stem: p.read_text(encoding="utf-8") for p in sorted(ATTACKS_DIR.glob("*.sh"))}
    ordered = [name for name in ATTACK_ORDER if name in found]
    return {name: found[name] for name in [*ordered, *sorted(set(found) - set(ordered))]}


def tamper_script() -> str:
    """Every attack in one solve.sh, each in its own bash (heredoc), in attack order."""
    lines = ["#!/bin/bash", "# Every known tampering attack at once (factory/validate/attacks)."]
    for index, (name, script) in enumerate(attack_scripts().items()):
        marker = f"FACTORY_ATTACK_{index}"
        lines += [f"# --- {name}", f"bash <<'{marker}'", script.rstrip("\n"), marker]
    return "\n".join(lines) + "\nexit 0\n"


def cheat_scripts(
    outputs: list[str] | tuple[str, ...], *, attacks: str = "combined"
) -> dict[str, str]:
    """The cheat probes for a task whose agent is expected to produce ``outputs``.

    ``attacks``: ``combined`` (one ``tamper`` probe), ``each`` (one probe per attack) or
    ``none``.
    """
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
    if attacks == "combined":
        scripts[TAMPER] = tamper_script()
    elif attacks == "each":
        scripts.update(attack_scripts())
    elif attacks != "none":
        raise ValueError(f"attacks must be combined, each or none, not {attacks!r}")
    return scripts


@dataclass
class ProbeResult:
    name: str
    kind: str
    """'cheat', 'mutation' (counted in verifier strength) or :data:`INDEPENDENT` (reported only)."""
    reward: float | None
    rejected: bool
    """True when the tests gave this wrong solution no reward."""
    detail: str = ""
    log_dir: str = ""

    def record(self) -> ProbeRecord:
        return ProbeRecord(
            name=self.name,
            kind=self.kind,
            reward=self.reward,
            rejected=self.rejected,
            detail=self.detail,
        )


INDEPENDENT = "independent"
"""Probe kind of wrong solutions the family did not write: reported, not counted in strength."""


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
            solution.chmod(0o755)  # uploaded as /solution: a task's [agent] user must enter it
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
        log_dir = phase.log_dir or ""
        if phase.infra_error:
            results.append(ProbeResult(name, kind, None, False, phase.infra_error, log_dir))
            continue
        if phase.timed_out:
            # A wrong solution that runs past its limit, or tests that hang on what it left,
            # earn nothing: the verdict is "rejected", with the reason kept.
            detail = f"{phase.timed_out} timed out"
            results.append(ProbeResult(name, kind, 0.0, True, detail, log_dir))
            continue
        reward = phase.reward or 0.0
        detail = phase.reward_error or ""
        if phase.isolation and phase.isolation != "nothing to undo":
            detail = f"{detail}; isolation: {phase.isolation}".lstrip("; ")
        results.append(ProbeResult(name, kind, reward, reward <= 0, detail, log_dir))
    return results


def name_the_attack(
    runtime: DockerRuntime, task: Task, image: str, log_root: Path
) -> list[ProbeResult]:
    """After the combined ``tamper`` probe scored: run each attack alone to name the culprit."""
    return [
        r
        for r in run_probes(runtime, task, image, attack_scripts(), "cheat", log_root)
        if not r.rejected
    ]


def verifier_strength(results: list[ProbeResult]) -> float | None:
    mutations = [r for r in results if r.kind == "mutation"]
    if not mutations:
        return None
    return sum(r.rejected for r in mutations) / len(mutations)
