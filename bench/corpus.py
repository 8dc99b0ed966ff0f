"""Public corpora as a user meets them: sample tasks, import, certify, and tabulate why.

    .venv/bin/python bench/corpus.py CHECKOUT [CHECKOUT ...] --n 12 --seed 15 --out /tmp/corpus

Each CHECKOUT is a folder of public tasks (Terminal-Bench 1 or Harbor layout, found at any
depth), e.g. a checkout of a Terminal-Bench datasets repository's ``datasets/aider_polyglot``.
From each, ``--n`` tasks are drawn with ``random.Random(seed)``, spread evenly over the groups
that ``--group`` finds in the task folder names (the language: ``polyglot_go_bowling`` -> go,
``cpp-graph-cpp-implementation`` -> cpp), so every group is represented when n allows. The
sample is imported (``factory tasks import``), certified (``factory validate``: build, nop,
oracle, ``--repeats`` times) and printed as one table: task, group, outcome and its reason, then
the count per outcome and the share that certified. ``OUT/corpus.json`` keeps the sample (same
seed, same tasks), the verdicts and the command, so the figure can be tracked over time.

Fetched corpora never belong in this repository: pass the path of a checkout elsewhere.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shlex
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.importers.layouts import import_task  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402
from factory.runtime import DockerRuntime, new_run_id  # noqa: E402
from factory.tasks.model import discover_task_dirs  # noqa: E402
from factory.validate.validator import Validator  # noqa: E402

DEFAULT_GROUP = r"^(?:polyglot_)?([a-z+]+)[_-]"
"""The group of a task folder name: its language, for Aider Polyglot and DevEval names."""
IMPORT_FAILED = "import_failed"


@dataclass
class Row:
    corpus: str
    task: str
    group: str
    outcome: str
    reason: str
    seconds: float = 0.0


def group_of(name: str, pattern: re.Pattern[str]) -> str:
    match = pattern.search(name)
    return match.group(1) if match and match.groups() else "-"


def sample(dirs: list[Path], n: int, seed: int, pattern: re.Pattern[str]) -> list[Path]:
    """``n`` task folders spread evenly over the groups, deterministic for a seed: groups are
    visited in a seeded order, each contributing its next seeded pick in turn."""
    rng = random.Random(seed)
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(dirs):
        groups[group_of(path.name, pattern)].append(path)
    queues = {name: rng.sample(paths, len(paths)) for name, paths in sorted(groups.items())}
    order = sorted(queues)
    rng.shuffle(order)
    picked: list[Path] = []
    while len(picked) < n and any(queues.values()):
        for name in order:
            if queues[name] and len(picked) < n:
                picked.append(queues[name].pop())
    return picked


def one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(rows: list[Row], width: int) -> None:
    name_w = max([len(r.task) for r in rows] + [4])
    out_w = max([len(r.outcome) for r in rows] + [7])
    print(f"{'task':<{name_w}}  {'group':<10}  {'outcome':<{out_w}}  reason")
    for row in rows:
        reason = one_line(row.reason, width) if row.outcome != "valid" else ""
        print(f"{row.task:<{name_w}}  {row.group:<10}  {row.outcome:<{out_w}}  {reason}")
    counts = Counter(r.outcome for r in rows)
    print()
    for outcome, count in counts.most_common():
        print(f"{outcome:<{out_w}}  {count}")
    valid = counts.get("valid", 0)
    share = 100.0 * valid / len(rows) if rows else 0.0
    print(f"certified: {valid}/{len(rows)} ({share:.0f}%)")
    for corpus in sorted({r.corpus for r in rows}):
        mine = [r for r in rows if r.corpus == corpus]
        ok = sum(r.outcome == "valid" for r in mine)
        print(f"  {corpus}: {ok}/{len(mine)}")


def main(argv: list[str] | None = None) -> int:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="folders of public tasks")
    parser.add_argument("--n", type=int, default=12, help="tasks drawn from each checkout")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--group", default=DEFAULT_GROUP, help="regex; group 1 = the stratum")
    parser.add_argument("--out", type=Path, required=True, help="folder for tasks and logs")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each phase")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--force", action="store_true", help="re-validate certified tasks")
    parser.add_argument("--dry-run", action="store_true", help="print the sample and stop")
    parser.add_argument("--width", type=int, default=150, help="reason column width")
    args = parser.parse_args(argv)
    pattern = re.compile(args.group)

    picked: list[tuple[str, Path]] = []
    for checkout in args.checkouts:
        if not checkout.is_dir():
            parser.error(f"{checkout}: not a folder")
        dirs = discover_task_dirs([checkout])
        chosen = sample(dirs, args.n, args.seed, pattern)
        print(f"{checkout}: {len(dirs)} tasks, sampled {len(chosen)} (seed {args.seed})")
        picked += [(checkout.name, path) for path in chosen]
    if args.dry_run:
        for corpus, path in picked:
            print(f"  {corpus}  {group_of(path.name, pattern):<10}  {path.name}")
        return 0

    rows: dict[str, Row] = {}
    by_dest: dict[Path, Row] = {}
    for corpus, path in picked:
        result = import_task(path, args.out / "tasks" / corpus)
        row = Row(corpus, path.name, group_of(path.name, pattern), IMPORT_FAILED, "")
        rows[str(path)] = row
        if result.error or result.dest is None:
            row.reason = result.error or "not imported"
        else:
            by_dest[result.dest.resolve()] = row

    runtime = DockerRuntime(new_run_id("corpus"), pool_size=max(16, 4 * args.jobs))
    runtime.ping()
    started = time.monotonic()
    try:
        validator = Validator(
            runtime,
            args.out / "validation",
            jobs=args.jobs,
            repeats=args.repeats,
            force=args.force,
        )
        report = validator.run(list(by_dest))
    finally:
        runtime.close()
    for verdict in report.tasks:
        row = by_dest.get(Path(verdict.path).resolve())
        if row is not None:
            row.outcome, row.reason = verdict.outcome.value, verdict.reason
            row.seconds = verdict.timings.get("total", 0.0)
    ordered = [rows[str(path)] for _corpus, path in picked]
    print()
    print_table(ordered, args.width)
    command = "bench/corpus.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    summary = {
        "command": command,
        "seed": args.seed,
        "n": args.n,
        "repeats": args.repeats,
        "wall_seconds": round(time.monotonic() - started, 1),
        "rows": [asdict(r) for r in ordered],
        "counts": dict(Counter(r.outcome for r in ordered)),
    }
    (args.out / "corpus.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"report: {args.out / 'corpus.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
