"""Summary of a generated repo-bug suite: yield, projects, difficulty, timing, and the checks
issue 17 asks for (instructions that name no file or line of the project).

    .venv/bin/python bench/repo_bug.py SUITE_DIR

SUITE_DIR is the output of ``factory generate examples/taxonomy-repo-bug.yaml --out SUITE_DIR``.
Reads suite.json, results/ and the accepted tasks; runs nothing.
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
from factory.tasks.model import load_task_config  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    args = parser.parse_args()
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
