"""``factory report SUITE --html OUT``: one self-contained HTML page about a generated suite.

Sections (each an ``<h2>`` in a ``<section id=...>``): summary, coverage per taxonomy leaf
(wanted vs valid), yield, outcomes (valid and each rejection kind), difficulty and pass rate,
timings, verifier strength, sample tasks. Charts are inline SVG drawn by :mod:`svg`; CSS is
inline; the only links point at the suite's own task files (relative to the page).
"""

from __future__ import annotations

import os
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from urllib.parse import quote

from factory import __version__
from factory.errors import FactoryError
from factory.generate.results import ACCEPTED, CandidateResult, SuiteManifest
from factory.publish import svg
from factory.publish.source import pass_rate_of, read_journal

SECTIONS = (
    ("summary", "Summary"),
    ("coverage", "Coverage per taxonomy leaf"),
    ("yield", "Yield"),
    ("outcomes", "Outcomes"),
    ("difficulty", "Difficulty and pass rate"),
    ("timings", "Timings"),
    ("verifier", "Verifier strength"),
    ("samples", "Sample tasks"),
)
VALID_COLOR, WANTED_COLOR, REJECTED_COLOR = "#2e7d32", "#90a4ae", "#c62828"
DIFFICULTY_ORDER = ("easy", "medium", "hard")
STAGES = ("generate", "validate", "probes")


@dataclass
class TaskInfo:
    id: str
    path: Path
    taxonomy_path: str
    difficulty: str
    verifier_strength: float | None
    pass_rate: float | None = None
    flake_rate: float | None = None
    """``[metadata.factory].flake_rate``: verifier flakiness under perturbation."""
    instruction: str = ""
    problem: str | None = None
    """Why the task's files could not be read (the page still renders)."""


@dataclass
class ReportData:
    suite: Path
    manifest: SuiteManifest
    results: list[CandidateResult]
    tasks: list[TaskInfo] = field(default_factory=list)


def collect(suite: Path) -> ReportData:
    from factory.generate.pipeline import load_suite_manifest
    from factory.inputs import read_text
    from factory.tasks.model import load_task_config
    from factory.tasks.safety import check_task_tree

    manifest = load_suite_manifest(suite)
    results = sorted(read_journal(suite).values(), key=lambda r: r.id)
    data = ReportData(suite=suite, manifest=manifest, results=results)
    for entry in manifest.tasks:
        info = TaskInfo(
            id=entry.id,
            path=suite / entry.path,
            taxonomy_path=entry.taxonomy_path,
            difficulty=entry.difficulty,
            verifier_strength=entry.verifier_strength,
        )
        try:
            check_task_tree(info.path)  # a link out of the task never shows a host file here
            config = load_task_config(info.path / "task.toml")
            info.pass_rate = pass_rate_of(config.metadata)
            info.flake_rate = config.provenance.flake_rate
            info.instruction = read_text(info.path / "instruction.md")
        except (FactoryError, OSError, UnicodeDecodeError) as exc:
            info.problem = str(exc)
        data.tasks.append(info)
    return data


# --- rendering ----------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #222;
       background: #fafafa; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
