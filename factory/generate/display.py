"""Terminal output of `factory generate` and `factory suite show`."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from factory.generate.results import ACCEPTED, CandidateResult, SuiteManifest
from factory.generate.taxonomy import Taxonomy
from factory.progress import Bar


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
            self.say(f"[yellow]rejected[/] {result.id}: {result.outcome}: {result.reason[:150]}")
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
            leaf.taxonomy_path,
            leaf.generator,
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
