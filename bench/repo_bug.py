"""Summary of a generated repo-bug suite: yield, projects, difficulty, timing, and the checks
issue 17 asks for (instructions that name no file or line of the project).

    .venv/bin/python bench/repo_bug.py SUITE_DIR
    .venv/bin/python bench/repo_bug.py --screening
    .venv/bin/python bench/repo_bug.py --profile SUITE_DIR

SUITE_DIR is the output of ``factory generate examples/taxonomy-repo-bug.yaml --out SUITE_DIR``.
Reads suite.json, results/ and the accepted tasks; runs nothing. ``--screening`` summarises the
screening records the family uses (the cached ones where they exist, else the bundled ones).
``--profile`` splits each candidate's certification time (results/*.json timings and the
validation logs) into the image build, the probe scripts, the verifier runs and the rest
(containers started, stopped and copied between: the validator's own work).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.families.terminal.repo_bug.projects import load_projects, project_files  # noqa: E402
from factory.families.terminal.repo_bug.report import Forbidden  # noqa: E402
from factory.families.terminal.repo_bug.screen import load_record  # noqa: E402
from factory.tasks.model import load_task_config  # noqa: E402


def screening() -> int:
    """Mutants screened and kept, per project, status and operator."""
    statuses: Counter[str] = Counter()
    operators: Counter[str] = Counter()
    for name, project in sorted(load_projects().items()):
        record = load_record(project)
        if record is None:
            print(f"{name}: not screened")
            continue
        counts = Counter(m.status for m in record.mutants)
        statuses.update(counts)
        operators.update(m.site.operator.value for m in record.kept())
        print(f"{name} {project.version}: {len(record.mutants)} screened, {dict(counts)}")
    total = sum(statuses.values())
    print(f"screened {total}, kept {statuses['kept']} ({statuses['kept'] / max(total, 1):.0%})")
    print(f"status: {dict(statuses.most_common())}")
    print(f"kept per operator: {dict(operators.most_common())}")
    return 0


HEADER = re.compile(r"^# exit=\S+ timed_out=\S+ seconds=([0-9.]+)")
PROBE_KINDS = ("nop", "oracle", "cheat", "mutation", "independent")
PYTEST_SESSION = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+ in ([0-9.]+)s\b", re.M)


def pytest_seconds(path: Path) -> float:
    """pytest's own session time (collection and the tests) in a verifier run's test.log."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0.0
    return sum(float(m.group(1)) for m in PYTEST_SESSION.finditer(text))


def logged_seconds(path: Path) -> float:
    """The ``seconds=`` of a validation log's first line (solve.log, test.log); 0 if none."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            match = HEADER.match(handle.readline())
    except OSError:
        return 0.0
    return float(match.group(1)) if match else 0.0


def build_seconds(log: Path) -> float | None:
    """How long the build that wrote ``log`` took: the file's birth to its last write (GNU
    stat's %W; None where the file system does not record a birth time)."""
    try:
        out = subprocess.run(
            ["stat", "-c", "%W %.9Y", str(log)], capture_output=True, text=True, check=True
        ).stdout.split()
        born, written = float(out[0]), float(out[1])
    except (OSError, subprocess.CalledProcessError, ValueError, IndexError):
        return None
    return written - born if born > 0 else None


