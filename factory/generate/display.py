"""Terminal output of `factory generate` and `factory suite show`."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from factory.generate.results import ACCEPTED, CandidateResult, SuiteManifest
from factory.generate.taxonomy import Taxonomy
from factory.progress import Bar
from factory.quality.structure import diversity, read_structure


class GenerationProgress(Bar):
    """Valid tasks out of the taxonomy's quotas; rejected candidates are printed above."""

    def __init__(self, taxonomy: Taxonomy, console: Console) -> None:
        super().__init__("generate", console, sum(leaf.quota for leaf in taxonomy.leaves()))
        self.candidates = 0
        self.rejected = 0

    def result(self, result: CandidateResult) -> None:
        self.candidates += 1
        if result.status == ACCEPTED:
            self.advance()
        else:
            self.rejected += 1
            self.say(
                f"[yellow]rejected[/] {escape(f'{result.id}: {result.outcome}: {result.reason[:150]}')}"
            )
        self.describe(f"{self.candidates} candidates, {self.rejected} rejected")


def print_coverage(manifest: SuiteManifest, console: Console) -> None:
    table = Table(title=f"suite {manifest.suite}: coverage per leaf")
    for column in (
        "leaf",
        "generator",
        "quota",
        "cand.",
        "valid",
        "yield",
        "outcomes",
        "time s",
        "tokens",
    ):
        table.add_column(column, overflow="fold")
    for leaf in manifest.coverage:
        style = "green" if leaf.complete else "red"
        outcomes = ", ".join(f"{k}={v}" for k, v in sorted(leaf.outcomes.items()))
        tokens = leaf.llm.prompt_tokens + leaf.llm.completion_tokens
        table.add_row(
            escape(leaf.taxonomy_path),
            escape(leaf.generator),
            str(leaf.quota),
            str(leaf.candidates),
            f"[{style}]{leaf.valid}[/]",
            f"{leaf.yield_:.0%}",
            outcomes,
            f"{leaf.seconds:.0f}",
            str(tokens) if tokens else "-",
        )
    console.print(table)
    t = manifest.totals
    console.print(
        f"tasks {int(t.get('valid', 0))}/{int(t.get('quota', 0))}, candidates "
        f"{int(t.get('candidates', 0))}, yield {t.get('yield', 0):.1%}, leaves complete "
        f"{int(t.get('leaves_complete', 0))}/{int(t.get('leaves', 0))}, "
        f"LLM tokens {int(t.get('llm_tokens', 0))}, cost ${t.get('llm_cost_usd', 0):.4f}"
    )


def print_structure(manifest: SuiteManifest, suite: Path, console: Console) -> None:
    """Structural diversity per leaf: what the accepted tasks ask the solver to do (fault
    combinations, hidden test structure, reference solution shape), not their wording."""
    table = Table(title=f"suite {manifest.suite}: structure per leaf (distinct per 100 tasks)")
    for column in ("leaf", "tasks", "fault comb.", "test struct.", "solution shapes", "distance",
                   "median steps"):  # fmt: skip
        table.add_column(column, overflow="fold")
    by_leaf: dict[str, list] = {}
    for task in manifest.tasks:
        folder = suite / task.path
        if folder.is_dir():
            by_leaf.setdefault(task.taxonomy_path, []).append(read_structure(folder))
    for leaf, structures in sorted(by_leaf.items()):
        div = diversity(structures)
        has_grammar = any(s.faults for s in structures)
        table.add_row(
            leaf,
            str(div.tasks),
            f"{div.per_100(div.fault_combinations):.0f}" if has_grammar else "-",
            f"{div.per_100(div.test_structures):.0f}",
            f"{div.per_100(div.solution_shapes):.0f}",
            "-" if div.mean_distance is None else f"{div.mean_distance:.2f}",
            f"{div.median_steps:g}",
        )
    console.print(table)
