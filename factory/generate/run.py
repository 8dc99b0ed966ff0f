"""`factory generate` as one job: read and check the taxonomy and the backends first (so a bad
file fails before any engine is touched), then run the suite generator on an executor."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from factory.executor import Executor
from factory.generate.backends import BackendChoice, LlmOptions, backend_factory
from factory.generate.pipeline import Backend, SuiteGenerator
from factory.generate.results import CandidateResult, SuiteManifest
from factory.generate.taxonomy import Leaf, Taxonomy, load_taxonomy


@dataclass
class GenerationPlan:
    """A checked taxonomy, the suite folder it goes to and the backend of each leaf."""

    taxonomy: Taxonomy
    taxonomy_text: str
    out: Path
    backends: Callable[[Leaf], Backend]
    repair_rounds: int = 0

    @classmethod
    def load(
        cls,
        taxonomy_file: Path,
        llm: LlmOptions,
        *,
        out: Path | None = None,
        seed: int | None = None,
        backend: BackendChoice | None = None,
        repair_rounds: int = 0,
    ) -> GenerationPlan:
        """``out`` defaults to ``suites/<suite name>``; the LLM's replies are cached under
        ``OUT/llm-cache`` unless ``llm`` names another folder."""
        taxonomy = load_taxonomy(taxonomy_file)
        if seed is not None:
            taxonomy.seed = seed
        out = out or Path("suites") / taxonomy.suite
        llm = replace(llm, cache_dir=llm.cache_dir or out / "llm-cache")
        return cls(
            taxonomy,
            taxonomy_file.read_text(encoding="utf-8"),
            out,
            backend_factory(taxonomy, backend, llm),
            repair_rounds,
        )

    def run(
        self,
        executor: Executor,
        on_result: Callable[[CandidateResult], None] | None = None,
    ) -> SuiteManifest:
        """Generate (or resume) the suite; candidates are certified on ``executor``."""
        generator = SuiteGenerator(
            self.taxonomy,
            self.taxonomy_text,
            self.out,
            executor.runtime,
            self.backends,
            repair_rounds=self.repair_rounds,
            on_result=on_result,
            executor=executor,
        )
        return generator.run()