def build_steps(log: Path) -> tuple[int, bool, bool]:
    """(steps the build ran, every step before the task's own files came from the builder's
    cache, the image was reused whole)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0, False, False
    if text.startswith("# cached image"):
        return 0, True, True
    steps = re.split(r"^Step \d+/\d+ : ", text, flags=re.M)[1:]
    own = next((i for i, step in enumerate(steps) if "overlay/" in step.splitlines()[0]), None)
    prefix = steps[1:own] if own is not None else []  # after FROM, before the task's files
    return len(steps), bool(prefix) and all("---> Using cache" in s for s in prefix), False


def profile_candidate(
    logs: Path, timings: dict[str, float], probes: list[dict] | None = None
) -> dict[str, float]:
    """One candidate's seconds: total, build, solve (probe scripts), verify (test.sh in the
    verifier's container; pytest: pytest's session inside it), runs (solution and probe runs,
    each two containers), other. ``probes``: the result's probe records; log folders of other
    probes (left by an interrupted attempt of the same candidate) are not counted."""
    runs = [d for d in sorted(logs.iterdir()) if d.is_dir() and d.name.startswith(PROBE_KINDS)]
    if probes is not None:  # the result's own probes (an interrupted attempt may have left more)
        named = {f"{p['kind']}-{p['name']}" for p in probes}
        runs = [d for d in runs if d.name.startswith(("nop-", "oracle-")) or d.name in named]
    solve = sum(logged_seconds(d / "solve.log") for d in runs)
    verify = sum(logged_seconds(d / "test.log") for d in runs)
    session = sum(pytest_seconds(d / "test.log") for d in runs)
    build = build_seconds(logs / "build.log")
    total = timings.get("total", 0.0)
    if build is not None and build > timings.get("validate", total):
        build = None  # the log of an earlier, interrupted attempt, rewritten: its birth is older
    steps, prefix_cached, reused = build_steps(logs / "build.log")
    return {
        "total": total,
        "generate": timings.get("generate", 0.0),
        "build": build if build is not None else float("nan"),
        "solve": solve,
        "verify": verify,
        "pytest": session,
        "other": total - timings.get("generate", 0.0) - (build or 0.0) - solve - verify,
        "runs": float(len(runs)),
        "steps": float(steps),
        "prefix_cached": float(prefix_cached),
        "reused_image": float(reused),
    }


def profile(suite: Path) -> int:
    """Where each candidate's certification time went, and the medians."""
    rows = []
    for path in sorted((suite / "results").glob("*.json")):
        result = json.loads(path.read_text())
        logs = suite / "validation" / "logs" / result["id"]
        if not logs.is_dir() or not result.get("timings"):
            continue
        row = profile_candidate(logs, result["timings"], result.get("probes"))
        rows.append((result["id"], result["difficulty"], result["outcome"], row))
    if not rows:
        print(f"{suite}: no certified candidates with logs yet")
        return 1
    columns = ("total", "generate", "build", "solve", "verify", "pytest", "other")
    print(f"{'candidate':<28} {'level':<6} {'outcome':<13} " + " ".join(f"{c:>8}" for c in columns)
          + "   runs  build")  # fmt: skip
    for name, level, outcome, row in rows:
        build = (
            "image reused"
            if row["reused_image"]
            else f"{row['steps']:.0f} steps, prefix {'cached' if row['prefix_cached'] else 'built'}"
        )
        print(f"{name:<28} {level:<6} {outcome:<13} "
              + " ".join(f"{row[c]:8.1f}" for c in columns)
              + f"   {row['runs']:4.0f}  {build}")  # fmt: skip
    median_total = statistics.median(r["total"] for *_, r in rows)
    print(f"median over {len(rows)} candidates, seconds (share of the median total):")
    for column in columns:
        values = [r[column] for *_, r in rows if not math.isnan(r[column])]
        if values:
            value = statistics.median(values)
            note = "  of verify: pytest's session" if column == "pytest" else ""
            print(f"  {column:<9}{value:8.1f}  ({value / max(median_total, 1e-9):4.0%}){note}")
    runs = statistics.median(r["runs"] for *_, r in rows)
    print(
        f"  runs     {runs:8.0f}  (solution and probe runs, each an agent and a verifier container)"
    )
    cached = sum(1 for *_, r in rows if r["prefix_cached"])
    print(
        f"builds that took the shared steps (pytest, Debian packages) from the builder's cache "
        f"or reused the image: {cached} of {len(rows)}"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, nargs="?")
    parser.add_argument("--screening", action="store_true", help="summarise the screening")
    parser.add_argument("--profile", action="store_true", help="where certification time went")
    args = parser.parse_args()
    if args.screening:
        return screening()
    if args.suite is None:
        parser.error("give SUITE_DIR or --screening")
    if args.profile:
        return profile(args.suite)
    results = [json.loads(p.read_text()) for p in sorted((args.suite / "results").glob("*.json"))]
    if not results:
        print(f"{args.suite}: no finished candidates yet")
        return 1
    projects = load_projects()
    accepted = [r for r in results if r["status"] == "accepted"]
    outcomes = Counter(r["outcome"] for r in results)
    per_project: Counter[str] = Counter()
    per_difficulty: Counter[str] = Counter()
    operators: Counter[str] = Counter()
    reports: Counter[str] = Counter()
    located = []
    for r in accepted:
        task = args.suite / r["path"]
        tags = load_task_config(task / "task.toml").metadata.get("tags", [])
        name = next(t.split(":", 1)[1] for t in tags if t.startswith("project:"))
        per_project[name] += 1
        per_difficulty[r["difficulty"]] += 1
        operators.update(t.split(":", 1)[1] for t in tags if t.startswith("mutation:"))
        reports.update(t.split(":", 1)[1] for t in tags if t.startswith("report:"))
        project = projects[name]
        forbidden = Forbidden.of(sorted(project_files(project)), project.package, project.root)
        problems = forbidden.problems((task / "instruction.md").read_text())
        if problems:
            located.append(f"{r['id']}: {problems[0]}")
    minutes = [r["timings"].get("total", 0) / 60 for r in results]
    print(
        f"candidates {len(results)}, accepted {len(accepted)}, yield {len(accepted) / len(results):.2f}"
    )
    print(f"outcomes: {dict(outcomes)}")
    print(f"projects ({len(per_project)}): {dict(sorted(per_project.items()))}")
    print(f"difficulty: {dict(per_difficulty)}")
    print(f"mutation operators in accepted tasks: {dict(operators)}")
    print(f"reports: {dict(reports)}")
    print(
        f"minutes per candidate (certification, one worker): median "
        f"{statistics.median(minutes):.1f}, total {sum(minutes):.0f}"
    )
    print(f"instructions naming a project file or line: {len(located)}")
    for line in located[:10]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