header h1 { margin: 0 0 4px 0; }
header p { margin: 0; color: #555; }
nav { margin: 16px 0; display: flex; flex-wrap: wrap; gap: 8px; }
nav a { text-decoration: none; color: #1565c0; background: #e3f2fd; padding: 2px 8px;
        border-radius: 10px; font-size: 13px; }
section { background: #fff; border: 1px solid #e0e0e0; border-radius: 8px; padding: 16px 20px;
          margin: 16px 0; }
section h2 { margin-top: 0; font-size: 20px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); gap: 10px; }
.card { border: 1px solid #e0e0e0; border-radius: 6px; padding: 10px; background: #fcfcfc; }
.card b { display: block; font-size: 22px; }
.card span { color: #666; font-size: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin-top: 10px; }
th, td { border-bottom: 1px solid #eee; padding: 4px 8px; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #2e7d32; } .bad { color: #c62828; }
.chart { max-width: 100%; height: auto; display: block; margin: 8px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.empty { color: #777; font-style: italic; }
.sample { border-top: 1px solid #eee; padding: 10px 0; }
.sample h3 { margin: 0 0 4px 0; font-size: 15px; }
.sample pre { white-space: pre-wrap; background: #f5f5f5; padding: 8px; border-radius: 4px;
              font-size: 12px; max-height: 14em; overflow: auto; }
.meta { color: #555; font-size: 12px; }
footer { color: #777; font-size: 12px; text-align: center; margin: 24px 0; }
"""


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _secs(value: float) -> str:
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.1f} s"


def _section(key: str, body: str) -> str:
    title = dict(SECTIONS)[key]
    return f'<section id="{key}">\n<h2>{escape(title)}</h2>\n{body}\n</section>'


def _table(headers: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    head = "".join(
        f'<th class="num">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td class="num">{cell}</td>' if i in numeric else f"<td>{cell}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def _empty(text: str) -> str:
    return f'<p class="empty">{escape(text)}</p>'


def _summary(data: ReportData) -> str:
    totals = data.manifest.totals
    candidates = int(totals.get("candidates", len(data.results)))
    valid = int(totals.get("valid", len(data.manifest.tasks)))
    cards = [
        ("valid tasks", f"{valid}"),
        ("wanted (quota)", f"{int(totals.get('quota', 0))}"),
        ("candidates", f"{candidates}"),
        ("yield", _pct(totals.get("yield", valid / candidates if candidates else 0.0))),
        (
            "leaves complete",
            f"{int(totals.get('leaves_complete', 0))} / {int(totals.get('leaves', 0))}",
        ),
        ("candidate time", _secs(totals.get("seconds", 0.0))),
        ("LLM tokens", f"{int(totals.get('llm_tokens', 0)):,}"),
        ("LLM cost", f"${totals.get('llm_cost_usd', 0.0):.2f}"),
    ]
    body = "".join(
        f'<div class="card"><b>{escape(v)}</b><span>{escape(k)}</span></div>' for k, v in cards
    )
    return f'<div class="cards">{body}</div>'


def _coverage(data: ReportData) -> str:
    coverage = data.manifest.coverage
    if not coverage:
        return _empty("no taxonomy leaves recorded")
    labels = [c.taxonomy_path for c in coverage]
    chart = svg.hbars(
        labels,
        [
            svg.Series("wanted", [c.quota for c in coverage], WANTED_COLOR),
            svg.Series("valid", [c.valid for c in coverage], VALID_COLOR),
        ],
        title="wanted vs valid tasks per taxonomy leaf",
    )
    rows = [
        [
            escape(c.taxonomy_path),
            escape(c.generator),
            str(c.quota),
            str(c.candidates),
            str(c.valid),
            _pct(c.yield_),
            '<span class="ok">yes</span>' if c.complete else '<span class="bad">no</span>',
        ]
        for c in coverage
    ]
    table = _table(
        ["leaf", "generator", "wanted", "candidates", "valid", "yield", "complete"],
        rows,
        numeric={2, 3, 4, 5},
    )
    return chart + "\n" + table


def _yield(data: ReportData) -> str:
    coverage = [c for c in data.manifest.coverage if c.candidates]
    if not coverage:
        return _empty("no candidates yet")
    overall = data.manifest.totals.get("yield", 0.0)
    chart = svg.hbars(
        [c.taxonomy_path for c in coverage] + ["(all leaves)"],
        [svg.Series("yield", [c.yield_ for c in coverage] + [overall], VALID_COLOR)],
        title="yield (valid / candidates) per taxonomy leaf",
        max_value=1.0,
        value_format=_pct,
    )
    return f"<p>Valid tasks per candidate, overall {_pct(overall)}.</p>\n{chart}"


def _outcome_counts(data: ReportData) -> Counter:
    if data.results:
        return Counter(r.outcome for r in data.results)
    counts: Counter = Counter()
    for leaf in data.manifest.coverage:
        counts.update(leaf.outcomes)
    return counts


def _outcomes(data: ReportData) -> str:
    counts = _outcome_counts(data)
    if not counts:
        return _empty("no candidates yet")
    order = sorted(counts, key=lambda k: (k != "valid", -counts[k], k))
    colors = [VALID_COLOR if k == "valid" else REJECTED_COLOR for k in order]
    chart = svg.vbars(
        order,
        [svg.Series("candidates", [counts[k] for k in order], VALID_COLOR, colors)],
        title="candidates by outcome (valid, then each kind of rejection)",
    )
    total = sum(counts.values())
    rejected = total - counts.get("valid", 0)
    reasons = _top_reasons(data)
    text = f"<p>{counts.get('valid', 0)} valid and {rejected} rejected of {total} candidates.</p>"
    return text + "\n" + chart + ("\n" + reasons if reasons else "")


def _top_reasons(data: ReportData, limit: int = 8) -> str:
    rejected = [r for r in data.results if r.status != ACCEPTED]
    if not rejected:
        return ""
    rows = [
        [escape(r.id), escape(r.outcome), escape(r.reason[:240])]
        for r in sorted(rejected, key=lambda r: (r.outcome, r.id))[:limit]
    ]
    note = f" (first {limit} of {len(rejected)})" if len(rejected) > limit else ""
    return f"<p>Rejections{note}:</p>\n" + _table(["candidate", "outcome", "reason"], rows)


def _difficulty(data: ReportData) -> str:
    if not data.results and not data.tasks:
        return _empty("no candidates yet")
    candidates = Counter(r.difficulty for r in data.results)
    valid = Counter(t.difficulty for t in data.tasks)
    keys = [d for d in DIFFICULTY_ORDER if d in candidates or d in valid]
    keys += sorted(k for k in set(candidates) | set(valid) if k not in DIFFICULTY_ORDER)
    series = [svg.Series("valid", [valid[k] for k in keys], VALID_COLOR)]
    if candidates:
        series.insert(0, svg.Series("candidates", [candidates[k] for k in keys], WANTED_COLOR))
    charts = [svg.vbars(keys, series, title="tasks per difficulty")]
    rates = [t.pass_rate for t in data.tasks if t.pass_rate is not None]
    if rates:
        charts.append(
            svg.histogram(
                [("tasks", rates, "#1565c0")],
                title="policy pass rate of the valid tasks",
                low=0.0,
                high=1.0,
                bins=10,
                edge_format=lambda v: f"{v:.1f}",
            )
        )
        note = (
            f"<p>Pass rate recorded for {len(rates)} of {len(data.tasks)} tasks "
            f"(median {statistics.median(rates):.2f}).</p>"
        )
    else:
        note = _empty(
            "No pass rates recorded yet: calibration against a policy stores them in the tasks' "
            "[metadata.factory] pass_rate."
        )
    return note + '\n<div class="charts">' + "\n".join(charts) + "</div>"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def _timings(data: ReportData) -> str:
    if not data.results:
        return _empty("no candidates yet")
    per_stage: dict[str, list[float]] = defaultdict(list)
    for result in data.results:
        for key, value in result.timings.items():
            per_stage[key].append(value)
    stages = [s for s in STAGES if s in per_stage] + sorted(
        s for s in per_stage if s not in STAGES and s != "total"
    )
    charts = []
    if stages:
        charts.append(
            svg.hbars(
                stages,
                [svg.Series("seconds", [sum(per_stage[s]) for s in stages], "#1565c0")],
                title="seconds spent per stage, all candidates",
                value_format=_secs,
                width=520,
            )
        )
    totals = per_stage.get("total", [])
    if totals:
        high = max(totals) or 1.0
        charts.append(
            svg.histogram(
                [("candidates", totals, "#00838f")],
                title="seconds per candidate",
                low=0.0,
                high=high,
                bins=min(10, max(1, len(totals))),
                edge_format=lambda v: f"{v:.0f}",
            )
        )
    rows = [
        [
            escape(stage),
            str(len(per_stage[stage])),
            f"{statistics.median(per_stage[stage]):.1f}",
            f"{_quantile(per_stage[stage], 0.9):.1f}",
            f"{max(per_stage[stage]):.1f}",
            f"{sum(per_stage[stage]):.1f}",
        ]
        for stage in [*stages, "total"]
        if per_stage.get(stage)
    ]
    table = _table(
        ["stage", "candidates", "median s", "p90 s", "max s", "sum s"],
        rows,
        numeric={1, 2, 3, 4, 5},
    )
    return '<div class="charts">' + "\n".join(charts) + "</div>\n" + table


def _verifier(data: ReportData) -> str:
    accepted = [t.verifier_strength for t in data.tasks if t.verifier_strength is not None]
    rejected = [
        r.verifier_strength
        for r in data.results
        if r.status != ACCEPTED and r.verifier_strength is not None
    ]
    if not accepted and not rejected:
        return _empty("no verifier strengths recorded (no mutation probes ran)") + _flake(data)
    groups = [("valid", accepted, VALID_COLOR)]
    if rejected:
        groups.append(("rejected", rejected, REJECTED_COLOR))
    chart = svg.histogram(
        groups,
        title="verifier strength (share of near-miss solutions the tests reject)",
        low=0.0,
        high=1.0,
        bins=10,
        edge_format=lambda v: f"{v:.1f}",
    )
    probes: dict[str, list[bool]] = defaultdict(list)
    for result in data.results:
        if result.status == ACCEPTED:
            for probe in result.probes:
                probes[f"{probe.kind}:{probe.name}"].append(probe.rejected)
    rows = [
        [escape(name), str(len(v)), str(sum(v)), _pct(sum(v) / len(v))]
        for name, v in sorted(probes.items())
    ]
    table = (
        f"<details><summary>{len(rows)} probes on the valid tasks (a probe is a cheat or a "
        "near-miss wrong solution; the tests should reject it)</summary>\n"
        + _table(["probe", "tasks", "rejected", "share"], rows, numeric={1, 2, 3})
        + "\n</details>"
        if rows
        else ""
    )
    median = f" Median over valid tasks: {statistics.median(accepted):.2f}." if accepted else ""
    return (
        f"<p>{len(accepted)} valid tasks with a strength.{median}</p>\n{chart}\n{table}"
        + _flake(data)
    )


def _flake(data: ReportData) -> str:
    """Verifier flake rate (``[metadata.factory].flake_rate``), where it was measured."""
    rates = [t.flake_rate for t in data.tasks if t.flake_rate is not None]
    if not rates:
        return ""
    flaky = sorted((t for t in data.tasks if t.flake_rate), key=lambda t: -(t.flake_rate or 0))
    rows = [[escape(t.id), f"{t.flake_rate:.2f}"] for t in flaky[:8]]
    return (
        f'<p id="flake">Flake rate (nop and oracle rerun under another time zone, hash seed and '
        f"CPU load) measured for {len(rates)} tasks: {len(flaky)} flaky, highest "
        f"{max(rates):.2f}.</p>"
        + (_table(["task", "flake rate"], rows, numeric={1}) if rows else "")
    )


def _link(target: Path, base: Path, text: str) -> str:
    rel = os.path.relpath(target.resolve(), base.resolve())
    return f'<a href="{escape(quote(Path(rel).as_posix()))}">{escape(text)}</a>'


def pick_samples(tasks: list[TaskInfo], count: int) -> list[TaskInfo]:
    """Up to ``count`` tasks, round-robin over taxonomy leaves (so every leaf shows up)."""
    by_leaf: dict[str, list[TaskInfo]] = defaultdict(list)
    for task in sorted(tasks, key=lambda t: t.id):
        by_leaf[task.taxonomy_path].append(task)
    picked: list[TaskInfo] = []
    while len(picked) < count and any(by_leaf.values()):
        for leaf in sorted(by_leaf):
            if by_leaf[leaf] and len(picked) < count:
                picked.append(by_leaf[leaf].pop(0))
    return picked


def _samples(data: ReportData, base: Path, count: int, excerpt: int = 600) -> str:
    picked = pick_samples(data.tasks, count)
    if not picked:
        return _empty("no valid tasks yet")
    parts = [f"<p>{len(picked)} of {len(data.tasks)} valid tasks, one per leaf in turn.</p>"]
    for task in picked:
        text = task.instruction.strip()
        if len(text) > excerpt:
            text = text[:excerpt].rstrip() + " …"
        strength = "-" if task.verifier_strength is None else f"{task.verifier_strength:.2f}"
        rate = "" if task.pass_rate is None else f" · pass rate {task.pass_rate:.2f}"
        links = " · ".join(
            [
                _link(task.path / "instruction.md", base, "instruction.md"),
                _link(task.path / "task.toml", base, "task.toml"),
                _link(task.path, base, "folder"),
            ]
        )
        body = (
            f'<pre class="bad">{escape(task.problem)}</pre>'
            if task.problem
            else f"<pre>{escape(text)}</pre>"
        )
        parts.append(
            f'<div class="sample" id="task-{escape(task.id)}">\n<h3>{escape(task.id)}</h3>\n'
            f'<div class="meta">{escape(task.taxonomy_path)} · {escape(task.difficulty)} · '
            f"verifier strength {strength}{rate} · {links}</div>\n{body}\n</div>"
        )
    return "\n".join(parts)


def render(data: ReportData, out: Path, *, samples: int = 6) -> str:
    """The whole page as one string (links are relative to ``out``'s folder)."""
    base = out.parent
    manifest = data.manifest
    bodies = {
        "summary": _summary(data),
        "coverage": _coverage(data),
        "yield": _yield(data),
        "outcomes": _outcomes(data),
        "difficulty": _difficulty(data),
        "timings": _timings(data),
        "verifier": _verifier(data),
        "samples": _samples(data, base, samples),
    }
    nav = "".join(f'<a href="#{key}">{escape(title)}</a>' for key, title in SECTIONS)
    sections = "\n".join(_section(key, bodies[key]) for key, _ in SECTIONS)
    title = f"Suite report: {manifest.suite}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<header>
<h1>{escape(title)}</h1>
<p>seed {manifest.seed} · generated by factory {escape(manifest.factory_version)} ·
{len(manifest.tasks)} valid tasks · suite folder {_link(data.suite, base, str(data.suite))}</p>
</header>
<nav>{nav}</nav>
{sections}
<footer>factory {escape(__version__)} · factory report</footer>
</main>
</body>
</html>
"""


def write_report(suite: Path, out: Path, *, samples: int = 6) -> Path:
    from factory.fsutil import write_text_atomic

    data = collect(suite)
    write_text_atomic(out, render(data, out, samples=samples))
    out.chmod(0o644)
    return out
