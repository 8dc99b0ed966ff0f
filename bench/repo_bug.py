"""Summary of a generated repo-bug suite: yield, projects, difficulty, timing, and the checks
issue 17 asks for (instructions that name no file or line of the project).

    .venv/bin/python bench/repo_bug.py SUITE_DIR
    .venv/bin/python bench/repo_bug.py --screening

SUITE_DIR is the output of ``factory generate examples/taxonomy-repo-bug.yaml --out SUITE_DIR``.
Reads suite.json, results/ and the accepted tasks; runs nothing. ``--screening`` summarises the
screening records the family uses (the cached ones where they exist, else the bundled ones).
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, nargs="?")
    parser.add_argument("--screening", action="store_true", help="summarise the screening")
    args = parser.parse_args()
    if args.screening:
        return screening()
    if args.suite is None:
        parser.error("give SUITE_DIR or --screening")
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
